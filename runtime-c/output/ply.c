/* ply's output style (plyc_style.h): map dumps, sorted by value then by
 * key, in ply's layout (src/libply/libply.c, type.c,
 * built-in/aggregation.c) or as one JSON line each,
 *
 *     <blank line>
 *     @name:
 *     { key1, key2 }: value
 *
 * printf's text in JSON, and the exit dump of every map in the order the
 * script made them. The values are values/plyvalue.c's and json.c's, the
 * histograms' rows output/rows.c's. See docs/output.md. */
#define _GNU_SOURCE		/* qsort_r */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_agg.h"
#include "plyc_btout.h"
#include "plyc_loader.h"
#include "plyc_rows.h"
#include "plyc_style.h"

/* --- each kind's values ----------------------------------------------------- */

/* How ply sorts two merged values of a kind (<0, 0, >0) and prints one,
 * in its text (no trailing newline) and as one JSON value. */
struct ply_agg {
	int (*cmp)(const struct plyc_map *m, const void *a, const void *b);
	void (*print)(FILE *fp, const struct plyc_map *m, const void *v);
	void (*json)(FILE *fp, const struct plyc_map *m, const void *v);
};

static int cmp_plain(const struct plyc_map *m, const void *a, const void *b)
{
	return plyc_cmp_typed(&m->value, a, b);
}

static void print_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	plyc_ply_value(fp, &m->value, v);
}

static void json_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	plyc_json_value(fp, &m->value, v);
}

/* count, sum, min, max, avg: one 64-bit number */
static void print_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type st;
	uint64_t x = plyc_agg_scalar(m, v, &st);

	plyc_ply_value(fp, &st, &x);
}

static void json_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type st;
	uint64_t x = plyc_agg_scalar(m, v, &st);

	plyc_json_value(fp, &st, &x);
}

static int cmp_buckets(const struct plyc_map *m, const void *a, const void *b)
{
	uint32_t i;

	/* ply compares histograms as arrays: bucket by bucket from the lowest */
	for (i = 0; i < plyc_agg_nbuckets(m); i++) {
		uint64_t x = plyc_load_uint((const char *)a + 8 * i, 8);
		uint64_t y = plyc_load_uint((const char *)b + 8 * i, 8);

		if (x != y)
			return (x > y) - (x < y);
	}
	return 0;
}

/* hist() (bpftrace's) in a ply-style dump: bpftrace's rows under the name */
static void print_hist(FILE *fp, const struct plyc_map *m, const void *v)
{
	fputc('\n', fp);
	plyc_bt_hist_rows(fp, m, v);
}

/* tseries() (bpftrace 0.27's) in a ply-style dump: its chart under the
 * name, each key's ending at its own latest interval; by key */
static int cmp_none(const struct plyc_map *m, const void *a, const void *b)
{
	(void)m, (void)a, (void)b;
	return 0;
}

static void print_tseries(FILE *fp, const struct plyc_map *m, const void *v)
{
	fputc('\n', fp);
	plyc_bt_tseries_chart(fp, m, v);
}

#define SCALAR { plyc_agg_cmp_scalar, print_scalar, json_scalar }

static const struct ply_agg aggs[] = {
	[PLYC_A_NONE] = { cmp_plain, print_plain, json_plain },
	[PLYC_A_COUNT] = SCALAR,
	[PLYC_A_SUM] = SCALAR,
	[PLYC_A_MIN] = SCALAR,
	[PLYC_A_MAX] = SCALAR,
	[PLYC_A_AVG] = SCALAR,
	[PLYC_A_QUANTIZE] = { cmp_buckets, plyc_rows_quantize, plyc_rows_quantize_json },
	[PLYC_A_LQUANTIZE] = { cmp_buckets, plyc_rows_lquantize, plyc_rows_lquantize_json },
	/* a log2 map (bcc's) outside its report: as a quantize */
	[PLYC_A_LOG2] = { cmp_buckets, plyc_rows_quantize, plyc_rows_quantize_json },
	/* bpftrace's, for its front end; ply's style shows them as bpftrace does */
	[PLYC_A_STATS] = { plyc_agg_cmp_average, plyc_rows_stats, plyc_rows_stats_json },
	[PLYC_A_HIST] = { cmp_buckets, print_hist, plyc_bt_hist_json },
	[PLYC_A_TSERIES] = { cmp_none, print_tseries, plyc_bt_tseries_json },
};

static const struct ply_agg *agg_of(const struct plyc_map *m)
{
	if ((unsigned)m->agg >= sizeof(aggs) / sizeof(aggs[0]))
		return &aggs[PLYC_A_NONE];
	return &aggs[m->agg];
}

/* --- maps ------------------------------------------------------------------- */

static int cmp_key(const struct plyc_map *m, const void *a, const void *b)
{
	const char *ka = a, *kb = b;
	uint32_t i;
	int c;

	for (i = 0; i < m->nkeys; i++) {
		c = plyc_cmp_typed(&m->keys[i].type, ka + m->keys[i].offset,
				   kb + m->keys[i].offset);
		if (c)
			return c;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b, void *priv)
{
	const struct plyc_entry *x = a, *y = b;
	const struct plyc_map *m = priv;
	int c;

	c = agg_of(m)->cmp(m, x->value, y->value);
	return c ? c : cmp_key(m, x->key, y->key);
}

static void print_text(FILE *fp, const struct plyc_map *m,
		       const struct plyc_entry *ents, size_t n)
{
	const char *key;
	size_t e;
	uint32_t i;

	fprintf(fp, "\n%s:", m->name);

	/* [ext] without keys the one value goes on the name's line; a
	 * histogram starts on a line of its own anyway. */
	if (!m->nkeys) {
		if (!plyc_agg_ops(m)->hist)
			fputc(' ', fp);
		agg_of(m)->print(fp, m, ents[0].value);
		fputc('\n', fp);
		return;
	}

	fputc('\n', fp);
	for (e = 0; e < n; e++) {
		key = ents[e].key;

		fputs("{ ", fp);
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputs(", ", fp);
			plyc_ply_value(fp, &m->keys[i].type,
				       key + m->keys[i].offset);
		}
		fputs(" }: ", fp);

		agg_of(m)->print(fp, m, ents[e].value);
		fputc('\n', fp);
	}
}

/* --- JSON ------------------------------------------------------------ */

static void print_json(FILE *fp, const struct plyc_map *m,
		       const struct plyc_entry *ents, size_t n)
{
	const char *key;
	size_t e;
	uint32_t i;

	fputs("{\"map\": ", fp);
	plyc_json_string(fp, m->name, strlen(m->name));
	fputs(", \"entries\": [", fp);

	for (e = 0; e < n; e++) {
		key = ents[e].key;

		fputs(e ? ", {\"key\": [" : "{\"key\": [", fp);
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputs(", ", fp);
			plyc_json_value(fp, &m->keys[i].type,
					key + m->keys[i].offset);
		}
		fputs("], \"value\": ", fp);
		agg_of(m)->json(fp, m, ents[e].value);
		fputc('}', fp);
	}

	fputs("]}\n", fp);
}

void plyc_ply_map_print(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
			uint32_t top, uint32_t div)
{
	/* ply's print(@map) has no top or div */
	(void)top;
	(void)div;
	if (!n)
		return;

	qsort_r(ents, n, sizeof(*ents), cmp_entry, (void *)m);

	if (plyc_rt.json)
		print_json(fp, m, ents, n);
	else
		print_text(fp, m, ents, n);
}

/* --- the style -------------------------------------------------------------- */

/* print(a, b): "a, b" in each value's default format, or {"print": [a, b]} */
void plyc_ply_print(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n)
{
	int i;

	if (plyc_rt.json)
		fputs("{\"print\": [", fp);
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", fp);
		if (plyc_rt.json)
			plyc_json_value(fp, types[i], vals[i]);
		else
			plyc_ply_value(fp, types[i], vals[i]);
	}
	fputs(plyc_rt.json ? "]}\n" : "\n", fp);
}

void plyc_ply_json_printf(FILE *fp, const char *text, size_t len)
{
	fputs("{\"printf\": ", fp);
	plyc_json_string(fp, text, len);
	fputs("}\n", fp);
}

/* every map, in the order the script made them */
static void at_exit(const struct plyc_program *prog, int ended)
{
	int i;

	(void)ended;
	for (i = 0; i < prog->nmaps; i++)
		plyc_map_dump(&prog->maps[i]);
}

const struct plyc_output_ops plyc_output_ply = {
	.value = plyc_ply_value,
	.print = plyc_ply_print,
	.ksym_text = plyc_ksym,
	.json_printf = plyc_ply_json_printf,
	.map_print = plyc_ply_map_print,
	.at_exit = at_exit,
};
