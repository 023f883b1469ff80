/* The tracer's output style: ply's or bpftrace's (0.27 or 0.17), with or without
 * bcc's periodic report: one set of operations chosen once at start-up
 * from what the program records (its style, its report) by
 * plyc_output_use (output/select.c). The rest of the runtime prints
 * through them and never asks which style it is. Each style is in
 * output/: ply.c, bpftrace.c, bccreport.c; the value formats they print
 * with are values/'s. */
#ifndef PLYC_STYLE_H
#define PLYC_STYLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plyc_rt.h"

struct plyc_program;

struct plyc_output_ops {
	/* print()'s and printf %v's text of one value, no trailing newline */
	void (*value)(FILE *fp, const struct plyc_type *t, const void *data);
	/* print(a, b, ...): its n values as one line, text or -f json */
	void (*print)(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n);
	/* printf %s of a kernel address */
	const char *(*ksym_text)(uint64_t addr, char *buf, size_t len);
	/* -f json: one printf's text as a line of its own */
	void (*json_printf)(FILE *fp, const char *text, size_t len);
	/* One map's merged entries (n may be 0: the style says what an empty
	 * map shows), sorted and printed; top and div are print(@map, top,
	 * div)'s (0 and 1: every entry as it is). */
	void (*map_print)(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
			  uint32_t top, uint32_t div);
	/* before BEGIN runs: the banner (NULL: none, and -q is refused) */
	void (*attached)(FILE *fp, int nprobes);
	/* the periodic report (NULL: none); 1 when it was the last one */
	int (*report)(const struct plyc_program *prog);
	/* after END: the maps' dump; ended: the report ended the run */
	void (*at_exit)(const struct plyc_program *prog, int ended);
	/* SIGUSR1 caught (else its default action), and what it prints after
	 * the self probes ran (NULL: nothing) */
	int catches_usr1;
	void (*on_usr1)(const struct plyc_program *prog);
	/* bpftrace's run: a program of BEGIN and END only ends after BEGIN */
	int once_only_ends;
	/* bpftrace's event printer: nothing the probes send after exit() */
	int silent_after_exit;
	/* 0.27's iterator: its text is all printed, exit() or not (its
	 * bpf_seq_printf output is read whole; plyc's printf are events) */
	int iteration_through_exit;
};

extern const struct plyc_output_ops plyc_output_ply;
extern const struct plyc_output_ops plyc_output_bpftrace;
extern const struct plyc_output_ops plyc_output_bccreport;

/* bcc's periodic report has only .report and .at_exit: they take the
 * place of the style's at_exit, the rest is the style's. */

/* ply's print(), map print and JSON printf (output/ply.c). */
void plyc_ply_print(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n);
void plyc_ply_map_print(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
			uint32_t top, uint32_t div);
void plyc_ply_json_printf(FILE *fp, const char *text, size_t len);

/* Use ops, the operations of a program of this style, and report's
 * (NULL: none) in place of its exit dump: plyc_rt.output. Called once,
 * first thing in main(), with the operations the generated loader names:
 * a tracer links only the style it prints (a table named nowhere is
 * left out of the link). */
void plyc_output_use(const struct plyc_output_ops *ops, enum plyc_style style,
		     const struct plyc_output_ops *report);

/* plyc_rt.h's plyc_print_value, plyc_print, plyc_ksym_text, plyc_map_print,
 * plyc_map_dump and plyc_map_dump_top print through the chosen
 * operations (output/dump.c). */

#endif
