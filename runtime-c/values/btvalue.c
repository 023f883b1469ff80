/* bpftrace's text and JSON of one value (plyc_btout.h): the bottom
 * layer its output style (output/bpftrace.c) prints with, and ply's for
 * the kinds only bpftrace's scripts make (user stacks, usym(), buf()).
 * Written from bpftrace's observed output; docs/bpftrace.md, "Output". */
#define _GNU_SOURCE		/* open_memstream */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_btout.h"

static void bt_int(FILE *fp, const struct plyc_type *t, const void *data)
{
	if (t->is_signed)
		fprintf(fp, "%" PRId64, plyc_load_int(data, t->size));
	else
		fprintf(fp, "%" PRIu64, plyc_load_uint(data, t->size));
}

/* bpftrace's versions' output (plyc_btout.h): the printers of output/ and
 * of this layer read the tracer's (plyc_output_use sets it). */
const struct plyc_bt_version plyc_bt_027 = {
	.attached_on_stderr = 1,
	.empty_map_silent = 1,
	.print_empty_zero = 1,
	.hist_colon = ":",
	.stats_braced = 1,
	.lhist_single = 1,
	.key_stack_indent = 8,
	.json_compact = 1,
	.bool_words = 1,
	.enum_names = 1,
	.json_typed = 1,
	.json_empty_stats = 1,
	.events_027 = 1,
	.empty_stack_newline = 1,
};

const struct plyc_bt_version plyc_bt_017 = {
	.hist_colon = ": ",
	.key_stack_indent = 4,
	.usr1_prints_maps = 1,
};

const struct plyc_bt_version *plyc_bt_version = &plyc_bt_027;

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
 * stack in a uprobe) prints nothing at all, as in bpftrace 0.17, or the
 * newline alone, as 0.27. */
static void bt_stack(FILE *fp, const struct plyc_type *t, const void *data, int indent)
{
	uint64_t ips[PLYC_STACK_DEPTH], v = plyc_load_uint(data, 8);
	int user = t->kind == PLYC_K_USTACK;
	int64_t id = user ? (int32_t)(uint32_t)v : (int64_t)v;
	char sym[PLYC_KSYM_LEN];
	size_t i;

	if (id < 0 || plyc_stack_read_limit(id, PLYC_STACK_LIMIT(t), ips)) {
		if (plyc_bt_version->empty_stack_newline)
			fputc('\n', fp);
		return;
	}
	fputc('\n', fp);
	if (user) {
		plyc_usyms->print_stack(fp, (uint32_t)(v >> 32), ips, PLYC_STACK_DEPTH, PLYC_STACK_MODE(t), indent);
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

/* A record (named members) as bpftrace 0.27 prints it: "{ .a = 1, .b = x }",
 * in JSON {"a": 1, "b": "x"} (blanks after ':' and ','). */
static void bt_record(FILE *fp, const struct plyc_type *t, const void *data, int indent, int json)
{
	uint32_t i;

	if (!t->nfields) {      /* a kernel struct of no members */
		fputs("{}", fp);
		return;
	}
	fputs(json ? "{" : "{ ", fp);
	for (i = 0; i < t->nfields; i++) {
		const void *v = (const char *)data + t->fields[i].offset;

		if (i)
			fputs(", ", fp);
		if (json) {
			fputc('"', fp);
			plyc_bt_json_escape(fp, t->fields[i].name, strlen(t->fields[i].name));
			fputs("\": ", fp);
			plyc_bt_json_value(fp, &t->fields[i].type, v);
		} else {
			fprintf(fp, ".%s = ", t->fields[i].name);
			plyc_bt_value(fp, &t->fields[i].type, v, indent);
		}
	}
	fputs(json ? "}" : " }", fp);
}

/* A tuple as bpftrace prints it: "(1, abc, (2, x))", or in JSON
 * [1,"abc",[2,"x"]] (no blanks); a record as above; a kernel array
 * "[1,2]", in JSON too. */
static void bt_tuple(FILE *fp, const struct plyc_type *t, const void *data, int indent, int json)
{
	int array = t->width == PLYC_TUPLE_ARRAY;
	uint32_t i;

	if ((t->nfields && t->fields[0].name) || t->width == PLYC_TUPLE_RECORD) {
		bt_record(fp, t, data, indent, json);
		return;
	}
	fputc(json || array ? '[' : '(', fp);
	for (i = 0; i < t->nfields; i++) {
		const void *v = (const char *)data + t->fields[i].offset;

		if (i)
			fputs(json || array ? "," : ", ", fp);
		if (json)
			plyc_bt_json_value(fp, &t->fields[i].type, v);
		else
			plyc_bt_value(fp, &t->fields[i].type, v, indent);
	}
	fputc(json || array ? ']' : ')', fp);
}

void plyc_bt_value(FILE *fp, const struct plyc_type *t, const void *data, int indent)
{
	char sym[PLYC_KSYM_LEN];

	if (plyc_kind_is_text(t->kind)) {
		char text[PLYC_VALUE_TEXT_LEN];

		fputs(plyc_value_text(t, data, text, sizeof(text)), fp);
		return;
	}
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
		if (t->width == PLYC_STR_CUT && strnlen(data, t->size) + 1 >= t->size)
			fputs(plyc_str_trailer, fp);	/* cut where it was read (0.27's trailer) */
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
		fputs(plyc_usyms->text(data, sym, sizeof(sym)), fp);
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
	case PLYC_K_TUPLE:
		bt_tuple(fp, t, data, indent, 0);
		break;
	default:	/* plyc_kind_is_text()'s kinds: above */
		break;
	}
}

/* A map key's member as bpftrace 0.27 writes it in a JSON key: as text,
 * but a tuple "(2,x)" and a record "{.a=1,.b=x}" without blanks. */
void plyc_bt_key_text(FILE *fp, const struct plyc_type *t, const void *data)
{
	int rec = t->kind == PLYC_K_TUPLE && ((t->nfields && t->fields[0].name) || t->width == PLYC_TUPLE_RECORD);
	int array = t->kind == PLYC_K_TUPLE && t->width == PLYC_TUPLE_ARRAY;
	uint32_t i;

	if (t->kind != PLYC_K_TUPLE) {
		plyc_bt_value(fp, t, data, 4);
		return;
	}
	fputc(rec ? '{' : array ? '[' : '(', fp);
	for (i = 0; i < t->nfields; i++) {
		if (i)
			fputc(',', fp);
		if (rec)
			fprintf(fp, ".%s=", t->fields[i].name);
		plyc_bt_key_text(fp, &t->fields[i].type, (const char *)data + t->fields[i].offset);
	}
	fputc(rec ? '}' : array ? ']' : ')', fp);
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

void plyc_text_close_escaped(struct plyc_textbuf *b, FILE *fp)
{
	if (!plyc_text_close(b))
		plyc_bt_json_escape(fp, b->s, b->len);
	free(b->s);
}

/* Text kinds are JSON strings, but bpftrace 0.17 writes macaddr() and
 * strftime() values unquoted, as their text (not JSON: its quirk, kept),
 * a bool is JSON's true or false (and an enum its number, below). */
static int is_quoted(const struct plyc_type *t)
{
	if (plyc_kind_is_text(t->kind)) {
		if (t->kind == PLYC_K_MAC || t->kind == PLYC_K_STRFTIME)
			return plyc_bt_version->json_typed;	/* 0.27 quotes them, 0.17 not */
		return t->kind != PLYC_K_BOOL && t->kind != PLYC_K_ENUM;
	}
	return t->kind == PLYC_K_STR || t->kind == PLYC_K_SYM || t->kind == PLYC_K_STACK ||
	       t->kind == PLYC_K_USTACK || t->kind == PLYC_K_USYM ||
	       t->kind == PLYC_K_MEM || t->kind == PLYC_K_BUF || t->kind == PLYC_K_WALLTIME || t->kind == PLYC_K_INET ||
	       (t->kind == PLYC_K_INT && !is_int_size(t->size));
}

/* Whether a double holds x exactly: its set bits span at most 53. */
static int double_exact(uint64_t x)
{
	while (x && !(x & 1))
		x >>= 1;
	return x < ((uint64_t)1 << 53);
}

void plyc_bt_json_int(FILE *fp, uint64_t x, int is_signed)
{
	uint64_t mag = is_signed && (int64_t)x < 0 ? -x : x;
	const char *q = plyc_bt_version->json_typed && !double_exact(mag) ? "\"" : "";

	if (is_signed)
		fprintf(fp, "%s%" PRId64 "%s", q, (int64_t)x, q);
	else
		fprintf(fp, "%s%" PRIu64 "%s", q, x, q);
}

void plyc_bt_json_value(FILE *fp, const struct plyc_type *t, const void *data)
{
	struct plyc_textbuf b;
	uint32_t i, n;

	if (t->kind == PLYC_K_INT && is_int_size(t->size)) {
		plyc_bt_json_int(fp, t->is_signed ? (uint64_t)plyc_load_int(data, t->size)
						  : plyc_load_uint(data, t->size), t->is_signed);
		return;
	}
	if (t->kind == PLYC_K_BUF && plyc_bt_version->json_typed) {
		/* 0.27: an array of the bytes (a u32 length, then them) */
		n = (uint32_t)plyc_load_uint(data, 4);
		n = n < t->size - 4 ? n : t->size - 4;
		fputc('[', fp);
		for (i = 0; i < n; i++)
			fprintf(fp, "%s%u", i ? "," : "", ((const unsigned char *)data)[4 + i]);
		fputc(']', fp);
		return;
	}
	if (t->kind == PLYC_K_TUPLE) {
		bt_tuple(fp, t, data, 8, 1);
		return;
	}
	if (t->kind == PLYC_K_HEX) {    /* a pointer: its number, as bpftrace 0.27 writes it */
		plyc_bt_json_int(fp, plyc_load_uint(data, t->size), 0);
		return;
	}
	if (t->kind == PLYC_K_ENUM) {   /* bpftrace 0.27 writes an enum value's number */
		fprintf(fp, "%" PRId64, plyc_load_int(data, t->size));
		return;
	}
	if (!is_quoted(t)) {
		plyc_bt_value(fp, t, data, 8);
		return;
	}
	fputc('"', fp);
	if (plyc_text_open(&b))
		plyc_bt_value(b.fp, t, data, 8);
	plyc_text_close_escaped(&b, fp);
	fputc('"', fp);
}
