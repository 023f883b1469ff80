/* A tracer's periodic report (plyc/ir/report.py asks for it): every interval,
 * "[HH:MM:SS]", then each section, a map shown as bcc's tools show theirs. */
#ifndef PLYC_REPORT_H
#define PLYC_REPORT_H

#include "plyc_rt.h"

enum plyc_report_style {
	PLYC_REPORT_COUNTS,   /* a count map: header, "COUNT EVENT", rows by count */
	PLYC_REPORT_LOG2,     /* a log2 map: bcc's print_log2_hist, header as the label */
};

struct plyc_report_section {
	int map;                        /* index into the tracer's maps */
	enum plyc_report_style style;
	const char *header;
	const char *const *key_labels;  /* counts: a label per key ("label = value") */
	const char *keyless_row;        /* counts, a map without keys: the row's text, or NULL */
};

struct plyc_report {
	const struct plyc_report_section *sections;
	int nsections;
	int interval;                   /* seconds */
	int count;                      /* stop after this many reports (0: never) */
	int top;                        /* counts: show the N largest (0: all) */
	int cumulative;                 /* don't clear the maps between reports */
	double duration;                /* stop at the first report this long in (0: never) */
};

/* One report; 1 when it is -n/-d's last one (the tracer exits). */
int plyc_report_print(struct plyc_map *maps, const struct plyc_report *r);

/* bcc's print_log2_hist over n buckets of the log2 layout (exposed for tests). */
void plyc_report_print_log2(FILE *fp, const uint64_t *vals, int n, const char *label);

#endif
