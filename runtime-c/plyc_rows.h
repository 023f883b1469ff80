/* ply's rows of quantize() and lquantize() values, text and JSON, and the
 * text of a stats() value (output/rows.c): what ply's and bpftrace's
 * styles both print them with. The layout is ply's
 * (src/libply/built-in/aggregation.c); docs/output.md. */
#ifndef PLYC_ROWS_H
#define PLYC_ROWS_H

#include <stdio.h>

#include "plyc_rt.h"

/* A newline, then a row per non-empty bucket with its count and bar. */
void plyc_rows_quantize(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_rows_lquantize(FILE *fp, const struct plyc_map *m, const void *v);
/* {"buckets": [{"lo": ..., "hi": ..., "count": ...}, ...]} */
void plyc_rows_quantize_json(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_rows_lquantize_json(FILE *fp, const struct plyc_map *m, const void *v);
/* "count N, average N, total N", and its JSON object */
void plyc_rows_stats(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_rows_stats_json(FILE *fp, const struct plyc_map *m, const void *v);

#endif
