/* The runtime's side of the aggregations: one entry per enum plyc_agg
 * (maps/aggregations.c) with what reading a map (maps/mapread.c) and the
 * Prometheus exposition (metrics/metrics.c) do differently per kind. How
 * each output style orders and prints a kind is that style's own table
 * (output/ply.c, output/bpftrace.c). The compiler's side is
 * plyc/aggregations.py; docs/design.md says how to add one.
 *
 * Every value layout is all zero until a probe updates it: a key-less
 * map's one array slot that is all zero was never updated. */
#ifndef PLYC_AGG_H
#define PLYC_AGG_H

#include <stddef.h>
#include <stdio.h>

#include "plyc_rt.h"

/* Where one entry's --metrics samples go. */
struct plyc_metric_out {
	FILE *fp;
	const char *name;            /* the family's name */
	const char *suffix;          /* of a one-sample entry: "_total" for a counter */
	const struct plyc_map *m;
	const char *key;             /* the entry's key */
	int om;                      /* OpenMetrics 1.0 rather than text 0.0.4 */
	/* the key's {name="value",...}, with le="..." unless le is NULL */
	void (*labels)(FILE *fp, const struct plyc_map *m, const char *key, const char *le);
};

struct plyc_agg_ops {
	const char *name;            /* --metrics' HELP; NULL: a plain map, not exported */
	int hist;                    /* printed on lines of its own after the key */
	int typed;                   /* printed with the argument's kind (a sum of durations
				      * is a duration), not as a plain count */
	uint32_t buckets;            /* histogram buckets when the map doesn't say */
	/* one key's per-CPU values (ncpus, stride bytes apart) into dst */
	void (*merge)(const struct plyc_map *m, void *dst, const char *percpu, size_t stride,
		      int ncpus);
	/* count, sum, min, max, avg: the merged value as the one number
	 * printed (NULL for the others) */
	uint64_t (*scalar)(const struct plyc_map *m, const void *v);
	/* the Prometheus type; *suffix: the sample's name after the family's */
	const char *(*metric_type)(const struct plyc_map *m, const char **suffix);
	/* one entry's samples */
	void (*metric)(const struct plyc_metric_out *o, const void *v);
};

/* The entry of m's kind (PLYC_A_NONE's for an unknown kind). */
const struct plyc_agg_ops *plyc_agg_ops(const struct plyc_map *m);

/* Buckets of a histogram value (u64 each, then the u64 sum). */
uint32_t plyc_agg_nbuckets(const struct plyc_map *m);
/* bpftrace's hist(x, k): k, read back from the map's bucket count
 * ((65 - k) * 2^k + 1, plyc/aggregations.py), 0 for hist(x). */
uint32_t plyc_bt_hist_k(const struct plyc_map *m);
/* The least value bucket i (>= 1) of such a hist holds: the bucket holds
 * [plyc_bt_hist_low(i), plyc_bt_hist_low(i + 1)); 2^64 past the last
 * (saturated to UINT64_MAX). *mult and *power: the bound as mult << power
 * (how bpftrace labels it), when they are not NULL. */
uint64_t plyc_bt_hist_low(uint32_t i, uint32_t k, uint64_t *mult, uint32_t *power);

/* lquantize (and lhist): the lower bound of bucket i + 1, min + i * step,
 * for i up to nbuckets - 2 (then lq_max, the last bucket's lower bound).
 * Each lies between min and max, so it never wraps, whatever the bounds. */
int64_t plyc_lq_bound(const struct plyc_map *m, uint32_t i);
/* One below such a bound (min - 1 for the below-min bucket): INT64_MIN at
 * INT64_MIN, where that bucket can hold nothing. */
int64_t plyc_lq_below(int64_t bound);

/* Compare two values of one type as ply does: integers by value, arrays
 * (strings, memory) byte by byte. */
int plyc_cmp_typed(const struct plyc_type *t, const void *a, const void *b);

/* count, sum, min, max, avg: the one number of a merged value, and in *t
 * its type (a sum of durations is a duration; a count a plain integer). */
uint64_t plyc_agg_scalar(const struct plyc_map *m, const void *v, struct plyc_type *t);
/* Two such values by that number: <0, 0, >0. */
int plyc_agg_cmp_scalar(const struct plyc_map *m, const void *a, const void *b);
/* avg() and stats(): the integer mean (0 with no count), and two values by it. */
int64_t plyc_agg_average(const void *v);
int plyc_agg_cmp_average(const struct plyc_map *m, const void *a, const void *b);
/* A histogram value's count: the sum of its buckets. */
uint64_t plyc_agg_total(const struct plyc_map *m, const void *v);

#endif
