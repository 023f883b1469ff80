/* ply's rows of quantize() and lquantize() values, in text (counts and
 * bars) and JSON, and a stats() value's text (plyc_rows.h): ply's style
 * prints every histogram with them, bpftrace's its quantize(). The layout
 * is ply's (src/libply/built-in/aggregation.c); docs/output.md. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "plyc_agg.h"
#include "plyc_rows.h"

static uint64_t word(const void *v, uint32_t i)
{
	return plyc_load_uint((const char *)v + 8 * i, 8);
}

/* The count and its bar: 32 columns scaled to the map entry's total, in
 * eighths of a column with Unicode blocks, in whole columns in ASCII. */
static void hist_count(FILE *fp, uint64_t count, uint64_t total)
{
	int w, space;

	fprintf(fp, "\t%8" PRIu64 " ", count);

	if (!plyc_rt.utf8) {
		/* same arithmetic as ply, so bars round alike */
		w = (int)(((float)count / (float)total) * 32.0 + 0.5);
		fputc('|', fp);
		for (space = 0; space < 32; space++)
			fputc(space < w ? '#' : ' ', fp);
		fputs("|\n", fp);
		return;
	}

	w = (int)(((float)count / (float)total) * 256.0 + 0.5);
	space = 32 - ((w + 7) >> 3);

	fputs("\u2524", fp);			/* ┤ */
	for (; w > 8; w -= 8)
		fputs("\u2588", fp);		/* █ */
	if (w > 0) {
		/* U+2588 full block .. U+258F one eighth */
		const char part[] = { '\xe2', '\x96', (char)(0x88 + 8 - w), 0 };

		fputs(part, fp);
	}
	fprintf(fp, "%*s\u2502\n", space, "");	/* │ */
}

/* 2^log2 as a number below 1024 and a k/M/G/T/P/E suffix (none below
 * 1024). ply's table ends in "Z" for 2^60, where "E" is meant. */
static int scaled(int log2, const char **suffix)
{
	static const char *const units[] = {
		NULL, "k", "M", "G", "T", "P", "E",
	};

	*suffix = units[log2 / 10];
	return 1 << (log2 % 10);
}

static void quantize_label(FILE *fp, const struct plyc_map *m, int i)
{
	const char *ls, *hs;
	int lo, hi;

	if (m->value.kind == PLYC_K_TIME) {
		/* durations are readable at any size: closed intervals */
		uint64_t ulo = i ? (1ULL << i) : 0;
		uint64_t uhi = (i < 63) ? (1ULL << (i + 1)) - 1 : INT64_MAX;

		fputs("\t[", fp);
		plyc_print_duration(fp, (int64_t)ulo);
		fputs(", ", fp);
		plyc_print_duration(fp, (int64_t)uhi);
		fputc(']', fp);
		return;
	}

	if (i == 0) {
		lo = 0;
		ls = NULL;
	} else {
		lo = scaled(i, &ls);
	}
	hi = scaled(i + 1, &hs);

	/* closed below 1k; above, [lo, hi) with both ends scaled */
	if (!hs)
		fprintf(fp, "\t[%4d, %4d]", lo, hi - 1);
	else
		fprintf(fp, "\t[%*d%s, %3d%s)", ls ? 3 : 4, lo, ls ? ls : "",
			hi, hs);
}

/* Rows for the non-empty buckets, ascending; "..." where empty buckets
 * were skipped between two rows. For a signed argument the last bucket
 * holds the negative values and comes first, as "< 0". */
void plyc_rows_quantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint64_t total = plyc_agg_total(m, v);
	int len = (int)plyc_agg_nbuckets(m), i, gap;

	fputc('\n', fp);

	if (m->value.is_signed) {
		len--;
		if (word(v, len)) {
			fputs("\t         < 0", fp);
			hist_count(fp, word(v, len), total);
			if (!word(v, 0))
				fputs("\t...\n", fp);
		}
	}

	for (i = 0, gap = 0; i < len; i++) {
		uint64_t c = word(v, i);

		if (!c) {
			gap++;
			continue;
		}

		/* gap == i: only leading empty buckets, nothing to mark */
		if (gap && gap != i)
			fputs("\t...\n", fp);
		gap = 0;

		quantize_label(fp, m, i);
		hist_count(fp, c, total);
	}
}

static void fmt_bound(char *buf, size_t len, const struct plyc_map *m,
		      int64_t v)
{
	if (m->value.kind == PLYC_K_TIME)
		plyc_fmt_duration(buf, len, v);
	else
		snprintf(buf, len, "%4" PRId64, v);
}

/* plyc's linear histogram, drawn like quantize: "< min" first, closed
 * [lo, hi] rows of `step` values, ">= max" last (lq_max: max, or the last
 * multiple of step below it). */
void plyc_rows_lquantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint64_t total = plyc_agg_total(m, v);
	uint32_t n = plyc_agg_nbuckets(m), i;
	char lo[32], hi[32], label[80];
	int printed = 0, gap = 0;

	fputc('\n', fp);

	for (i = 0; i < n; i++) {
		uint64_t c = word(v, i);

		if (!c) {
			gap = 1;
			continue;
		}
		if (gap && printed)
			fputs("\t...\n", fp);
		gap = 0;
		printed = 1;

		if (i == 0) {
			fmt_bound(lo, sizeof(lo), m, m->lq_min);
			snprintf(label, sizeof(label), "< %s", lo + strspn(lo, " "));
			fprintf(fp, "\t%12s", label);
		} else if (i == n - 1) {
			fmt_bound(hi, sizeof(hi), m, m->lq_max);
			snprintf(label, sizeof(label), ">= %s", hi + strspn(hi, " "));
			fprintf(fp, "\t%12s", label);
		} else {
			fmt_bound(lo, sizeof(lo), m, plyc_lq_bound(m, i - 1));
			fmt_bound(hi, sizeof(hi), m, plyc_lq_bound(m, i) - 1);
			fprintf(fp, "\t[%s, %s]", lo, hi);
		}
		hist_count(fp, c, total);
	}
}

static void json_num(FILE *fp, uint64_t v, int is_signed)
{
	if (is_signed)
		fprintf(fp, "%" PRId64, (int64_t)v);
	else
		fprintf(fp, "%" PRIu64, v);
}

static void json_bucket(FILE *fp, int *first, uint64_t lo, uint64_t hi,
			int is_signed, uint64_t count)
{
	fputs(*first ? "" : ", ", fp);
	*first = 0;

	fputs("{\"lo\": ", fp);
	json_num(fp, lo, is_signed);
	fputs(", \"hi\": ", fp);
	json_num(fp, hi, is_signed);
	fprintf(fp, ", \"count\": %" PRIu64 "}", count);
}

/* Non-empty buckets as closed [lo, hi] ranges, lowest first. */
void plyc_rows_quantize_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t n = plyc_agg_nbuckets(m), i;
	int sgn = m->value.is_signed, first = 1;
	uint64_t c;

	fputs("{\"buckets\": [", fp);
	if (sgn) {
		n--;
		c = word(v, n);
		if (c)
			json_bucket(fp, &first, (uint64_t)INT64_MIN, (uint64_t)-1, 1, c);
	}
	for (i = 0; i < n; i++) {
		c = word(v, i);
		if (c)
			json_bucket(fp, &first, i ? 1ULL << i : 0,
				    i < 63 ? (1ULL << (i + 1)) - 1 : UINT64_MAX, sgn, c);
	}
	fputs("]}", fp);
}

void plyc_rows_lquantize_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t n = plyc_agg_nbuckets(m), i;
	int sgn = m->value.is_signed, first = 1;
	uint64_t c;

	fputs("{\"buckets\": [", fp);
	for (i = 0; i < n; i++) {
		c = word(v, i);
		if (!c)
			continue;

		/* an unsigned value below min is in [0, min - 1] (min > 0) */
		if (i == 0)
			json_bucket(fp, &first, sgn ? (uint64_t)INT64_MIN : 0,
				    (uint64_t)plyc_lq_below(m->lq_min), 1, c);
		else if (i == n - 1)
			json_bucket(fp, &first, (uint64_t)m->lq_max,
				    sgn ? (uint64_t)INT64_MAX : UINT64_MAX, sgn, c);
		else
			json_bucket(fp, &first, (uint64_t)plyc_lq_bound(m, i - 1),
				    (uint64_t)(plyc_lq_bound(m, i) - 1), 1, c);
	}
	fputs("]}", fp);
}

/* bpftrace's text of a stats() value, also ply's (ply has no stats) */
void plyc_rows_stats(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_avg av;

	(void)m;
	memcpy(&av, v, sizeof(av));
	fprintf(fp, "count %" PRId64 ", average %" PRId64 ", total %" PRId64, (int64_t)av.count,
		plyc_agg_average(v), av.sum);
}

void plyc_rows_stats_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_avg av;

	(void)m;
	memcpy(&av, v, sizeof(av));
	fprintf(fp, "{\"count\": %" PRId64 ", \"average\": %" PRId64 ", \"total\": %" PRId64 "}",
		(int64_t)av.count, plyc_agg_average(v), av.sum);
}
