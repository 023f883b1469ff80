/* `plyc argdist` tracers: bcc argdist's periodic report. */
#ifndef PLYC_ARGDIST_H
#define PLYC_ARGDIST_H

#include "plyc_rt.h"

enum plyc_argdist_default {
	PLYC_AD_NONE,      /* keys are the specifier's expressions */
	PLYC_AD_CALLS,     /* no expression on an entry probe: "total calls" */
	PLYC_AD_RETVAL,    /* no expression on a return probe: "retval = N" */
};

struct plyc_argdist_spec {
	int map;                        /* index into the tracer's maps */
	int hist;                       /* -H (log2 histogram) rather than -C (counts) */
	const char *header;             /* label, specifier, or histogram expression */
	int nkeys;
	const char *const *key_names;   /* display names of the key expressions */
	enum plyc_argdist_default dflt;
};

struct plyc_argdist {
	const struct plyc_argdist_spec *specs;
	int nspecs;
	int count;                      /* -n: stop after this many reports (0: never) */
	int top;                        /* -T: show the N largest counts (0: all) */
	int cumulative;                 /* -c: don't clear between reports */
	double duration;                /* -d: stop at the first report after this long (0: never) */
	int interval;                   /* -i, seconds */
};

/* One report: "[HH:MM:SS]", then each specifier's table or histogram. */
void plyc_argdist_report(struct plyc_map *maps, const struct plyc_argdist *a);

/* bcc's print_log2_hist over 64 buckets (exposed for tests). */
void plyc_argdist_print_log2(FILE *fp, const uint64_t *vals, int n, const char *label);

#endif
