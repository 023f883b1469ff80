/* plyc tracer runtime: the interface between a generated loader and the
 * hand-written C it links. The generated loader describes its maps and
 * events with the tables below; everything generic (formatting, map dumps,
 * symbols, JSON) lives in runtime-c/ and is compiled once per tracer.
 */
#ifndef PLYC_RT_H
#define PLYC_RT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* How a value is printed by default (print(), %v, map keys and values). */
enum plyc_kind {
	PLYC_K_INT,      /* integer of `size` bytes, signed if `is_signed` */
	PLYC_K_HEX,      /* pointer-like integer, printed <hex> as ply prints pointers */
	PLYC_K_STR,      /* char[size], NUL-terminated or full */
	PLYC_K_TIME,     /* u64 nanoseconds, printed as a duration */
	PLYC_K_WALLTIME, /* u64 CLOCK_MONOTONIC ns, printed HH:MM:SS.nnnnnnnnn local */
	PLYC_K_SYM,      /* kernel address, printed sym+off */
	PLYC_K_STACK,    /* s64 id in the stack map, printed one frame a line */
	PLYC_K_MEM,      /* size bytes, printed as a hex dump */
	PLYC_K_INET,     /* u64 family, u8 addr[16]: bpftrace's ntop(), "10.0.0.1" or "::1" */
	PLYC_K_USTACK,   /* u64: pid << 32 | the user stack's u32 id in the stack map */
	PLYC_K_USYM,     /* u64 address, u64 pid: bpftrace's usym(), named from the pid's mappings */
	PLYC_K_BUF,      /* u32 length, then size - 4 bytes: bpftrace's buf(), the first length printed */
	PLYC_K_TUPLE,    /* bpftrace's tuple: nfields members at their offsets, "(1, abc)";
			  * a record (named members): "{ .a = 1, .b = abc }" */
	/* bpftrace's values printed as text the tracer makes (plyc_value_text): */
	PLYC_K_USERNAME, /* a uid, printed as its name in /etc/passwd */
	PLYC_K_MAC,      /* six bytes (of a u64), printed "01:AB:7F:5A:FF:00" */
	PLYC_K_STRFTIME, /* bpf_ktime_get_ns() ns, printed by plyc_rt.time_formats[width] */
	PLYC_K_ERRNO,    /* an errno (its sign dropped), printed as 0.27's strerror() (values/errnos.c) */
	PLYC_K_SIGNAL,   /* a signal number, printed as 0.27's signal_name() (values/signals.c) */
	PLYC_K_BOOL,     /* current bpftrace's bool: an integer printed true or false */
	PLYC_K_ENUM,     /* a script's enum: printed by its name in plyc_rt.enums[width] */
	PLYC_K_SYSCALL,  /* a syscall number, printed as its name on the target (values/syscalls.c) */
	PLYC_K_CGROUP_PATH, /* a cgroup id, printed as its paths (values/cgroups.c); filter plyc_rt.time_formats[width] */
};

struct plyc_field;

struct plyc_type {
	enum plyc_kind kind;
	uint32_t size;
	uint8_t is_signed;
	uint16_t width;    /* PLYC_K_INT: minimum width, right-aligned, 0 for none.
			    * ply pads pid/kpid to 5, uid/gid to 4, cpu to 2.
			    * Stacks: at most PLYC_STACK_LIMIT() frames (0: all
			    * PLYC_STACK_DEPTH), printed in PLYC_STACK_MODE(). */
	uint32_t nfields;  /* PLYC_K_TUPLE: its members */
	const struct plyc_field *fields;
};

/* A PLYC_K_TUPLE's width: a kernel array held by value, printed as
 * bpftrace prints one, "[1,2]"; a kernel struct of no members, "{}". */
#define PLYC_TUPLE_ARRAY 1
#define PLYC_TUPLE_RECORD 2

#define PLYC_STACK_LIMIT(t) ((t)->width & 0xff)
#define PLYC_STACK_MODE(t) ((t)->width >> 8)

/* bpftrace's stack modes: kstack(perf), ustack(raw, 5) */
enum plyc_stack_mode {
	PLYC_STACK_BPFTRACE,   /* "sym+off" a line, indented */
	PLYC_STACK_PERF,       /* "\taddr sym+off (module)" */
	PLYC_STACK_RAW,        /* the address in hex, no symbol */
};

/* One member of a packed record (map key, event payload). */
struct plyc_field {
	struct plyc_type type;
	uint32_t offset;
	const char *name;  /* a record's member (bpftrace's `(a=1)`), else NULL */
};

/* How a map's values merge, print and export: one entry each in
 * maps/aggregations.c (plyc_agg.h). */
enum plyc_agg {
	PLYC_A_NONE,      /* plain map: value is `value` as is */
	PLYC_A_COUNT,     /* u64 */
	PLYC_A_SUM,       /* s64 or u64 per value.is_signed */
	PLYC_A_MIN,       /* struct plyc_minmax */
	PLYC_A_MAX,       /* struct plyc_minmax */
	PLYC_A_AVG,       /* struct plyc_avg */
	PLYC_A_QUANTIZE,  /* u64 buckets[64]; signed args: bucket 63 counts < 0 */
	PLYC_A_LQUANTIZE, /* u64 buckets[nbuckets]: [0] < min, [last] >= max */
	PLYC_A_LOG2,      /* u64 buckets[64] in bcc's log2 layout: [0] is 0, [i] is [2^(i-1), 2^i) */
	PLYC_A_STATS,     /* struct plyc_avg: bpftrace's stats(), count, average and total */
	PLYC_A_HIST,      /* u64 buckets[65], bpftrace's hist(): [0] < 0, [1] 0, [i] [2^(i-2), 2^(i-1)) */
	PLYC_A_TSERIES,   /* struct plyc_ts_slot[ts_intervals], bpftrace's tseries() */
};

/* tseries()'s most intervals (plyc/aggregations.py, TSERIES_MAX_INTERVALS) */
#define PLYC_TS_MAX_INTERVALS 1000

/* tseries()'s aggregators (plyc/aggregations.py, TSERIES_AGGREGATORS) */
enum plyc_ts_agg {
	PLYC_TS_LAST,     /* the last value stored in the interval */
	PLYC_TS_AVG,
	PLYC_TS_MAX,
	PLYC_TS_MIN,
	PLYC_TS_SUM,
};

/* Whose output a tracer prints, chosen when it is built: ply's (the
 * default), bpftrace 0.27's (a .bt script's) or bpftrace 0.17's (`plyc
 * build --bpftrace-output 0.17`; output/bpftrace.c, docs/bpftrace.md
 * "Output"). The runtime prints through the style's operations
 * (plyc_style.h); only their selection reads this. */
enum plyc_style {
	PLYC_STYLE_PLY,
	PLYC_STYLE_BPFTRACE,
	PLYC_STYLE_BPFTRACE017,
};

/* BPF-side value layouts of the aggregations that need more than one word.
 * Per-CPU maps hand these out once per CPU; a CPU that never stored has
 * `set == 0`. */
struct plyc_minmax {
	int64_t value;
	uint64_t set;
};

struct plyc_avg {
	int64_t sum;
	uint64_t count;
};

/* One interval of a tseries(): its value, what the aggregator keeps beside
 * it (the last value's time, avg's count, min/max's "set") and the
 * interval's number (TAI ns / interval; 0: never used). */
struct plyc_ts_slot {
	int64_t value;
	uint64_t meta;
	uint64_t epoch;
};

#define PLYC_QUANTIZE_BUCKETS 64
#define PLYC_HIST_BUCKETS 66

struct plyc_map {
	const char *name;          /* as printed: "@", "@name", "rx" */
	enum plyc_agg agg;
	uint32_t nkeys;
	const struct plyc_field *keys;
	uint32_t key_size;         /* bytes of the BPF key */
	struct plyc_type value;    /* the aggregated argument's / plain value's type */
	uint32_t value_size;       /* bytes of one BPF value (one CPU's for per-CPU maps) */
	int percpu;
	int grow;                  /* may be allocated as keys come (mapmem.c) */
	/* lquantize: min, the last bucket's lower bound (max, or the last
	 * multiple of step below it), step (plyc_lq_bound) */
	int64_t lq_min, lq_max, lq_step;
	uint32_t nbuckets;         /* quantize/lquantize */
	int64_t ts_interval;       /* tseries(): ns per interval, */
	uint32_t ts_intervals;     /* the intervals kept, */
	uint32_t ts_agg;           /* and enum plyc_ts_agg */
	int fd;                    /* filled in by the loader after load */
	const char *const *key_names;  /* a label name per key (--metrics), or NULL: k0, k1, ... */
};

struct plyc_output_ops;

/* One of an enum's names; a table of them ends with name NULL. */
struct plyc_enumerator {
	int64_t value;
	const char *name;
};

/* Process-wide output state, set up by the loader's main(). */
struct plyc_rt {
	FILE *out;
	int json;                  /* -f json */
	const struct plyc_output_ops *output;   /* the style's (plyc_output_use) */
	int utf8;                  /* draw histogram bars with Unicode blocks */
	int stack_fd;              /* stack map, or -1 */
	int64_t mono_to_real_ns;   /* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	int64_t tai_to_real_ns;    /* CLOCK_REALTIME - CLOCK_TAI at start, whole seconds (tseries()) */
	const char *const *time_formats;   /* strftime() values' formats, by their type's width */
	const struct plyc_enumerator *const *enums;   /* the script's enums, by their type's width */
	int fmt_errno;             /* the first formatted write that failed (plyc_fmt_failed), or 0 */
};

extern struct plyc_rt plyc_rt;

/* Call first: out = stdout (unless already set), utf8 from LC_ALL /
 * LC_CTYPE / LANG (ASCII when PLYC_ASCII is set to anything but "0"),
 * mono_to_real_ns from the clocks. Leaves json and stack_fd alone. */
void plyc_rt_init(void);

/* The script's printf conversions (and cat()'s, system()'s, errorf()'s):
 * fprintf and snprintf whose failure is kept (plyc_fmt_failed), where the C
 * library's own only returns -1: EOVERFLOW for a width or precision whose
 * text passes INT_MAX bytes, ENOMEM in a memory stream. Functions of their
 * own so that the compiler, which cannot see the widths, leaves their
 * result to be checked here (gcc's -Wformat-overflow). */
int plyc_fprintf(FILE *fp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int plyc_snprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A printf width or precision, as written in the script: in a function of
 * its own, which the compiler does not see into, so that it leaves a
 * field of any size (up to INT_MAX) to plyc_fprintf's check. */
int plyc_fmt_int(int v);
/* A formatted write failed with err: the first is kept in
 * plyc_rt.fmt_errno, and the output then fails as a failed write does:
 * the run stops, the tracer exits 1 saying why (io/outfile.c). */
void plyc_fmt_failed(int err);
/* Text formatted into memory (cat()'s, printf's JSON line, a key's
 * members...): plyc_text_open gives the stream, b->fp, NULL when it could
 * not be made; plyc_text_close closes it: 0 with the text in b->s (never
 * NULL) and b->len, or -1. Either failure is kept (plyc_fmt_failed), as a
 * failed write's. The caller frees b->s, whatever became of it. */
struct plyc_textbuf {
	char *s;
	size_t len;
	FILE *fp;
};
FILE *plyc_text_open(struct plyc_textbuf *b);
int plyc_text_close(struct plyc_textbuf *b);

/* Default format of one value, no trailing newline: the style's
 * (plyc_style.h; bpftrace's is plyc_bt_value). */
void plyc_print_value(FILE *fp, const struct plyc_type *t, const void *data);
/* The same padded whole to width (printf's %Ns of a tuple; left: %-Ns). */
void plyc_print_value_padded(FILE *fp, int left, int width, const struct plyc_type *t, const void *data);
/* print()'s line of n values (n >= 1), text or -f json: the style's. */
void plyc_print(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n);
/* ply's (values/plyvalue.c). */
void plyc_ply_value(FILE *fp, const struct plyc_type *t, const void *data);
/* A value as one JSON value, as ply writes it. */
void plyc_json_value(FILE *fp, const struct plyc_type *t, const void *data);
/* A JSON string literal, with escapes. */
void plyc_json_string(FILE *fp, const char *s, size_t maxlen);
size_t plyc_utf8_len(const unsigned char *s, size_t n);   /* valid UTF-8 sequence, or 0 */
/* Untrusted text (a file name, a comm) for a terminal: up to its NUL or
 * maxlen, printable ASCII and valid UTF-8 as they are, control characters
 * (C0, DEL, C1) and bytes that are no UTF-8 as \xNN, as bpftrace's %r
 * writes a buffer's, so that escape sequences in it can't drive the terminal. */
void plyc_text_string(FILE *fp, const char *s, size_t maxlen);
/* The same into buf (len bytes; 4 * maxlen + 1 holds any text), NUL-ended;
 * buf returned. */
const char *plyc_text_escape(const char *s, size_t maxlen, char *buf, size_t len);
/* What a ply printf's %s writes of a string: plyc_text_escape's text, or
 * with -f json the bytes as they are (the JSON line escapes them). */
const char *plyc_printf_text(const char *s, size_t maxlen, char *buf, size_t len);
int plyc_is_zero(const void *p, size_t n);   /* every byte 0 */
/* Whether name matches a probe's wildcard: fnmatch(pat, name, 0) == 0 in
 * the C locale (*, ?, [...] with classes, \ escapes), byte by byte (core/glob.c). */
int plyc_glob_match(const char *pat, const char *name);

/* ply's duration format of `time` values: "   0ns", "1.02us", "12.3ms",
 * " 512us", "1.05 s", "  17 M", ... Returns snprintf's result. */
int plyc_fmt_duration(char *buf, size_t len, int64_t ns);
void plyc_print_duration(FILE *fp, int64_t ns);
/* a CLOCK_MONOTONIC time as local HH:MM:SS.nnnnnnnnn */
void plyc_print_walltime(FILE *fp, int64_t mono_ns);

/* Dump one map as the style does (output/dump.c): in ply's, a blank
 * line, "NAME:", one line per entry sorted by value then key (or one JSON
 * line), nothing for an empty map. Returns the number of entries, or a
 * negative errno. */
int plyc_map_dump(const struct plyc_map *m);
/* bpftrace's print(@map, top, div) (its style only; ply's prints it all):
 * the `top` largest entries (0: all), values divided by div. */
int plyc_map_dump_top(const struct plyc_map *m, uint32_t top, uint32_t div);
/* Delete every entry. Returns 0 or a negative errno. */
int plyc_map_clear(const struct plyc_map *m);
/* Set every entry's value to zero, keeping the keys (bpftrace's zero()).
 * Returns 0 or a negative errno. */
int plyc_map_zero(const struct plyc_map *m);
/* Every key and its merged value, into two malloc'd arrays of *n records
 * (key_size and value_size bytes each). 0 or a negative errno. */
int plyc_map_collect(const struct plyc_map *m, char **keys, char **vals, size_t *n);

/* The BPF-free halves of plyc_map_dump, for the loader's print(@map)
 * and for unit tests. An entry's value is one merged value of
 * m->value_size bytes (the layout of one CPU's value). */
struct plyc_entry {
	const void *key;
	const void *value;
};

/* Sort ents and print them to fp as plyc_map_dump does (in ply's style:
 * by value then key, ply's text, or one JSON line if plyc_rt.json;
 * nothing when n == 0). */
void plyc_map_print(FILE *fp, const struct plyc_map *m,
		    struct plyc_entry *ents, size_t n);

/* Merge the per-CPU values of one key (ncpus values, each padded to a
 * multiple of 8 bytes, as bpf_map_lookup_elem returns them) into dst. */
void plyc_map_merge(const struct plyc_map *m, void *dst,
		    const void *percpu, int ncpus);

/* The BPF side's per-CPU stats array (plyc_stats in plyc.bpf.h): rows of
 * 1 + nmaps counters. Row FULL: [0] events lost to a full ring buffer,
 * [1 + i] updates map i dropped because it was full (-E2BIG).
 * Row BUSY: [0] stacks that collided with another in the stack map
 * (-EEXIST), [1 + i] updates of map i the kernel refused because the map
 * was in use on that CPU (-EBUSY). Row OTHER: [0] stacks not stored for
 * another reason (a full stack map), [1 + i] updates refused otherwise.
 * Row NOMEM: [1 + i] new keys of map i the kernel could not allocate
 * (-ENOMEM). */
enum { PLYC_STAT_ROW_FULL, PLYC_STAT_ROW_BUSY, PLYC_STAT_ROW_OTHER, PLYC_STAT_ROW_NOMEM, PLYC_STAT_ROWS };

static inline uint32_t plyc_stat_index(int nmaps, int row, int slot)
{
	return (uint32_t)(row * (1 + nmaps) + slot);
}

/* One counter of the per-CPU stats map (fd), summed over the CPUs; 0 when
 * there is no map or no such slot. */
uint64_t plyc_stat_sum(int fd, uint32_t index);

/* Tell on stderr ("NAME: warning: ...") what the probes could not store,
 * by reason, from the stats map. Returns 1 when it makes the run fail:
 * a full map always; a busy or otherwise refused update unless
 * keep_going (-k); stack collisions never (the event is counted, its
 * stack is not known). */
int plyc_report_refusals(const char *name, int stats_fd, const struct plyc_map *maps, int nmaps,
			 int keep_going);

/* Kernel symbol for addr as ply prints it: "sym" at the symbol's own
 * address, else "sym+off" with a decimal offset, or "<ffffffff81234567>"
 * when unknown, into buf (PLYC_KSYM_LEN is always enough).
 * /proc/kallsyms is read the first time a symbol is needed. */
#define PLYC_KSYM_LEN 2048   /* a demangled C++ name (std:: templates) runs to a kilobyte and more */
const char *plyc_ksym(uint64_t addr, char *buf, size_t len);

/* The same as bpftrace prints it: "sym", or with offset "sym+off" (also
 * "+0"); "0x..." when unknown. */
const char *plyc_ksym_bt(uint64_t addr, int offset, char *buf, size_t len);

/* An ntop() value (PLYC_K_INET) as text: inet_ntop of its address in
 * its family; "" for a family other than AF_INET and AF_INET6, as
 * bpftrace prints it. Returns buf. */
#define PLYC_INET_LEN 48
const char *plyc_inet_text(const void *data, char *buf, size_t len);

/* A value of a kind plyc_kind_is_text() names as text (btvalues.c);
 * other kinds as an unsigned number. Returns buf. */
#define PLYC_VALUE_TEXT_LEN 8192   /* a cgroup_path() of many hierarchies' paths */
const char *plyc_value_text(const struct plyc_type *t, const void *data, char *buf, size_t len);

/* The kinds every output prints through plyc_value_text(): the one list,
 * so a new text kind is added here and in btvalues.c only. */
static inline int plyc_kind_is_text(enum plyc_kind kind)
{
	switch (kind) {
	case PLYC_K_USERNAME:
	case PLYC_K_MAC:
	case PLYC_K_STRFTIME:
	case PLYC_K_ERRNO:
	case PLYC_K_SIGNAL:
	case PLYC_K_BOOL:
	case PLYC_K_ENUM:
	case PLYC_K_SYSCALL:
	case PLYC_K_CGROUP_PATH:
		return 1;
	default:
		return 0;
	}
}

/* A syscall number's name on the tracer's architecture (bpftrace's
 * syscall_name()), "Unknown syscall" for a number the table lacks
 * (values/syscalls.c). */
const char *plyc_syscall_name(long nr);

/* An errno's text as bpftrace 0.27 prints it (strerror()), the same with
 * every C library (values/errnos.c). */
const char *plyc_errno_text(int32_t err);

/* A signal number's text as bpftrace 0.27 prints it (signal_name()), the
 * same with every C library (values/signals.c); buf holds a numbered one. */
const char *plyc_signal_text(int32_t sig, char *buf, size_t len);

/* bpftrace's cgroup_path(id, filter): "name:/path" for each mounted cgroup
 * hierarchy whose name the glob `filter` matches and that has the id,
 * joined by ',' (values/cgroups.c). Returns buf. */
const char *plyc_cgroup_path(uint64_t id, const char *filter, char *buf, size_t len);

/* printf's %s of a kernel address, as the style prints it: plyc_ksym, or
 * bpftrace's ksym(). */
const char *plyc_ksym_text(uint64_t addr, char *buf, size_t len);

/* (Re)load the symbol cache from a kallsyms-format file. Only text
 * symbols (t/T) are kept. Returns the number of symbols, or a negative
 * errno (-EPERM when every address reads as 0: no CAP_SYSLOG). */
int plyc_ksyms_load(const char *path);

/* Kernel stacks: the BPF stack map (plyc_rt.stack_fd) must have values of
 * PLYC_STACK_DEPTH u64 instruction pointers. */
#define PLYC_STACK_DEPTH 127

/* Read stack `id` into ips (zero-filled past the last frame).
 * Returns 0 or a negative errno. */
int plyc_stack_read(int64_t id, uint64_t ips[PLYC_STACK_DEPTH]);
/* ply's layout: a newline, then "\tsym+off\n" per frame up to the first 0
 * or n frames. */
void plyc_print_frames(FILE *fp, const uint64_t *ips, size_t n);
/* plyc_stack_read + plyc_print_frames; "<STACKID%d>" if it can't be read. */
void plyc_print_stack(FILE *fp, int64_t stack_id);
/* Stack `id` of a stack of at most `limit` frames (kstack(n), ustack(n):
 * the map plyc_stacks_N; 0 is the full plyc_stacks). */
int plyc_stack_read_limit(int64_t id, unsigned int limit, uint64_t ips[PLYC_STACK_DEPTH]);
struct bpf_object;
/* After load: the stack maps' fds (plyc_stacks, plyc_stacks_N). */
void plyc_stacks_find(struct bpf_object *obj);

/* User symbols (usyms.c), in bpftrace's text: "name+off" (`offset`), then
 * " (module)", or " ([unknown])" without a symbol (`module`); without one,
 * the address as 0x..., 0 as "0". Read from pid's mappings now. */
const char *plyc_usym_bt(uint32_t pid, uint64_t addr, int offset, int module, char *buf, size_t len);

/* Whether /proc is the tracer's own PID namespace's (its /proc/self is
 * getpid()): a /proc mounted outside the namespace (unshare --pid without
 * --mount-proc) names other processes by the namespace's ids (rt.c). */
int plyc_proc_is_ours(void);

/* A C++ name (Itanium ABI, "_Z...") demangled into out as the C++
 * library's demangler prints it: 0, or -1 where it is no mangled name,
 * one the demangler does not know, or longer than len (symbols/demangle.c). */
int plyc_demangle(const char *mangled, char *out, size_t len);
/* Whether user symbols are demangled (bpftrace's cpp_demangle, default on). */
extern int plyc_cpp_demangle;
/* What follows a string marked cut (PLYC_STR_CUT) when it fills its size
 * but its NUL: bpftrace 0.27's str_trunc_trailer, ".." by default. */
extern const char *plyc_str_trailer;
/* A PLYC_K_STR's width: one of size - 1 bytes was cut where it was read
 * (bpftrace 0.27's strings of max_strlen under 1024, plyc/types.py's cut). */
#define PLYC_STR_CUT 1
/* The string at s (size bytes, NUL-terminated or full) into buf as it
 * prints: followed by plyc_str_trailer when cut says it was cut. */
const char *plyc_str_text(const char *s, size_t size, int cut, char *buf, size_t len);
/* A usym() value (PLYC_K_USYM: address, pid) as bpftrace prints it. */
const char *plyc_usym_text(const void *data, char *buf, size_t len);
/* A user stack's frames of process pid in a mode (enum plyc_stack_mode),
 * a line each, up to the first 0 or n; bpftrace's are indented. */
void plyc_print_ustack(FILE *fp, uint32_t pid, const uint64_t *ips, size_t n, int mode, int indent);

/* User symbols as the printers reach them: usyms.c's three above, in
 * plyc_usyms_elf. A tracer links them (and the C++ demangler, and the ELF
 * reading they do) only when its program has a ustack or usym value: its
 * generated description names plyc_usyms_elf then, and the loader points
 * plyc_usyms at it. Until then plyc_usyms is symbols/usymsref.c's, whose
 * functions stop the tracer with an internal error rather than print a
 * value they cannot name. */
struct plyc_usyms {
	const char *(*bt)(uint32_t pid, uint64_t addr, int offset, int module, char *buf, size_t len);
	const char *(*text)(const void *data, char *buf, size_t len);
	void (*print_stack)(FILE *fp, uint32_t pid, const uint64_t *ips, size_t n, int mode, int indent);
};
extern const struct plyc_usyms plyc_usyms_elf;
extern const struct plyc_usyms *plyc_usyms;

/* Unaligned-safe loads of a `size`-byte integer (1, 2, 4 or 8) as found in
 * packed records; plyc_load_int sign-extends. */
static inline uint64_t plyc_load_uint(const void *p, uint32_t size)
{
	uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64 = 0;

	switch (size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, size < 8 ? size : 8); return u64;
	}
}

static inline int64_t plyc_load_int(const void *p, uint32_t size)
{
	int8_t s8; int16_t s16; int32_t s32; int64_t s64 = 0;

	switch (size) {
	case 1: memcpy(&s8, p, 1); return s8;
	case 2: memcpy(&s16, p, 2); return s16;
	case 4: memcpy(&s32, p, 4); return s32;
	default: memcpy(&s64, p, size < 8 ? size : 8); return s64;
	}
}

#endif
