/* bpftrace's output (0.27's, or 0.17's: struct plyc_bt_version), for
 * tracers built with its style: values
 * (values/btvalue.c), hist and lhist rows (output/btrows.c), map dumps,
 * print(), "Attached N probes" and -f json's objects
 * (output/bpftrace.c, its plyc_output_ops), cat() and system()
 * (output/btevents.c). What matches and what doesn't is in
 * docs/bpftrace.md, "Output". */
#ifndef PLYC_BTOUT_H
#define PLYC_BTOUT_H

#include <stdint.h>
#include <stdio.h>

#include "plyc_rt.h"

/* What bpftrace 0.27 prints otherwise than 0.17, a member each (each a row
 * of docs/bpftrace.md's "Against bpftrace 0.27"). A tracer prints as the
 * version it was built for (`plyc build --bpftrace-output`, its style):
 * plyc_output_use points plyc_bt_version at that version's table, and
 * the printers read it, never the style. */
struct plyc_bt_version {
	/* "Attached N probes" on stderr, and a "count" member in -f json's
	 * attached_probes object (0.17: "Attaching N probes..." on stdout) */
	int attached_on_stderr;
	/* a map with no entries at exit or in print() prints nothing (0.17: a
	 * blank line; a key-less count() never written or cleared, `@c: 0`) */
	int empty_map_silent;
	/* print() of a key-less map holding nothing (never written, deleted,
	 * cleared) prints its value type's zero, `@x: 0`, `@s: `, `@t: (0, )`,
	 * but a hist's, lhist's or tseries' nothing (0.17: a blank line, but
	 * count()'s `@c: 0`) */
	int print_empty_zero;
	/* what follows a hist's or lhist's key: ":" (0.17: ": ") */
	const char *hist_colon;
	/* stats() as `{ .count = N, .average = N, .total = N }` and avg() and
	 * stats() maps ended by one newline (0.17: `count N, average N,
	 * total N`, and a blank line after the map) */
	int stats_braced;
	/* an lhist bucket holding one value labelled `[v]` (0.17: `[v, v+1)`) */
	int lhist_single;
	/* the indent of a stack's frames in a map key (0.17: 4; in values 8) */
	int key_stack_indent;
	/* -f json: no blank lines before the exit dump, hist buckets joined
	 * by "," (0.17: two "" lines, ", ") */
	int json_compact;
	/* a bool printed true/false (0.17 has none: 1/0, the comparison's value) */
	int bool_words;
	/* printf's %s and print() of a kernel or script enum value: its
	 * enumerator's name (0.17: its number) */
	int enum_names;
	/* -f json: buf() as an array of its bytes, macaddr() and strftime()
	 * values quoted, an integer a double cannot hold exactly as a string
	 * (0.17: an escaped string; unquoted, not JSON; its number) */
	int json_typed;
	/* -f json: an avg() or stats() map with no entries, at exit or in
	 * print(), is `{"type": "stats", "data": {"@m": {}}}` (0.17: nothing) */
	int json_empty_stats;
	/* cat() of a file it cannot open: `ERROR: failed to open file 'F'
	 * (why)`, no JSON event; system(): the command's output and a newline,
	 * nothing and an error when it exits non-zero (0.17: `'F': why` and
	 * an empty "cat" object; the output as it is, whatever the exit) */
	int events_027;
	/* a stack with no frames (kstack in a uprobe) is its newline alone
	 * (0.17: nothing) */
	int empty_stack_newline;
	/* SIGUSR1 prints every map as at exit, without the two blank lines
	 * (0.27: it runs the script's self:signal:SIGUSR1 probes, nothing else) */
	int usr1_prints_maps;
};

extern const struct plyc_bt_version plyc_bt_027, plyc_bt_017;
/* the tracer's (plyc_output_use; 0.27's until it runs) */
extern const struct plyc_bt_version *plyc_bt_version;

/* One value in bpftrace's text; stacks with frames indented by `indent`
 * (8 in values, 4 in map keys). */
void plyc_bt_value(FILE *fp, const struct plyc_type *t, const void *data, int indent);
void plyc_bt_key_text(FILE *fp, const struct plyc_type *t, const void *data);
/* The same as bpftrace writes it in JSON (strings, symbols, stacks and
 * buffers quoted; pointers as bare 0x... as bpftrace does). */
void plyc_bt_json_value(FILE *fp, const struct plyc_type *t, const void *data);
/* An integer in JSON: its number, or a string where a double cannot hold
 * it exactly and the version says so (json_typed). */
void plyc_bt_json_int(FILE *fp, uint64_t x, int is_signed);
/* A string's bytes up to a NUL or n, escaped as bpftrace's JSON does. */
void plyc_bt_json_escape(FILE *fp, const char *s, size_t n);
/* Text written into b.fp (when open) between plyc_text_open (plyc_rt.h)
 * and this, then escaped into fp as one JSON string's contents (a key's
 * members, a quoted value). */
void plyc_text_close_escaped(struct plyc_textbuf *b, FILE *fp);

/* Rows of a hist() value (PLYC_HIST_BUCKETS counts) and of an lhist()
 * value (buckets as lquantize's: [0] < min, [n - 1] >= max), text and
 * JSON; a histogram with no count prints no rows, "[]" in JSON. */
void plyc_bt_hist_rows(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_bt_hist_json(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_bt_lhist_rows(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_bt_lhist_json(FILE *fp, const struct plyc_map *m, const void *v);

/* A tseries() value (output/bttseries.c): its chart as bpftrace 0.27 draws
 * it, a blank line after ("<no data>" when its intervals reach back past
 * 0), and its JSON array of the stored intervals. Both end at the latest
 * interval set by plyc_bt_tseries_set_last (the map's, over its entries;
 * 0: each value's own, plyc_bt_tseries_latest). */
void plyc_bt_tseries_chart(FILE *fp, const struct plyc_map *m, const void *v);
void plyc_bt_tseries_json(FILE *fp, const struct plyc_map *m, const void *v);
uint64_t plyc_bt_tseries_latest(const struct plyc_map *m, const void *v);
void plyc_bt_tseries_set_last(uint64_t epoch);

/* One map, sorted as bpftrace sorts it, in its text or one JSON line
 * (plyc_rt.json). An empty map prints its blank line(s) in text and
 * nothing in JSON, as bpftrace does. */
void plyc_bt_map_print(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n);
/* The same for print(@map, top, div): only the last `top` entries (the
 * largest; 0: all), values and hist counts divided by div (1: as they are). */
void plyc_bt_map_print_top(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
			   uint32_t top, uint32_t div);
/* The div of the print in progress, for the kinds' printers; set for
 * the print by plyc_bt_map_print_top, 1 otherwise. */
uint32_t plyc_bt_div(void);
void plyc_bt_set_div(uint32_t div);

/* print(a) and print(a, b, ...) (a tuple): the text line or
 * {"type": "value", "data": ...}. */
void plyc_bt_print(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n);

/* printf's text as {"type": "printf", "data": "..."}. */
void plyc_bt_json_printf(FILE *fp, const char *text, size_t len);

/* time(fmt): local time by strftime(fmt) (NULL: "%H:%M:%S\n"), as it
 * is or {"type": "time", "data": "..."}. */
void plyc_bt_time(FILE *fp, const char *fmt);
/* join(args, sep): the n strings joined by sep (NULL: " ") and a newline,
 * or {"type": "join", "data": "..."}. */
void plyc_bt_join(FILE *fp, const char *const *args, int n, const char *sep);

/* buf()'s bytes (a u32 length, then up to size - 4 bytes) as printf's %r
 * (mode ' ': printable ASCII as is, the rest \xNN), %rx ('x': all \xNN)
 * and %rh ('h': hex pairs, spaced), as bpftrace 0.17 prints them. */
void plyc_bt_buf_format(FILE *fp, const void *data, size_t size, char mode);

/* printf's %gr: GFP flags by name, "GFP_KERNEL|__GFP_ZERO", as bpftrace
 * 0.27 prints them (values/gfp.c); bits no name covers in hex. Returns
 * buf, cut to len. */
#define PLYC_GFP_TEXT_LEN 1024
const char *plyc_bt_gfp_text(uint64_t flags, char *buf, size_t len);

/* text as it is, or {"type": TYPE, "data": "text"} (plyc_rt.json). */
void plyc_bt_message(FILE *fp, const char *type, const char *text, size_t len);

/* cat() and system()'s text, formatted into the FILE that act_begin
 * opens; act_end calls act with plyc_rt.out and the text. */
FILE *plyc_bt_act_begin(void);
void plyc_bt_act_end(FILE *fp, void (*act)(FILE *out, const char *text));

/* cat(): the named file's contents, at most $BPFTRACE_CAT_BYTES_MAX
 * bytes (10240), or bpftrace's error on stderr (btevents.c). */
void plyc_bt_cat(FILE *fp, const char *path);
/* system(): the command run by /bin/sh, its output printed (btevents.c). */
void plyc_bt_system(FILE *fp, const char *cmd);

/* "Attached N probes" (on stderr), or 0.17's "Attaching N probes...", or
 * its JSON object. */
void plyc_bt_attached(FILE *fp, int nprobes);

/* What bpftrace prints between the end of tracing and the exit dump. */
void plyc_bt_exit_banner(FILE *fp);

#endif
