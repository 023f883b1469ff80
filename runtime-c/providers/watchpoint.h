/* watchpoint: a hardware breakpoint on an address, the program run at each
 * access (watchpoint.c). */
#ifndef PLYC_PROVIDER_WATCHPOINT_H
#define PLYC_PROVIDER_WATCHPOINT_H

#include <stdint.h>
#include <linux/hw_breakpoint.h>

#include "plyc_provider.h"

struct plyc_watchpoint_data {
	uint64_t address;
	uint32_t length;           /* 1, 2, 4 or 8 bytes */
	uint32_t type;             /* HW_BREAKPOINT_R | _W | _X */
	const char *mode;          /* as bpftrace writes it (rw, w, x), for messages */
};

extern const struct plyc_provider plyc_provider_watchpoint;

/* bpftrace's unwatch(addr), when the tracer reads its event: the
 * watchpoints on addr stop (disabled, the threads' inherited ones too). */
void plyc_watchpoint_unwatch(uint64_t addr);

#endif
