/* bpftrace 0.17's output (plyc_btout.h), byte for byte as the bpftrace
 * Debian 12 ships prints it, quirks included where a pipeline could
 * depend on them (a ksym-valued map's entries run together on one line,
 * JSON escapes of bytes above 0x7f as \uffffffXX). Written from its
 * observed output; docs/bpftrace.md, "Output", lists the cases. */
#define _GNU_SOURCE		/* open_memstream, qsort_r */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plyc_agg.h"
#include "plyc_btout.h"

#define BAR_WIDTH 52

/* print(@map, top, div) in progress: counts and values are divided by div */
static uint32_t cur_div = 1;

uint32_t plyc_bt_div(void)
{
	return cur_div;
}

static uint64_t word(const void *v, uint32_t i)
{
	return plyc_load_uint((const char *)v + 8 * i, 8);
}

/* --- values --------------------------------------------------------------- */

static void bt_int(FILE *fp, const struct plyc_type *t, const void *data)
{
	if (t->is_signed)
		fprintf(fp, "%" PRId64, plyc_load_int(data, t->size));
	else
		fprintf(fp, "%" PRIu64, plyc_load_uint(data, t->size));
}

/* buf(): printable bytes as they are, the others as \xNN */
static void bt_buf(FILE *fp, const unsigned char *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (d[i] >= 0x20 && d[i] < 0x7f)
			fputc(d[i], fp);
		else
			fprintf(fp, "\\x%02x", d[i]);
	}
}

/* A buf() value: its length, then the bytes (PLYC_K_BUF). */
static size_t sized_len(const unsigned char *d, size_t size)
{
	uint32_t n;

	memcpy(&n, d, sizeof(n));
	return n < size - sizeof(n) ? n : size - sizeof(n);
}

void plyc_bt_buf_format(FILE *fp, const void *data, size_t size, char mode)
{
	const unsigned char *d = (const unsigned char *)data + sizeof(uint32_t);
	size_t i, n = sized_len(data, size);

	if (mode == ' ') {
		bt_buf(fp, d, n);
		return;
	}
	for (i = 0; i < n; i++)
		fprintf(fp, mode == 'h' ? "%s%02x" : "%s\\x%02x", mode == 'h' && i ? " " : "", d[i]);
}

/* A newline, then a line per frame in the stack's mode: "sym+off" (the
 * offset even when 0) indented, perf's tab, address and symbol, or the
 * address alone (raw). A user stack holds its pid in the high 32 bits.
 * A stack that can't be read (no user stack in a kernel thread, no kernel
 * stack in a uprobe) prints nothing at all, as in bpftrace. */
static void bt_stack(FILE *fp, const struct plyc_type *t, const void *data, int indent)
{
	uint64_t ips[PLYC_STACK_DEPTH], v = plyc_load_uint(data, 8);
	int user = t->kind == PLYC_K_USTACK;
	int64_t id = user ? (int32_t)(uint32_t)v : (int64_t)v;
	char sym[PLYC_KSYM_LEN];
	size_t i;

	if (id < 0 || plyc_stack_read_limit(id, PLYC_STACK_LIMIT(t), ips))
		return;
	fputc('\n', fp);
	if (user) {
		plyc_print_ustack(fp, (uint32_t)(v >> 32), ips, PLYC_STACK_DEPTH, PLYC_STACK_MODE(t), indent);
		return;
	}
	for (i = 0; i < PLYC_STACK_DEPTH && ips[i]; i++) {
		if (PLYC_STACK_MODE(t) == PLYC_STACK_RAW)
			fprintf(fp, "%" PRIx64 "\n", ips[i]);
		else if (PLYC_STACK_MODE(t) == PLYC_STACK_PERF)
			fprintf(fp, "\t%" PRIx64 " %s\n", ips[i], plyc_ksym_bt(ips[i], 1, sym, sizeof(sym)));
		else
			fprintf(fp, "%*s%s\n", indent, "", plyc_ksym_bt(ips[i], 1, sym, sizeof(sym)));
	}
}

static int is_int_size(uint32_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

void plyc_bt_value(FILE *fp, const struct plyc_type *t, const void *data, int indent);
void plyc_bt_json_value(FILE *fp, const struct plyc_type *t, const void *data);

/* A tuple as bpftrace prints it: "(1, abc, (2, x))", or in JSON
 * [1,"abc",[2,"x"]] (no blanks). */
static void bt_tuple(FILE *fp, const struct plyc_type *t, const void *data, int indent, int json)
{
	uint32_t i;

	fputc(json ? '[' : '(', fp);
	for (i = 0; i < t->nfields; i++) {
		const void *v = (const char *)data + t->fields[i].offset;

		if (i)
			fputs(json ? "," : ", ", fp);
		if (json)
			plyc_bt_json_value(fp, &t->fields[i].type, v);
		else
			plyc_bt_value(fp, &t->fields[i].type, v, indent);
	}
	fputc(json ? ']' : ')', fp);
}

void plyc_bt_value(FILE *fp, const struct plyc_type *t, const void *data, int indent)
{
	char sym[PLYC_KSYM_LEN];

	switch (t->kind) {
	case PLYC_K_INT:
	case PLYC_K_TIME:
		/* bpftrace has no durations: nanoseconds are integers */
		if (is_int_size(t->size))
			bt_int(fp, t, data);
		else
			bt_buf(fp, data, t->size);
		break;
	case PLYC_K_HEX:
		fprintf(fp, "0x%" PRIx64, plyc_load_uint(data, t->size));
		break;
	case PLYC_K_STR:
		fwrite(data, 1, strnlen(data, t->size), fp);
		break;
	case PLYC_K_WALLTIME:
		plyc_print_walltime(fp, plyc_load_int(data, t->size));
		break;
	case PLYC_K_SYM:
		fputs(plyc_ksym_bt(plyc_load_uint(data, t->size), 0, sym, sizeof(sym)), fp);
		break;
	case PLYC_K_STACK:
	case PLYC_K_USTACK:
		bt_stack(fp, t, data, indent);
		break;
	case PLYC_K_USYM:
		fputs(plyc_usym_text(data, sym, sizeof(sym)), fp);
		break;
	case PLYC_K_MEM:
		bt_buf(fp, data, t->size);
		break;
	case PLYC_K_BUF:
		plyc_bt_buf_format(fp, data, t->size, ' ');
		break;
	case PLYC_K_INET:
		fputs(plyc_inet_text(data, sym, sizeof(sym)), fp);
		break;
	case PLYC_K_USERNAME:
	case PLYC_K_MAC:
	case PLYC_K_STRFTIME:
		fputs(plyc_value_text(t, data, sym, sizeof(sym)), fp);
		break;
	case PLYC_K_TUPLE:
		bt_tuple(fp, t, data, indent, 0);
		break;
	}
}

/* bpftrace escapes the bytes of a string as signed chars: a byte above
 * 0x7f is below 0x20 too, and its \u escape is the negative int's hex. */
void plyc_bt_json_escape(FILE *fp, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i]; i++) {
		signed char c = (signed char)s[i];

		switch (c) {
		case '"':  fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp);  break;
		case '\r': fputs("\\r", fp);  break;
		case '\t': fputs("\\t", fp);  break;
		default:
			if (c <= 0x1f)
				fprintf(fp, "\\u%04x", (unsigned)(int)c);
			else
				fputc(c, fp);
		}
	}
}

/* Text into a buffer (to be escaped, or joined as a JSON key). */
struct textbuf {
	char *s;
	size_t len;
	FILE *fp;
};

static FILE *text_open(struct textbuf *b)
{
	b->s = NULL;
	b->len = 0;
	b->fp = open_memstream(&b->s, &b->len);
	return b->fp;
}

/* Escape what was written into fp, then free it. */
static void text_close_escaped(struct textbuf *b, FILE *fp)
{
	if (!b->fp)
		return;
	fclose(b->fp);
	plyc_bt_json_escape(fp, b->s ? b->s : "", b->len);
	free(b->s);
}

/* bpftrace 0.17 writes macaddr() and strftime() values unquoted, as
 * their text (not JSON: its quirk, kept); a username is a string. */
static int is_quoted(const struct plyc_type *t)
{
	return t->kind == PLYC_K_STR || t->kind == PLYC_K_SYM || t->kind == PLYC_K_STACK ||
	       t->kind == PLYC_K_USTACK || t->kind == PLYC_K_USYM ||
	       t->kind == PLYC_K_MEM || t->kind == PLYC_K_BUF || t->kind == PLYC_K_WALLTIME || t->kind == PLYC_K_INET ||
	       t->kind == PLYC_K_USERNAME ||
	       (t->kind == PLYC_K_INT && !is_int_size(t->size));
}

void plyc_bt_json_value(FILE *fp, const struct plyc_type *t, const void *data)
{
	struct textbuf b;

	if (t->kind == PLYC_K_TUPLE) {
		bt_tuple(fp, t, data, 8, 1);
		return;
	}
	if (!is_quoted(t)) {
		plyc_bt_value(fp, t, data, 8);
		return;
	}
	fputc('"', fp);
	if (text_open(&b))
		plyc_bt_value(b.fp, t, data, 8);
	text_close_escaped(&b, fp);
	fputc('"', fp);
}

/* --- hist and lhist ------------------------------------------------------- */

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

void plyc_bt_hist_rows(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t first, last, i;
	uint64_t top;
	char label[64];

	if (!hist_span(v, plyc_agg_nbuckets(m), &first, &last, &top))
		return;
	for (i = first; i <= last; i++) {
		hist_bounds(label, sizeof(label), i);
		hist_row(fp, label, word(v, i), top, cur_div);
	}
}

void plyc_bt_hist_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t first, last, i;
	uint64_t top;

	fputc('[', fp);
	if (hist_span(v, plyc_agg_nbuckets(m), &first, &last, &top)) {
		for (i = first; i <= last; i++) {
			fputs(i > first ? ", {" : "{", fp);
			if (i == 0)
				fputs("\"max\": -1, ", fp);
			else if (i == 1 || i == 2)
				fprintf(fp, "\"min\": %u, \"max\": %u, ", i - 1, i - 1);
			else
				fprintf(fp, "\"min\": %" PRIu64 ", \"max\": %" PRIu64 ", ",
					(uint64_t)1 << (i - 2), ((uint64_t)1 << (i - 1)) - 1);
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
		lhist_label(lo, sizeof(lo), m->lq_min + ((int64_t)i - 1) * m->lq_step);
		lhist_label(hi, sizeof(hi), m->lq_min + (int64_t)i * m->lq_step);
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
			int64_t lo = m->lq_min + ((int64_t)i - 1) * m->lq_step;

			fputs(i > first ? ", {" : "{", fp);
			if (i == 0)
				fprintf(fp, "\"max\": %" PRId64 ", ", m->lq_min - 1);
			else if (i == n - 1)
				fprintf(fp, "\"min\": %" PRId64 ", ", m->lq_max);
			else
				fprintf(fp, "\"min\": %" PRId64 ", \"max\": %" PRId64 ", ", lo,
					lo + m->lq_step - 1);
			fprintf(fp, "\"count\": %" PRIu64 "}", word(v, i));
		}
	}
	fputc(']', fp);
}

/* --- maps ----------------------------------------------------------------- */

/* bpftrace orders keys by their first member, then the next: integers
 * as unsigned numbers (-1 last), strings as C strings. */
static int cmp_key_member(const struct plyc_type *t, const void *a, const void *b)
{
	uint64_t x, y;
	uint32_t i;
	int c;

	if (t->kind == PLYC_K_TUPLE) {
		for (i = 0, c = 0; !c && i < t->nfields; i++)
			c = cmp_key_member(&t->fields[i].type, (const char *)a + t->fields[i].offset,
					   (const char *)b + t->fields[i].offset);
		return c;
	}
	if (t->kind == PLYC_K_STR)
		return strncmp(a, b, t->size);
	if (!is_int_size(t->size) || t->kind == PLYC_K_MEM || t->kind == PLYC_K_BUF)
		return memcmp(a, b, t->size);
	x = plyc_load_uint(a, t->size);
	y = plyc_load_uint(b, t->size);
	return (x > y) - (x < y);
}

static int cmp_entry(const void *a, const void *b, void *priv)
{
	const struct plyc_entry *x = a, *y = b;
	const struct plyc_map *m = priv;
	const char *ka = x->key, *kb = y->key;
	uint32_t i;
	int c = plyc_agg_ops(m)->bt_cmp(m, x->value, y->value);

	/* ties: bpftrace leaves them in its hash map's order, which
	 * changes from run to run; plyc orders them by key */
	for (i = 0; !c && i < m->nkeys; i++)
		c = cmp_key_member(&m->keys[i].type, ka + m->keys[i].offset, kb + m->keys[i].offset);
	return c;
}

/* "@name" and, with keys, "[k1, k2]" */
static void print_key(FILE *fp, const struct plyc_map *m, const char *key)
{
	uint32_t i;

	fputs(m->name, fp);
	if (!m->nkeys)
		return;
	fputc('[', fp);
	for (i = 0; i < m->nkeys; i++) {
		if (i)
			fputs(", ", fp);
		plyc_bt_value(fp, &m->keys[i].type, key + m->keys[i].offset, 4);
	}
	fputc(']', fp);
}

/* The key members' text joined by "," as one JSON string. */
static void json_key(FILE *fp, const struct plyc_map *m, const char *key)
{
	struct textbuf b;
	uint32_t i;

	fputc('"', fp);
	if (text_open(&b)) {
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputc(',', b.fp);
			plyc_bt_value(b.fp, &m->keys[i].type, key + m->keys[i].offset, 4);
		}
	}
	text_close_escaped(&b, fp);
	fputs("\": ", fp);
}

static const char *group_name(enum plyc_bt_group g)
{
	return g == PLYC_BT_HIST ? "hist" : g == PLYC_BT_STATS ? "stats" : "map";
}

static void print_json(FILE *fp, const struct plyc_map *m, const struct plyc_entry *ents, size_t n)
{
	const struct plyc_agg_ops *ops = plyc_agg_ops(m);
	size_t e;

	fprintf(fp, "{\"type\": \"%s\", \"data\": {\"", group_name(ops->bt_group));
	plyc_bt_json_escape(fp, m->name, strlen(m->name));
	fputs(m->nkeys ? "\": {" : "\": ", fp);
	for (e = 0; e < n; e++) {
		if (e)
			fputs(", ", fp);
		if (m->nkeys)
			json_key(fp, m, ents[e].key);
		ops->bt_json(fp, m, ents[e].value);
	}
	fputs(m->nkeys ? "}}}\n" : "}}\n", fp);
}

static void print_text(FILE *fp, const struct plyc_map *m, const struct plyc_entry *ents, size_t n)
{
	const struct plyc_agg_ops *ops = plyc_agg_ops(m);
	/* bpftrace separates entries with a newline, except those of maps of
	 * stacks, symbols and ntop() addresses, which it runs together */
	int sep = !(m->agg == PLYC_A_NONE &&
		    (m->value.kind == PLYC_K_STACK || m->value.kind == PLYC_K_SYM ||
		     m->value.kind == PLYC_K_INET || m->value.kind == PLYC_K_USTACK ||
		     m->value.kind == PLYC_K_USYM));
	size_t e;

	for (e = 0; e < n; e++) {
		if (e && sep)
			fputc('\n', fp);
		print_key(fp, m, ents[e].key);
		fputs(ops->bt_group == PLYC_BT_HIST ? ": \n" : ": ", fp);
		ops->bt_print(fp, m, ents[e].value);
	}
	fputs(ops->bt_group == PLYC_BT_STATS ? "\n\n" : "\n", fp);
}

void plyc_bt_map_print(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n)
{
	plyc_bt_map_print_top(fp, m, ents, n, 0, 1);
}

void plyc_bt_map_print_top(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
			   uint32_t top, uint32_t div)
{
	static const char zero[8];
	struct plyc_entry none = { zero, zero };

	/* a key-less count() is an array in bpftrace: there from the start */
	if (!n && !m->nkeys && m->agg == PLYC_A_COUNT) {
		ents = &none;
		n = 1;
	}
	if (n > 1)
		qsort_r(ents, n, sizeof(*ents), cmp_entry, (void *)m);
	/* the last top entries, the largest; bpftrace's stats() ignore
	 * top and div (its avg() does not) */
	if (m->agg == PLYC_A_STATS)
		top = 0, div = 1;
	if (top && n > top) {
		ents += n - top;
		n = top;
	}
	cur_div = div ? div : 1;
	if (plyc_rt.json) {
		if (n)
			print_json(fp, m, ents, n);
	} else {
		print_text(fp, m, ents, n);
	}
	cur_div = 1;
}

/* --- events --------------------------------------------------------------- */

void plyc_bt_print(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n)
{
	int i;

	if (plyc_rt.json)
		fputs("{\"type\": \"value\", \"data\": ", fp);
	if (n > 1)
		fputc(plyc_rt.json ? '[' : '(', fp);
	for (i = 0; i < n; i++) {
		if (i)
			fputs(plyc_rt.json ? "," : ", ", fp);
		if (plyc_rt.json)
			plyc_bt_json_value(fp, types[i], vals[i]);
		else
			plyc_bt_value(fp, types[i], vals[i], 8);
	}
	if (n > 1)
		fputc(plyc_rt.json ? ']' : ')', fp);
	fputs(plyc_rt.json ? "}\n" : "\n", fp);
}

void plyc_bt_json_printf(FILE *fp, const char *text, size_t len)
{
	fputs("{\"type\": \"printf\", \"data\": \"", fp);
	plyc_bt_json_escape(fp, text, len);
	fputs("\"}\n", fp);
}

/* a message bpftrace prints as it is, or in JSON as {"type": TYPE, ...} */
static void message(FILE *fp, const char *type, const char *text, size_t len, int newline);

void plyc_bt_message(FILE *fp, const char *type, const char *text, size_t len)
{
	message(fp, type, text, len, 0);
}

static void message(FILE *fp, const char *type, const char *text, size_t len, int newline)
{
	if (!plyc_rt.json) {
		fwrite(text, 1, len, fp);
		if (newline)
			fputc('\n', fp);
		return;
	}
	fprintf(fp, "{\"type\": \"%s\", \"data\": \"", type);
	plyc_bt_json_escape(fp, text, len);
	fputs("\"}\n", fp);
}

void plyc_bt_time(FILE *fp, const char *fmt)
{
	char buf[256] = "";
	struct tm tm;
	time_t now = time(NULL);

	if (localtime_r(&now, &tm))
		strftime(buf, sizeof(buf), fmt ? fmt : "%H:%M:%S\n", &tm);
	message(fp, "time", buf, strlen(buf), 0);
}

void plyc_bt_join(FILE *fp, const char *const *args, int n, const char *sep)
{
	char *s = NULL;
	size_t len = 0;
	FILE *b = open_memstream(&s, &len);
	int i;

	if (!b)
		return;
	for (i = 0; i < n; i++)
		fprintf(b, "%s%s", i ? (sep ? sep : " ") : "", args[i]);
	fclose(b);
	message(fp, "join", s, len, 1);
	free(s);
}

void plyc_bt_attached(FILE *fp, int nprobes)
{
	if (plyc_rt.json)
		fprintf(fp, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n", nprobes);
	else
		fprintf(fp, "Attaching %d probe%s...\n", nprobes, nprobes == 1 ? "" : "s");
}

void plyc_bt_exit_banner(FILE *fp)
{
	/* in text and in JSON alike */
	fputs("\n\n", fp);
}
