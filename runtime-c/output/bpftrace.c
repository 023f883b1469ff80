/* bpftrace's output style (plyc_style.h, plyc_btout.h), byte for byte as
 * bpftrace 0.27 prints it, or as 0.17 (the one Debian 12 ships) does where
 * the tracer was built for it (struct plyc_bt_version), quirks included
 * where a pipeline could depend on them (a ksym-valued map's entries run together
 * on one line, JSON escapes of bytes above 0x7f as \uffffffXX). Written
 * from its observed output; docs/bpftrace.md, "Output", lists the cases.
 * Its values are values/btvalue.c's, its hist rows output/btrows.c's. */
#define _GNU_SOURCE		/* open_memstream, qsort_r */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plyc_agg.h"
#include "plyc_btout.h"
#include "plyc_loader.h"
#include "plyc_rows.h"
#include "plyc_style.h"

static int is_int_size(uint32_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/* --- each kind's values ----------------------------------------------------- */

/* Which of bpftrace's map printers shows a kind: they differ in what
 * follows a dump (one newline, two) and in the JSON object's "type". */
enum bt_group {
	BT_MAP,     /* "map": count, sum, min, max, plain values */
	BT_STATS,   /* "stats": avg, stats; a blank line after the dump */
	BT_HIST,    /* "hist": hist, lhist; rows under each key */
	BT_TSERIES, /* "tseries" (0.27's): a chart under each key */
};

/* How bpftrace orders a kind's entries (<0, 0, >0; 0 leaves it to the
 * keys) and prints one merged value in its text (rows for a hist) and
 * in its JSON. */
struct bt_agg {
	enum bt_group group;
	int (*cmp)(const struct plyc_map *m, const void *a, const void *b);
	void (*print)(FILE *fp, const struct plyc_map *m, const void *v);
	void (*json)(FILE *fp, const struct plyc_map *m, const void *v);
};

static void print_avg(FILE *fp, const struct plyc_map *m, const void *v)
{
	(void)m;
	fprintf(fp, "%" PRId64, plyc_agg_average(v) / (int64_t)plyc_bt_div());
}

static int cmp_hist_total(const struct plyc_map *m, const void *a, const void *b)
{
	uint64_t x = plyc_agg_total(m, a), y = plyc_agg_total(m, b);

	return (x > y) - (x < y);
}

/* plain values: integers by value, the rest by key */
static int cmp_plain(const struct plyc_map *m, const void *a, const void *b)
{
	if (m->value.kind == PLYC_K_STR || m->value.kind == PLYC_K_MEM || m->value.kind == PLYC_K_BUF ||
	    m->value.kind == PLYC_K_TUPLE || m->value.kind == PLYC_K_STACK || m->value.kind == PLYC_K_SYM ||
	    m->value.kind == PLYC_K_USTACK || m->value.size > 8)
		return 0;
	return plyc_cmp_typed(&m->value, a, b);
}

/* an integer divided by print()'s div, or NULL when it isn't one */
static const void *div_plain(const struct plyc_map *m, const void *v, int64_t *tmp)
{
	if (plyc_bt_div() == 1 || m->value.kind != PLYC_K_INT || m->value.size > 8)
		return v;
	if (m->value.is_signed)
		*tmp = plyc_load_int(v, m->value.size) / (int64_t)plyc_bt_div();
	else
		*tmp = (int64_t)(plyc_load_uint(v, m->value.size) / plyc_bt_div());
	return NULL;
}

static void print_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type t = { PLYC_K_INT, 8, m->value.is_signed, 0, 0, NULL };
	int64_t x;

	if (div_plain(m, v, &x))
		plyc_bt_value(fp, &m->value, v, 8);
	else
		plyc_bt_value(fp, &t, &x, 8);
}

static void json_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type t = { PLYC_K_INT, 8, m->value.is_signed, 0, 0, NULL };
	int64_t x;

	if (div_plain(m, v, &x))
		plyc_bt_json_value(fp, &m->value, v);
	else
		plyc_bt_json_value(fp, &t, &x);
}

static void print_stats(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_avg av;

	if (!plyc_bt_version->stats_braced) {
		plyc_rows_stats(fp, m, v);
		return;
	}
	memcpy(&av, v, sizeof(av));
	fprintf(fp, "{ .count = %" PRId64 ", .average = %" PRId64 ", .total = %" PRId64 " }",
		(int64_t)av.count, plyc_agg_average(v), av.sum);
}

/* count, sum, min, max: the number, whatever the argument's kind */
static void print_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type t;
	uint64_t x = plyc_agg_scalar(m, v, &t);

	if (t.is_signed)
		fprintf(fp, "%" PRId64, (int64_t)x / (int64_t)plyc_bt_div());
	else
		fprintf(fp, "%" PRIu64, x / plyc_bt_div());
}

/* ply's rows of a quantize (and of a log2 map, which bpftrace has no form for) */
static void print_quantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	plyc_rows_quantize(fp, m, v);
	fputc('\n', fp);
}

/* the same in JSON, where 0.27 quotes what a double cannot hold */
static void json_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type t;
	uint64_t x = plyc_agg_scalar(m, v, &t);

	if (t.is_signed)
		plyc_bt_json_int(fp, (uint64_t)((int64_t)x / (int64_t)plyc_bt_div()), 1);
	else
		plyc_bt_json_int(fp, x / plyc_bt_div(), 0);
}

static int cmp_none(const struct plyc_map *m, const void *a, const void *b)
{
	(void)m, (void)a, (void)b;
	return 0;
}

#define SCALAR { BT_MAP, plyc_agg_cmp_scalar, print_scalar, json_scalar }
#define QUANTIZE { BT_HIST, cmp_hist_total, print_quantize, plyc_rows_quantize_json }

static const struct bt_agg aggs[] = {
	[PLYC_A_NONE] = { BT_MAP, cmp_plain, print_plain, json_plain },
	[PLYC_A_COUNT] = SCALAR,
	[PLYC_A_SUM] = SCALAR,
	[PLYC_A_MIN] = SCALAR,
	[PLYC_A_MAX] = SCALAR,
	[PLYC_A_AVG] = { BT_STATS, plyc_agg_cmp_average, print_avg, print_avg },
	[PLYC_A_QUANTIZE] = QUANTIZE,
	/* also bpftrace's lhist(): the same buckets */
	[PLYC_A_LQUANTIZE] = { BT_HIST, cmp_hist_total, plyc_bt_lhist_rows, plyc_bt_lhist_json },
	[PLYC_A_LOG2] = QUANTIZE,
	[PLYC_A_STATS] = { BT_STATS, plyc_agg_cmp_average, print_stats, plyc_rows_stats_json },
	[PLYC_A_HIST] = { BT_HIST, cmp_hist_total, plyc_bt_hist_rows, plyc_bt_hist_json },
	/* in key order (cmp_entry) */
	[PLYC_A_TSERIES] = { BT_TSERIES, cmp_none, plyc_bt_tseries_chart, plyc_bt_tseries_json },
};

static const struct bt_agg *agg_of(const struct plyc_map *m)
{
	if ((unsigned)m->agg >= sizeof(aggs) / sizeof(aggs[0]))
		return &aggs[PLYC_A_NONE];
	return &aggs[m->agg];
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
	int c = agg_of(m)->cmp(m, x->value, y->value);

	/* 0.27 orders a tseries map's keys by their bytes (integers by
	 * their lowest byte first, as they are stored) */
	for (i = 0; m->agg == PLYC_A_TSERIES && i < m->nkeys; i++) {
		c = memcmp(ka + m->keys[i].offset, kb + m->keys[i].offset, m->keys[i].type.size);
		if (c)
			return c;
	}

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
		plyc_bt_value(fp, &m->keys[i].type, key + m->keys[i].offset,
			      plyc_bt_version->key_stack_indent);
	}
	fputc(']', fp);
}

/* The key members' text joined by "," as one JSON string. */
static void json_key(FILE *fp, const struct plyc_map *m, const char *key)
{
	struct plyc_textbuf b;
	uint32_t i;

	fputc('"', fp);
	if (plyc_text_open(&b)) {
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputc(',', b.fp);
			plyc_bt_key_text(b.fp, &m->keys[i].type, key + m->keys[i].offset);
		}
	}
	plyc_text_close_escaped(&b, fp);
	fputs("\": ", fp);
}

/* A tseries map's key (0.27's): the members joined by ",", every space
 * left out. */
static void json_key_tseries(FILE *fp, const struct plyc_map *m, const char *key)
{
	struct plyc_textbuf b;
	size_t i, j = 0;

	fputc('"', fp);
	if (plyc_text_open(&b)) {
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputc(',', b.fp);
			plyc_bt_value(b.fp, &m->keys[i].type, key + m->keys[i].offset, 4);
		}
	}
	if (!plyc_text_close(&b)) {
		for (i = 0; i < b.len; i++)
			if (b.s[i] != ' ')
				b.s[j++] = b.s[i];
		plyc_bt_json_escape(fp, b.s, j);
	}
	free(b.s);
	fputs("\": ", fp);
}

static const char *group_name(enum bt_group g)
{
	return g == BT_HIST ? "hist" : g == BT_STATS ? "stats" : g == BT_TSERIES ? "tseries" : "map";
}

static void print_json(FILE *fp, const struct plyc_map *m, const struct plyc_entry *ents, size_t n)
{
	const struct bt_agg *ops = agg_of(m);
	size_t e;

	fprintf(fp, "{\"type\": \"%s\", \"data\": {\"", group_name(ops->group));
	plyc_bt_json_escape(fp, m->name, strlen(m->name));
	fputs(m->nkeys ? "\": {" : "\": ", fp);
	for (e = 0; e < n; e++) {
		if (e)
			fputs(", ", fp);
		if (m->nkeys && ops->group == BT_TSERIES)
			json_key_tseries(fp, m, ents[e].key);
		else if (m->nkeys)
			json_key(fp, m, ents[e].key);
		ops->json(fp, m, ents[e].value);
	}
	fputs(m->nkeys ? "}}}\n" : "}}\n", fp);
}

/* 0.27's -f json line of an avg() or stats() map with no entries */
static void print_json_empty(FILE *fp, const struct plyc_map *m)
{
	fputs("{\"type\": \"stats\", \"data\": {\"", fp);
	plyc_bt_json_escape(fp, m->name, strlen(m->name));
	fputs("\": {}}}\n", fp);
}

static void print_text(FILE *fp, const struct plyc_map *m, const struct plyc_entry *ents, size_t n)
{
	const struct bt_agg *ops = agg_of(m);
	/* bpftrace separates entries with a newline, except those of maps of
	 * stacks, symbols and ntop() addresses, which it runs together */
	int sep = !(m->agg == PLYC_A_NONE &&
		    (m->value.kind == PLYC_K_STACK || m->value.kind == PLYC_K_SYM ||
		     m->value.kind == PLYC_K_INET || m->value.kind == PLYC_K_USTACK ||
		     m->value.kind == PLYC_K_USYM));
	size_t e;

	/* 0.27 prints nothing of an empty map, 0.17 its blank line(s) */
	if (!n && plyc_bt_version->empty_map_silent)
		return;
	if (ops->group == BT_TSERIES) {
		/* "@name[key]:", the chart, a blank line; an empty map nothing */
		for (e = 0; e < n; e++) {
			print_key(fp, m, ents[e].key);
			fputs(":\n", fp);
			ops->print(fp, m, ents[e].value);
		}
		return;
	}
	for (e = 0; e < n; e++) {
		if (e && sep)
			fputc('\n', fp);
		print_key(fp, m, ents[e].key);
		if (ops->group == BT_HIST)
			fprintf(fp, "%s\n", plyc_bt_version->hist_colon);
		else
			fputs(": ", fp);
		ops->print(fp, m, ents[e].value);
	}
	fputs(ops->group == BT_STATS && !plyc_bt_version->stats_braced ? "\n\n" : "\n", fp);
}

/* set while at_exit dumps the maps */
static int exiting;

void plyc_bt_map_print(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n)
{
	plyc_bt_map_print_top(fp, m, ents, n, 0, 1);
}

void plyc_bt_map_print_top(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
			   uint32_t top, uint32_t div)
{
	struct plyc_entry none;
	void *zero = NULL;
	uint64_t last;
	size_t e;

	/* a key-less count() is an array in bpftrace: there from the start
	 * (print() shows 0), but 0.27 leaves one never written, or cleared,
	 * out of the exit dump; 0.27's print() shows any other key-less map
	 * but a hist's, lhist's or tseries' as its value type's zero too */
	if (!n && !m->nkeys && !(exiting && plyc_bt_version->empty_map_silent) &&
	    (m->agg == PLYC_A_COUNT ||
	     (plyc_bt_version->print_empty_zero && !exiting && agg_of(m)->group != BT_HIST &&
	      agg_of(m)->group != BT_TSERIES))) {
		zero = calloc(1, m->value_size > 8 ? m->value_size : 8);
		if (!zero)
			return;
		none.key = zero;
		none.value = zero;
		ents = &none;
		n = 1;
	}
	if (n > 1)
		qsort_r(ents, n, sizeof(*ents), cmp_entry, (void *)m);
	/* the last top entries, the largest; bpftrace's stats() and 0.27's
	 * tseries() ignore top and div (its avg() does not) */
	if (m->agg == PLYC_A_STATS || m->agg == PLYC_A_TSERIES)
		top = 0, div = 1;
	/* a tseries' rows end at the map's latest interval, whichever key has it */
	for (e = 0, last = 0; m->agg == PLYC_A_TSERIES && e < n; e++)
		if (plyc_bt_tseries_latest(m, ents[e].value) > last)
			last = plyc_bt_tseries_latest(m, ents[e].value);
	plyc_bt_tseries_set_last(last);
	if (top && n > top) {
		ents += n - top;
		n = top;
	}
	plyc_bt_set_div(div);
	if (plyc_rt.json) {
		if (n)
			print_json(fp, m, ents, n);
		else if (agg_of(m)->group == BT_STATS && plyc_bt_version->json_empty_stats)
			print_json_empty(fp, m);
	} else {
		print_text(fp, m, ents, n);
	}
	plyc_bt_set_div(1);
	plyc_bt_tseries_set_last(0);
	free(zero);
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
	struct plyc_textbuf b;
	int i;

	if (!plyc_text_open(&b))
		return;
	for (i = 0; i < n; i++)
		fprintf(b.fp, "%s%s", i ? (sep ? sep : " ") : "", args[i]);
	if (!plyc_text_close(&b))
		message(fp, "join", b.s, b.len, 1);
	free(b.s);
}

void plyc_bt_attached(FILE *fp, int nprobes)
{
	const char *s = nprobes == 1 ? "" : "s";

	if (plyc_rt.json && plyc_bt_version->attached_on_stderr)
		fprintf(fp, "{\"type\": \"attached_probes\", \"count\": %d, \"data\": {\"probes\": %d}}\n",
			nprobes, nprobes);
	else if (plyc_rt.json)
		fprintf(fp, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n", nprobes);
	else if (plyc_bt_version->attached_on_stderr)
		fprintf(stderr, "Attached %d probe%s\n", nprobes, s);
	else
		fprintf(fp, "Attaching %d probe%s...\n", nprobes, s);
}

void plyc_bt_exit_banner(FILE *fp)
{
	/* in text; in JSON too, as two "" lines, in 0.17 */
	if (!plyc_rt.json || !plyc_bt_version->json_compact)
		fputs("\n\n", fp);
}

/* --- the style ---------------------------------------------------------- */

static void value(FILE *fp, const struct plyc_type *t, const void *data)
{
	plyc_bt_value(fp, t, data, 8);
}

static const char *ksym_text(uint64_t addr, char *buf, size_t len)
{
	return plyc_ksym_bt(addr, 0, buf, len);
}

static int cmp_map_name(const void *a, const void *b)
{
	const struct plyc_map *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* bpftrace's exit: two newlines, then every map by name */
/* Every map as the exit prints them */
static void dump_maps(const struct plyc_program *prog)
{
	const struct plyc_map **order;
	int i;

	order = calloc((size_t)prog->nmaps + 1, sizeof(*order));
	if (!order) {
		fprintf(stderr, "%s: error: out of memory\n", prog->name);
		return;
	}
	for (i = 0; i < prog->nmaps; i++)
		order[i] = &prog->maps[i];
	qsort(order, (size_t)prog->nmaps, sizeof(*order), cmp_map_name);
	exiting = 1;
	for (i = 0; i < prog->nmaps; i++)
		plyc_map_dump(order[i]);
	exiting = 0;
	free(order);
}

static void at_exit(const struct plyc_program *prog, int ended)
{
	(void)ended;
	plyc_bt_exit_banner(plyc_rt.out);
	if (!prog->no_exit_maps)
		dump_maps(prog);
}

/* SIGUSR1: 0.17 prints the maps as at exit, without its banner; 0.27
 * prints nothing (the self probes are its answer) */
static void on_usr1(const struct plyc_program *prog)
{
	if (plyc_bt_version->usr1_prints_maps)
		dump_maps(prog);
}

const struct plyc_output_ops plyc_output_bpftrace = {
	.value = value,
	.print = plyc_bt_print,
	.ksym_text = ksym_text,
	.json_printf = plyc_bt_json_printf,
	.map_print = plyc_bt_map_print_top,
	.attached = plyc_bt_attached,
	.at_exit = at_exit,
	.catches_usr1 = 1,
	.on_usr1 = on_usr1,
	.once_only_ends = 1,
	.silent_after_exit = 1,
	.iteration_through_exit = 1,
};
