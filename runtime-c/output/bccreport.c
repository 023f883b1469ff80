/* The periodic report: every interval, "[HH:MM:SS]", then per section a
 * frequency table (COUNT EVENT, ascending, the top N) or a log2 histogram
 * in bcc's print_log2_hist layout, as bcc's tools print them; with -f json
 * one object a line with the same fields (docs/argdist.md). Its operations
 * (plyc_style.h) take the place of the style's exit dump. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plyc_loader.h"
#include "plyc_report.h"
#include "plyc_style.h"

#define STARS_MAX 40

/* bcc's _stars: `width` columns for val_max, '+' when a value overflows. */
static void stars(FILE *fp, uint64_t val, uint64_t val_max, int width)
{
	int i, n = 0;

	for (i = 0; i < width; i++) {
		if ((double)i > (double)width * (double)val / (double)val_max - 1)
			break;
		n++;
	}
	for (i = 0; i < n; i++)
		fputc(val > val_max && i == n - 1 ? '+' : '*', fp);
	fprintf(fp, "%*s", width - n, "");
}

/* The last non-empty bucket of n (-1: none), and the largest count. */
static int log2_last(const uint64_t *vals, int n, uint64_t *val_max)
{
	int i, idx_max = -1;

	*val_max = 0;
	for (i = 0; i < n; i++) {
		if (vals[i] > 0)
			idx_max = i;
		if (vals[i] > *val_max)
			*val_max = vals[i];
	}
	return idx_max;
}

/* bcc's bounds of log2 bucket i > 0: [2^(i-1), 2^i - 1], bucket 1 [0, 1]. */
static void log2_bounds(int i, uint64_t *low, uint64_t *high)
{
	*low = 1ULL << (i - 1);
	*high = i == 64 ? UINT64_MAX : (1ULL << i) - 1;
	if (*low == *high)
		(*low)--;
}

void plyc_report_print_log2(FILE *fp, const uint64_t *vals, int n, const char *label)
{
	uint64_t val_max;
	int i, idx_max = log2_last(vals, n, &val_max), width;
	int wide = idx_max > 32;

	width = wide ? STARS_MAX / 2 : STARS_MAX;
	if (idx_max > 0)
		fprintf(fp, wide ? "               %-29s : count     distribution\n"
				 : "     %-19s : count     distribution\n", label);
	for (i = 1; i <= idx_max; i++) {
		uint64_t low, high;

		log2_bounds(i, &low, &high);
		fprintf(fp, wide ? "%20" PRIu64 " -> %-20" PRIu64 " : %-8" PRIu64 " |"
				 : "%10" PRIu64 " -> %-10" PRIu64 " : %-8" PRIu64 " |", low, high, vals[i]);
		stars(fp, vals[i], val_max, width);
		fputs("|\n", fp);
	}
}

/* A key member: a number, or a string (a file name or a comm: untrusted,
 * escaped for the terminal, or a JSON string). */
static void print_key_value(FILE *fp, const struct plyc_field *f, const char *key, int json)
{
	const char *p = key + f->offset;

	if (f->type.kind == PLYC_K_STR)
		(json ? plyc_json_string : plyc_text_string)(fp, p, f->type.size);
	else if (f->type.is_signed)
		fprintf(fp, "%" PRId64, plyc_load_int(p, f->type.size));
	else
		fprintf(fp, "%" PRIu64, plyc_load_uint(p, f->type.size));
}

struct freq_entry {
	const char *key;
	uint64_t count;
};

static const struct plyc_map *sort_map;

static int by_count(const void *a, const void *b)
{
	const struct freq_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return memcmp(x->key, y->key, sort_map->key_size);
}

/* The entries of a count map, by count ascending (ties by key), and the
 * first of the top N to show; *ents NULL when there are none. */
static size_t count_rows(const struct plyc_map *m, int top, char **keys, char **vals,
			 struct freq_entry **ents, size_t *first)
{
	size_t n = 0, i;

	*ents = NULL;
	*first = 0;
	if (plyc_map_collect(m, keys, vals, &n) || !n)
		return 0;
	*ents = calloc(n, sizeof(**ents));
	if (!*ents)
		return 0;
	for (i = 0; i < n; i++) {
		(*ents)[i].key = *keys + i * m->key_size;
		memcpy(&(*ents)[i].count, *vals + i * m->value_size, sizeof(uint64_t));
	}
	sort_map = m;
	qsort(*ents, n, sizeof(**ents), by_count);
	if (top > 0 && (size_t)top < n)
		*first = n - (size_t)top;
	return n;
}

static void report_counts(FILE *fp, const struct plyc_map *m, const struct plyc_report_section *s, int top)
{
	char *keys = NULL, *vals = NULL;
	struct freq_entry *ents;
	size_t n, i, first;
	int k;

	fprintf(fp, "%s\n\t%-10s %s\n", s->header, "COUNT", "EVENT");
	n = count_rows(m, top, &keys, &vals, &ents, &first);
	for (i = first; i < n; i++) {
		fprintf(fp, "\t%-10" PRIu64 " ", ents[i].count);
		if (!m->nkeys && s->keyless_row) {
			fputs(s->keyless_row, fp);
		} else {
			for (k = 0; k < (int)m->nkeys; k++) {
				fprintf(fp, "%s%s = ", k ? ", " : "", s->key_labels[k]);
				print_key_value(fp, &m->keys[k], ents[i].key, 0);
			}
		}
		fputc('\n', fp);
	}
	free(ents);
	free(keys);
	free(vals);
}

/* {"label": ..., "type": "counts", "rows": [{"count": N, "event": {"expr": value, ...}}]}:
 * the rows the text shows, in its order; "event" is the text's "total
 * calls" for a specifier without expressions. An expression written twice
 * is one member (the same value). */
static void json_counts(FILE *fp, const struct plyc_map *m, const struct plyc_report_section *s, int top)
{
	char *keys = NULL, *vals = NULL;
	struct freq_entry *ents;
	size_t n, i, first;
	int k, j;

	fputs("{\"label\": ", fp);
	plyc_json_string(fp, s->header, strlen(s->header));
	fputs(", \"type\": \"counts\", \"rows\": [", fp);
	n = count_rows(m, top, &keys, &vals, &ents, &first);
	for (i = first; i < n; i++) {
		fprintf(fp, "%s{\"count\": %" PRIu64 ", \"event\": ", i > first ? ", " : "", ents[i].count);
		if (!m->nkeys && s->keyless_row) {
			plyc_json_string(fp, s->keyless_row, strlen(s->keyless_row));
		} else {
			fputc('{', fp);
			for (k = 0; k < (int)m->nkeys; k++) {
				for (j = 0; j < k && strcmp(s->key_labels[j], s->key_labels[k]); j++)
					;
				if (j < k)
					continue;
				fputs(k ? ", " : "", fp);
				plyc_json_string(fp, s->key_labels[k], strlen(s->key_labels[k]));
				fputs(": ", fp);
				print_key_value(fp, &m->keys[k], ents[i].key, 1);
			}
			fputc('}', fp);
		}
		fputc('}', fp);
	}
	fputs("]}", fp);
	free(ents);
	free(keys);
	free(vals);
}

static void report_log2(FILE *fp, const struct plyc_map *m, const struct plyc_report_section *s)
{
	char *keys = NULL, *vals = NULL;
	size_t n = 0;

	if (plyc_map_collect(m, &keys, &vals, &n) == 0 && n)
		plyc_report_print_log2(fp, (const uint64_t *)vals, (int)(m->nbuckets ? m->nbuckets : m->value_size / 8), s->header);
	free(keys);
	free(vals);
}

/* {"label": ..., "type": "log2", "buckets": [{"low": 0, "high": 1, "count": N}, ...]}:
 * the rows the text shows (up to the last non-empty one, bucket 0's zeros
 * left out as bcc does), none when nothing was counted. */
static void json_log2(FILE *fp, const struct plyc_map *m, const struct plyc_report_section *s)
{
	char *keys = NULL, *vals = NULL;
	size_t n = 0;
	int i, nb = (int)(m->nbuckets ? m->nbuckets : m->value_size / 8), idx_max;
	uint64_t low, high, val_max;

	fputs("{\"label\": ", fp);
	plyc_json_string(fp, s->header, strlen(s->header));
	fputs(", \"type\": \"log2\", \"buckets\": [", fp);
	if (plyc_map_collect(m, &keys, &vals, &n) == 0 && n) {
		const uint64_t *v = (const uint64_t *)vals;

		idx_max = log2_last(v, nb, &val_max);
		for (i = 1; i <= idx_max; i++) {
			log2_bounds(i, &low, &high);
			fprintf(fp, "%s{\"low\": %" PRIu64 ", \"high\": %" PRIu64 ", \"count\": %" PRIu64 "}",
				i > 1 ? ", " : "", low, high, v[i]);
		}
	}
	fputs("]}", fp);
	free(keys);
	free(vals);
}

int plyc_report_print(struct plyc_map *maps, const struct plyc_report *r)
{
	static int reports;
	int last = 0;
	char stamp[16];
	time_t t = time(NULL);
	FILE *fp = plyc_rt.out;
	int i;

	strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&t));
	if (plyc_rt.json)
		fprintf(fp, "{\"time\": \"%s\", \"sections\": [", stamp);
	else
		fprintf(fp, "[%s]\n", stamp);
	for (i = 0; i < r->nsections; i++) {
		const struct plyc_report_section *s = &r->sections[i];
		struct plyc_map *m = &maps[s->map];

		if (plyc_rt.json) {
			fputs(i ? ", " : "", fp);
			if (s->style == PLYC_REPORT_LOG2)
				json_log2(fp, m, s);
			else
				json_counts(fp, m, s, r->top);
		} else if (s->style == PLYC_REPORT_LOG2) {
			report_log2(fp, m, s);
		} else {
			report_counts(fp, m, s, r->top);
		}
		if (!r->cumulative)
			plyc_map_clear(m);
	}
	if (plyc_rt.json)
		fputs("]}\n", fp);
	fflush(fp);
	reports++;
	if (r->count > 0 && reports >= r->count)
		last = 1;
	/* The report that ends the duration is the last one. */
	if (r->duration > 0 && reports * (double)r->interval >= r->duration - 1e-9)
		last = 1;
	return last;
}

static int report(const struct plyc_program *prog)
{
	return plyc_report_print(prog->maps, prog->report);
}

/* once more for the time since the last one, unless a report ended the
 * run (its count or duration) */
static void at_exit(const struct plyc_program *prog, int ended)
{
	if (!ended)
		plyc_report_print(prog->maps, prog->report);
}

const struct plyc_output_ops plyc_output_bccreport = {
	.report = report,
	.at_exit = at_exit,
};
