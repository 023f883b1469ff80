/* bpftrace's rows of hist() and lhist() values, text and JSON
 * (plyc_btout.h), as its style prints them and as ply's prints a hist(). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "plyc_agg.h"
#include "plyc_btout.h"

#define BAR_WIDTH 52

/* print(@map, top, div) in progress: counts and values are divided by div */
static uint32_t cur_div = 1;

uint32_t plyc_bt_div(void)
{
	return cur_div;
}

void plyc_bt_set_div(uint32_t div)
{
	cur_div = div ? div : 1;
}

static uint64_t word(const void *v, uint32_t i)
{
	return plyc_load_uint((const char *)v + 8 * i, 8);
}

/* 2^power as bpftrace labels it: 1, 2, ... 512, 1K, ... 512K, 1M, ... 1T ... */
static void hist_label(char *buf, size_t len, int power)
{
	static const char units[] = { 0, 'K', 'M', 'G', 'T' };
	int u = power / 10 < 4 ? power / 10 : 4;

	snprintf(buf, len, "%" PRIu64 "%.1s", (uint64_t)1 << (power - 10 * u), units[u] ? &units[u] : "");
}

/* an lhist bound: in K or M when it is a whole number of them */
static void lhist_label(char *buf, size_t len, int64_t v)
{
	if (v && v % 1048576 == 0)
		snprintf(buf, len, "%" PRId64 "M", v / 1048576);
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%" PRId64 "K", v / 1024);
	else
		snprintf(buf, len, "%" PRId64, v);
}

/* The first and last non-empty bucket (-1 when none) and the largest count. */
static int hist_span(const void *v, uint32_t n, uint32_t *first, uint32_t *last, uint64_t *top)
{
	uint32_t i;
	int any = 0;

	*top = 0;
	for (i = 0; i < n; i++) {
		uint64_t c = word(v, i);

		if (!c)
			continue;
		if (!any)
			*first = i;
		*last = i;
		any = 1;
		if (c > *top)
			*top = c;
	}
	return any;
}

/* "[4, 8)          " then the count in 8 columns and a bar of @ scaled
 * to the largest count in 52 columns, truncated as bpftrace's float. */
static void hist_row(FILE *fp, const char *label, uint64_t count, uint64_t top, uint32_t div)
{
	int w = (int)((float)count / (float)top * BAR_WIDTH), i;

	fprintf(fp, "%-16s%8" PRIu64 " |", label, count / div);
	for (i = 0; i < BAR_WIDTH; i++)
		fputc(i < w ? '@' : ' ', fp);
	fputs("|\n", fp);
}

static void hist_bounds(char *label, size_t len, uint32_t i)
{
	char lo[24], hi[24];

	if (i == 0) {
		snprintf(label, len, "(..., 0)");
	} else if (i == 1 || i == 2) {
		snprintf(label, len, "[%u]", i - 1);
	} else {
		hist_label(lo, sizeof(lo), (int)i - 2);
		hist_label(hi, sizeof(hi), (int)i - 1);
		snprintf(label, len, "[%s, %s)", lo, hi);
	}
}

/* A bound of hist(x, k) as bpftrace 0.27 labels it: mult << power with
 * power's whole 2^10s as K, M, G, T, P, E (1536, 3K). */
static void hist_k_label(char *buf, size_t len, uint32_t i, uint32_t k)
{
	uint64_t mult;
	uint32_t power;

	plyc_bt_hist_low(i, k, &mult, &power);
	snprintf(buf, len, "%" PRIu64 "%.1s", mult << (power % 10), &"\0KMGTPE"[power / 10]);
}

/* hist(x, k)'s largest value in bucket i (k = 0: hist(x)'s): one less
 * than the next one's least, the top bucket's 2^64 - 1 */
static uint64_t hist_k_max(uint32_t i, uint32_t k)
{
	uint64_t next = plyc_bt_hist_low(i + 1, k, NULL, NULL);

	return next == UINT64_MAX ? UINT64_MAX : next - 1;
}

/* hist(x, k), k > 0: the buckets of one value each as [v], the others
 * [least, next's least), as 0.27 prints them */
static void hist_k_bounds(char *label, size_t len, uint32_t i, uint32_t k)
{
	char lo[24], hi[24];

	if (i == 0) {
		snprintf(label, len, "(..., 0)");
	} else if (i <= (2u << k)) {
		snprintf(label, len, "[%u]", i - 1);
	} else {
		hist_k_label(lo, sizeof(lo), i, k);
		hist_k_label(hi, sizeof(hi), i + 1, k);
		snprintf(label, len, "[%s, %s)", lo, hi);
	}
}

void plyc_bt_hist_rows(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t first, last, i, k = plyc_bt_hist_k(m);
	uint64_t top;
	char label[64];

	if (!hist_span(v, plyc_agg_nbuckets(m), &first, &last, &top))
		return;
	for (i = first; i <= last; i++) {
		if (k)
			hist_k_bounds(label, sizeof(label), i, k);
		else
			hist_bounds(label, sizeof(label), i);
		hist_row(fp, label, word(v, i), top, cur_div);
	}
}

void plyc_bt_hist_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t first, last, i, k = plyc_bt_hist_k(m);
	uint64_t top;

	fputc('[', fp);
	if (hist_span(v, plyc_agg_nbuckets(m), &first, &last, &top)) {
		for (i = first; i <= last; i++) {
			fputs(i == first ? "{" : plyc_bt_version->json_compact ? ",{" : ", {", fp);
			if (i == 0)
				fputs("\"max\": -1, ", fp);
			else if (i <= (2u << k))
				fprintf(fp, "\"min\": %u, \"max\": %u, ", i - 1, i - 1);
			else {
				fputs("\"min\": ", fp);
				plyc_bt_json_int(fp, plyc_bt_hist_low(i, k, NULL, NULL), 0);
				fputs(", \"max\": ", fp);
				plyc_bt_json_int(fp, hist_k_max(i, k), 0);
				fputs(", ", fp);
			}
			fprintf(fp, "\"count\": %" PRIu64 "}", word(v, i) / cur_div);
		}
	}
	fputc(']', fp);
}

static void lhist_bounds(char *label, size_t len, const struct plyc_map *m, uint32_t i, uint32_t n)
{
	char lo[24], hi[24];

	if (i == 0) {
		lhist_label(lo, sizeof(lo), m->lq_min);
		snprintf(label, len, "(..., %s)", lo);
	} else if (i == n - 1) {
		lhist_label(hi, sizeof(hi), m->lq_max);
		snprintf(label, len, "[%s, ...)", hi);
	} else {
		lhist_label(lo, sizeof(lo), plyc_lq_bound(m, i - 1));
		lhist_label(hi, sizeof(hi), plyc_lq_bound(m, i));
		/* 0.27: a bucket of one value is [v] */
		if (plyc_bt_version->lhist_single && plyc_lq_bound(m, i) - plyc_lq_bound(m, i - 1) == 1)
			snprintf(label, len, "[%s]", lo);
		else
			snprintf(label, len, "[%s, %s)", lo, hi);
	}
}

void plyc_bt_lhist_rows(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t n = plyc_agg_nbuckets(m), first, last, i;
	uint64_t top;
	char label[80];

	if (!hist_span(v, n, &first, &last, &top))
		return;
	for (i = first; i <= last; i++) {
		lhist_bounds(label, sizeof(label), m, i, n);
		hist_row(fp, label, word(v, i), top, 1);   /* bpftrace divides no lhist */
	}
}

void plyc_bt_lhist_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t n = plyc_agg_nbuckets(m), first, last, i;
	uint64_t top;

	fputc('[', fp);
	if (hist_span(v, n, &first, &last, &top)) {
		for (i = first; i <= last; i++) {
			fputs(i == first ? "{" : plyc_bt_version->json_compact ? ",{" : ", {", fp);
			if (i == 0)
				fprintf(fp, "\"max\": %" PRId64 ", ", plyc_lq_below(m->lq_min));
			else if (i == n - 1)
				fprintf(fp, "\"min\": %" PRId64 ", ", m->lq_max);
			else
				fprintf(fp, "\"min\": %" PRId64 ", \"max\": %" PRId64 ", ",
					plyc_lq_bound(m, i - 1), plyc_lq_bound(m, i) - 1);
			fprintf(fp, "\"count\": %" PRIu64 "}", word(v, i));
		}
	}
	fputc(']', fp);
}

