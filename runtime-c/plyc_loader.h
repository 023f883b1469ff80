/* plyc tracer loader: what a generated NAME.c hands to plyc_main(). The
 * generated file holds only tables (maps, probes, event printers); the
 * order of work (args, open, parameters, load, attach, poll, END, dump,
 * clean-up) is plyc_main()'s, in loader.c. */
#ifndef PLYC_LOADER_H
#define PLYC_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plyc_rt.h"
#include "plyc_report.h"

struct plyc_output_ops;

struct plyc_provider;

/* One probe of the script: what every provider's has; the rest is the
 * provider's own (data: a struct its providers/NAME.h declares). */
/* bpftrace's config missing_probes: what a probe whose target the device
 * lacks does (probes/attach.c). */
enum plyc_missing {
	PLYC_MISSING_ERROR,        /* the tracer stops, naming it */
	PLYC_MISSING_WARN,         /* left out, with a warning */
	PLYC_MISSING_IGNORE,       /* left out silently */
};

struct plyc_probe {
	const char *prog;          /* BPF program (function) name */
	const char *spec;          /* as written */
	int line;                  /* script line of the spec */
	const char *where;         /* "script.ply:LINE", or where a front end's probe came from */
	const struct plyc_provider *provider;
	const void *data;
};

/* A tracepoint field whose offset is read from the device's format file. */
struct plyc_tpslot {
	int probe;
	const char *field;
	uint32_t size;
	int is_int;                /* an integer: read at whatever size the device has */
	uint32_t bytes;            /* ... as a value of its declared C type's size */
	int is_signed;             /* ... and sign */
};

/* A value the tracer finds on the device at start-up (dconst.c). */
enum plyc_dconst_kind {
	PLYC_DC_KADDR, PLYC_DC_CGROUPID, PLYC_DC_NCPUS,
	PLYC_DC_UADDR,             /* a symbol's link-time address in `binary` */
	PLYC_DC_UADDR_FIXED,       /* ... which must not be position-independent */
};

struct plyc_dconst {
	enum plyc_dconst_kind kind;
	const char *name;          /* the symbol, the cgroup's path */
	const char *where;         /* "script:LINE", for errors */
	const char *binary;        /* uaddr: the uprobe's binary (plyc_resolve_binary) */
};

/* The bounds of a numeric $N, checked when the tracer starts: bpftrace's
 * unroll($N), whose count bpftrace checks when it compiles (1 to 100). */
struct plyc_arg_bound {
	int index;                 /* N of $N */
	long long lo, hi;
	int line, col;             /* the construct's place in the script */
	const char *what;          /* its name, "unroll" */
};

/* A BPF helper a construct of the script calls, which older kernels lack
 * (needs.c). */
struct plyc_need {
	const char *prog;          /* the program calling it */
	int helper;                /* BPF_FUNC_* */
	const char *helper_name;
	const char *since;         /* the release that brought it */
	int line;                  /* the construct's script line */
	const char *what;          /* the construct, as the error names it */
};

/* A named option of the script (bpftrace's getopt()): runtime-c/load/options.c. */
/* UINT: a default of zero or more, INT: a negative one (0.27 types them so) */
enum plyc_opt_kind { PLYC_OPT_BOOL, PLYC_OPT_INT, PLYC_OPT_UINT, PLYC_OPT_STR };

struct plyc_opt {
	const char *name;
	const char *desc;
	enum plyc_opt_kind kind;
	const char *dflt;          /* the default, as it would be given */
};

struct plyc_program {
	const char *name;
	const char *script;
	const char *version;
	const unsigned char *obj;
	size_t obj_size;
	const unsigned char *btf;  /* kernel BTF built in (plyc build --btf), for kernels without */
	size_t btf_size;
	struct plyc_map *maps;
	const char *const *map_cnames;
	int nmaps;
	const struct plyc_probe *probes;
	int nprobes;
	const struct plyc_tpslot *slots;
	int nslots;
	const uint16_t *linemap;   /* script line of each line of NAME.bpf.c */
	int nlines;
	int nargs;                 /* highest $N the script reads */
	const unsigned char *arg_numeric;   /* per $N: 1 if read as a number (parsed strictly) */
	size_t params_size, off_target, off_pid_filter, off_arg_num, off_arg_str, arg_str_size, off_tp_off, off_tp_size, off_kwrap;
	size_t off_start_ns, off_arg_count;   /* the start time (CLOCK_MONOTONIC ns), how many arguments */
	size_t off_tai_offset;     /* CLOCK_TAI - CLOCK_BOOTTIME in ns (bpftrace's nsecs(sw_tai)) */
	const char *const *time_formats;   /* strftime() values' formats (plyc_rt.time_formats) */
	const struct plyc_enumerator *const *enums;   /* the script's enums (plyc_rt.enums) */
	int args_optional;         /* a $N not given reads 0 or "" (bpftrace's), else an error */
	const struct plyc_arg_bound *arg_bounds;   /* checked at start (bpftrace's unroll($N)) */
	int narg_bounds;
	enum plyc_missing missing_probes;   /* a probe whose target is missing: an error, or left out */
	const struct plyc_dconst *dconsts;   /* values found on the device, set at off_dconst */
	int ndconsts;
	size_t off_dconst;
	int verbose;               /* set by plyc_main from -v */
	long target_pid;           /* -p PID, for uprobes; -1 for every process */
	long target_task;          /* -p PID or -c's command (forked, held), for events on one
				    * process's threads (watchpoints); -1: none */
	int (*handle_event)(const void *data, size_t size);
	const struct plyc_report *report;   /* a periodic report instead of the dump at exit */
	long default_pid;          /* -p when none is given (a front end's built-in one) */
	enum plyc_style style;     /* whose output: ply's or bpftrace's (plyc build --output-style) */
	/* that style's operations and the report's (NULL: none), named by the
	 * generated loader so that a tracer links only the output it prints */
	const struct plyc_output_ops *output, *report_output;
	const struct plyc_need *needs;
	int nneeds;
	const int *loop_lines;     /* script line of each while loop (plyc_loopcap's slots) */
	int nloops;
	int no_exit_maps;          /* no map dump at exit (bpftrace's print_maps_on_exit=false) */
	int no_cpp_demangle;       /* user symbols as the symbol table has them (bpftrace's cpp_demangle=false) */
	const struct plyc_usyms *usyms;   /* &plyc_usyms_elf when the program has a ustack or usym value */
	const char *str_trailer;   /* after a cut string (bpftrace's str_trunc_trailer) */
	const char *no_target_warning;   /* said at start without -c or -p (bpftrace's cpid: 0), or NULL */
	const struct plyc_opt *opts;   /* the script's named options, set at off_opt_num/off_opt_str */
	int nopts;
	size_t off_opt_num, off_opt_str, opt_str_size;
};

int plyc_main(struct plyc_program *prog, int argc, char **argv);

/* The map holding global variable `var` of data section `secname`
 * (".rodata", ".bss") and the variable's offset in it, or NULL. */
struct bpf_object;
struct bpf_map *plyc_global_var(struct bpf_object *obj, const char *secname, const char *var,
				size_t *offset);
/* Before load: let edit() change the `len` bytes of .rodata variable `var`
 * (set_params' parameters, the output layer's flag). 0, -ENOENT (no such
 * variable), -ENOMEM, -errno from libbpf, or what edit() returned. */
int plyc_edit_rodata(struct bpf_object *obj, const char *var, size_t len,
		     int (*edit)(char *bytes, const void *arg), const void *arg);

/* Called by generated event printers. */
/* exit(code): a code outside 0-255 ends the run with 255, told at exit. */
void plyc_request_exit(long long code);
FILE *plyc_text_begin(void);
void plyc_text_end(FILE *fp);

/* tracefs.c */
const char *plyc_tracefs(void);
/* Whether this kernel has kind's probes ("kprobe", "uprobe"): through the
 * perf PMU (4.17+) or tracefs's KIND_events, as libbpf tries them. */
int plyc_probe_pmu_available(const char *kind);
/* Offset and size of a field in group/event's format; 0, or -errno. */
int plyc_tp_field(const char *group, const char *event, const char *field,
		  uint32_t *offset, uint32_t *size);
int plyc_tp_exists(const char *group, const char *event);
/* Calls fn for every event of group matching the glob; returns the count
 * of matches or -errno. */
int plyc_tp_glob(const char *group, const char *glob,
		 int (*fn)(const char *group, const char *event, void *arg), void *arg);

/* tpfields.c: where each tracepoint slot's field is on the device (from
 * its format files; NULL once the reason is told), and the programs'
 * field loads rewritten to match, before load (0, or 1 once told). */
struct bpf_object;
struct plyc_tploc {
	uint32_t off, size;
};
const struct plyc_tploc *plyc_tp_resolve(const struct plyc_program *prog);
int plyc_tp_patch(const struct plyc_program *prog, struct bpf_object *obj);

/* dconst.c: each of prog->dconsts' values, found on this device (0, or 1
 * once the reason is told). */
int plyc_dconst_resolve(const struct plyc_program *prog, uint64_t *values);

/* readhelpers.c: the BPF object's image to open: prog->obj, or a copy whose
 * bpf_probe_read_kernel/_user(_str) calls became bpf_probe_read(_str),
 * where the kernel lacks them (before 5.5) or PLYC_NO_PROBE_READ_KERNEL is
 * set. NULL when out of memory. */
const unsigned char *plyc_read_helpers(const struct plyc_program *prog, size_t *size);

/* needs.c: each helper of prog->needs asked of the kernel for its
 * program's type, before load; 0, or -1 once the lacking ones are told. */
int plyc_check_needs(const struct plyc_program *prog, struct bpf_object *obj);

/* pidns.c: the tracer's PID namespace set in the BPF object's .rodata
 * (left 0 in the initial one, or where the kernel lacks the helper: said);
 * -p's pid (or 0) in a namespace nested in it is said to match nothing;
 * 0, or -1 once told. */
int plyc_pidns_prepare(struct bpf_object *obj, const char *name, int verbose, long pid);

/* The script's named options (options.c): listed in -h; taken out of the
 * positional arguments into values (one per option, NULL: the default):
 * 0, 1 when wrong (said), 2 for --help; set in the parameters. */
void plyc_opts_usage(const struct plyc_program *prog, FILE *fp);
int plyc_opts_parse(const struct plyc_program *prog, char **args, int *nargs, const char **values);
void plyc_opts_fill(const struct plyc_program *prog, const char *const *values, char *params);
/* mapmem.c: the keyed aggregations plyc_map.grow allows allocated as keys
 * come where the kernel can (before load); the maps' locked kernel memory,
 * on stderr (-v). */
int plyc_maps_prepare(const struct plyc_program *prog, struct bpf_object *obj, int verbose);
void plyc_maps_report_memory(const char *name, struct bpf_object *obj, const char *when);

/* loopcaps.c: at exit, a warning for each while loop that plyc's cap
 * stopped (its line, how often). */
void plyc_report_loop_caps(const struct plyc_program *prog, struct bpf_object *obj);

/* once.c: how BEGIN and END run on this kernel (BPF_PROG_TEST_RUN, or a
 * uprobe on the tracer itself), settled before load; then running every
 * probe of one kind, in order. 0, or -1 once told. */
/* Whether this kernel runs a raw tracepoint program by BPF_PROG_TEST_RUN
 * (5.10; BEGIN and END's way; their fallback is a uprobe). */
int plyc_test_run_works(void);
/* --info: what of the kernel the tracer uses here, and its fallbacks, on
 * fp (whose errors its caller checks). */
void plyc_info(const struct plyc_program *prog, const char *btf, FILE *fp);
int plyc_once_prepare(const struct plyc_program *prog, struct bpf_object *obj);
int plyc_once_run(const struct plyc_program *prog, struct bpf_object *obj, const struct plyc_provider *which);
/* Whether BEGIN and END are the program's only probes */
int plyc_once_only(const struct plyc_program *prog);
/* Whether the program has a probe of that provider. */
int plyc_has_probes_of(const struct plyc_program *prog, const struct plyc_provider *which);

/* child.c: the -c CMD process, started held in a process group of its own
 * and released once attached. Failures are told on stderr, as NAME: error. */
/* 0 if cmd's program is found as plyc_child_start would run it (told if not) */
int plyc_child_check(const char *name, const char *cmd);
int plyc_child_start(const char *name, const char *cmd);   /* pid, or -1 */
int plyc_child_release(void);            /* 0 once the command runs, or -1 */
int plyc_child_reap(int *status);        /* 1 if it has exited */
void plyc_child_kill(void);              /* its whole group; also at exit() */

#endif
