/* uprobe / uretprobe: user function entry and return (uprobe.c). */
#ifndef PLYC_PROVIDER_UPROBE_H
#define PLYC_PROVIDER_UPROBE_H

#include <stdint.h>

#include "plyc_provider.h"

struct plyc_uprobe_data {
	const char *path;          /* binary or library, as written */
	const char *target;        /* sym, sym@VERSION, 0xADDR or a glob */
	uint64_t offset;           /* sym+offset */
	int retprobe;
	int names;                 /* a glob whose `probe` is read: a cookie per function */
};

extern const struct plyc_provider plyc_provider_uprobe;
extern const struct plyc_provider plyc_provider_uretprobe;

#endif
