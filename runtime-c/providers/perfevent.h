/* software / hardware: perf events counted on every CPU, the program run
 * every `period` of them (perfevent.c). */
#ifndef PLYC_PROVIDER_PERFEVENT_H
#define PLYC_PROVIDER_PERFEVENT_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "plyc_provider.h"

struct plyc_perfevent_data {
	const char *event;         /* as bpftrace names it, for messages */
	uint32_t type;             /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;           /* PERF_COUNT_SW_* / PERF_COUNT_HW_* */
	uint64_t period;           /* the sample period: every Nth event */
};

extern const struct plyc_provider plyc_provider_software;
extern const struct plyc_provider plyc_provider_hardware;

#endif
