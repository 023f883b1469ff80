/* kprobe / kretprobe: kernel function entry and return (kprobe.c). */
#ifndef PLYC_PROVIDER_KPROBE_H
#define PLYC_PROVIDER_KPROBE_H

#include <stdint.h>

#include "plyc_provider.h"

struct plyc_kprobe_data {
	const char *target;        /* function, glob, or 0xADDR */
	const char *module;        /* only this module's functions (kprobe:mod:f), or NULL */
	uint64_t offset;           /* sym+offset */
	int retprobe;
	int names;                 /* `probe` is read in a glob: each function's name under its cookie */
	const char *fentry_prog;   /* the probe's fentry/fexit twin, or NULL */
	const char *fentry_func;   /* ... built for this function */
	int fentry_nargs;          /* ... with this many arguments */
	uint64_t fentry_ctx;       /* ... reading these ctx slots (bit n: ctx[n]) */
	const char *fentry_only;   /* what the kprobe can't do ("path()"), or NULL */
	int group;                 /* its probe's number when that has several attach points, else 0:
				    * one the device lacks is left out if another of the group is there */
};

/* Whether this kernel attaches one program to many functions (kprobe.multi). */
int plyc_kprobe_multi_works(const char *sym);

extern const struct plyc_provider plyc_provider_kprobe;
extern const struct plyc_provider plyc_provider_kretprobe;

#endif
