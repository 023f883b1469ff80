/* plyc_main(): the tracer's life, in libbpf-tools order, as its phases
 * (each a function at the end of this file): arguments (options, libbpf's
 * log hook, root, --btf; or --info and --list, which end there), start
 * (-o's folder, --metrics, signals, -c's command or -p's process), open
 * (targets resolved, parameters set), load, attach (-o's file, BEGIN, the
 * probes, the command let go), poll, end (probes stopped, END, the dump,
 * detach, what was lost) and teardown (everything let go, the exit
 * status). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"
#include "plyc_attach.h"
#include "plyc_providers.h"
#include "plyc_metrics.h"
#include "plyc_verifier.h"
#include "plyc_output.h"
#include "plyc_outfile.h"
#include "plyc_style.h"

struct options {
	const char *cmd;
	long pid;
	double duration;
	int json;
	const char *outfile;
	int keep_going;
	int verbose;
	const char *btf;
	char **args;
	int nargs;
	const char *metrics;       /* --metrics [ADDR:]PORT */
	const char *metrics_prefix;
	int quiet;                 /* -q: no "Attaching N probes..." (bpftrace's style) */
	const char **opt_values;   /* the script's named options given (plyc_opts_parse) */
	int list;                  /* --list: what the probes resolve to here, then exit */
	int dry_run;               /* --dry-run: load, attach, detach, exit (bpftrace 0.27's) */
	int info;                  /* --info: the kernel's features and the fallbacks taken */
};

static volatile sig_atomic_t stopping;
static int exit_code;
static int exit_requested;
static long long exit_asked;	/* exit()'s value, when outside 0-255 */
static const struct plyc_program *P;
/* bpftrace prints nothing its probes sent after exit() (its event printer
 * stops there): what other CPUs, or the same probe firing again before
 * the detach, sent behind the exit event is dropped, until END runs. */
static int after_exit;
static int iterating;      /* attaching: an iterator's run is its iteration (providers/iter.c) */

/* libbpf's messages: kept for translating a failed load, shown with -v. */
static char *libbpf_log;
static size_t libbpf_log_len;
static int verbose;

/* Every message whole: a failed load's verifier log comes as one message
 * of any length, and its reason and source line are at the end. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int n;
	va_list copy;

	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n > 0) {
		char *grown = realloc(libbpf_log, libbpf_log_len + (size_t)n + 1);

		if (grown) {
			va_copy(copy, ap);
			vsnprintf(grown + libbpf_log_len, (size_t)n + 1, fmt, copy);
			va_end(copy);
			libbpf_log_len += (size_t)n;
			libbpf_log = grown;
		}
	}
	if (verbose || level == LIBBPF_WARN)
		return verbose ? vfprintf(stderr, fmt, ap) : 0;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* SIGUSR1: the self probes and the style's answer, run from the poll loop */
static volatile sig_atomic_t usr1_pending;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_pending = 1;
}

/* Nothing to do but interrupt the poll, so a finished -c child is noticed
 * at once rather than at the next poll timeout. Also SIGPIPE's: a write to
 * a closed pipe then fails with EPIPE, which ends the run (outfile.c), and
 * unlike SIG_IGN a handler is not inherited by what system() and -c run. */
static void on_child(int sig)
{
	(void)sig;
}

/* An exit status is 0-255: a value outside is told at exit and becomes
 * 255, a failure (exit(256) would otherwise be a success). */
void plyc_request_exit(long long code)
{
	if (!exit_requested) {
		exit_requested = 1;
		after_exit = plyc_rt.output && plyc_rt.output->silent_after_exit;
		exit_code = code >= 0 && code <= 255 ? (int)code : 255;
		if (code != exit_code)
			exit_asked = code;
	}
	stopping = 1;
}

/* printf output: straight to the output in text mode; in JSON mode
 * collected and written as one line by the style (ply's {"printf": "..."},
 * bpftrace's {"type": "printf", "data": "..."}). */
static struct plyc_textbuf text;

FILE *plyc_text_begin(void)
{
	return plyc_rt.json ? plyc_text_open(&text) : plyc_rt.out;
}

void plyc_text_end(FILE *fp)
{
	if (!plyc_rt.json || !fp)
		return;
	if (!plyc_text_close(&text))
		plyc_rt.output->json_printf(plyc_rt.out, text.s, text.len);
	free(text.s);
	text.s = NULL;
}

static void usage(FILE *fp)
{
	int bt = plyc_rt.output->attached != NULL, i;

	fprintf(fp,
		"Usage: %s [-c CMD] [-p PID] [-d SECONDS] [-f text|json] [-o FILE] [-k] [-v]%s\n"
		"       %*s [--metrics [ADDR:]PORT] [--metrics-prefix NAME]\n"
		"       %*s [--btf FILE] [--list] [--dry-run] [--info] [-h] [--version] [ARG...]\n"
		"\n"
		"Tracer built by plyc %s from %s. Probes:\n",
		P->name, bt ? " [-q]" : "", (int)strlen(P->name), "", (int)strlen(P->name), "", P->version,
		P->script);
	for (i = 0; i < P->nprobes; i++)
		fprintf(fp, "  %s: %s\n", P->probes[i].where, P->probes[i].spec);
	fprintf(fp,
		"\n"
		"Options:\n"
		"  -c CMD       run CMD once the probes are attached; trace until it exits\n"
		"%s"
		"  -d SECONDS   stop after this long\n"
		"  -f FORMAT    text (%s format, default) or json (one object per line)\n"
		"  -o FILE      write output to FILE\n"
		"  -k           keep going when events are lost\n"
		"%s"
		"  -v           show libbpf's and the loader's diagnostics\n"
		"  --btf FILE   kernel BTF to use instead of the running kernel's\n"
		"  --list       print what the probes attach to on this kernel (wildcards resolved), one a\n"
		"               line as bpftrace -l prints them, and exit\n"
		"  --dry-run    load, verify and attach every probe, detach and exit 0 (BEGIN and END\n"
		"               not run, nothing printed), or exit 1 with each probe's reason\n"
		"  --info       print what of this kernel the tracer uses, and the fallbacks it takes\n"
		"  --metrics [ADDR:]PORT\n"
		"               serve the aggregations to Prometheus at http://ADDR:PORT/metrics\n"
		"               while tracing (no ADDR: every IPv4 address; 127.0.0.1:PORT: local)\n"
		"  --metrics-prefix NAME\n"
		"               metric names start with NAME_ (default plyc_)\n"
		"  ARG...       the script's $1, $2, ...\n"
		"\n"
		"Examples:\n"
		"  %s -d 5            trace for five seconds\n"
		"  %s -c 'ls /tmp'    trace while a command runs\n",
		/* -p: bpftrace 0.27 filters every probe by it (frontends/bpftrace/pidfilter.py) */
		bt ? "  -p PID       trace only PID's events (uprobes and USDT attached to it;\n"
		     "               not interval probes nor iterators); stop when it exits\n"
		   : "  -p PID       $target is PID, uprobes attached to it only; stop when it exits\n",
		bt ? "bpftrace's" : "ply's", bt ? "  -q           no \"Attaching N probes...\"\n" : "", P->name, P->name);
	plyc_opts_usage(P, fp);
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", P->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* -p's process id: digits only (no sign, blank or suffix), not 0; 0 when
 * it is not one. Past the kernel's pid_max (or long's range) there is no
 * such process: -1, so that it is never truncated into another pid. */
static long parse_pid(const char *s)
{
	long max = 4194304, pid;
	FILE *fp;
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	pid = strtol(s, &end, 10);
	if (*end || pid == 0)
		return 0;
	fp = fopen("/proc/sys/kernel/pid_max", "re");
	if (fp) {
		if (fscanf(fp, "%ld", &max) != 1)
			max = 4194304;
		fclose(fp);
	}
	return errno || pid > max ? -1 : pid;
}

/* A $N beyond INT64_MAX, up to UINT64_MAX, as its 64 bits (0 where it is
 * negative or past them): a $N the script only prints as an unsigned
 * 64-bit number (arg_numeric 2), which reads the same bits either way. */
static uint64_t arg_wide(const char *s)
{
	unsigned long long v;

	if (strchr(s, '-'))
		return 0;
	errno = 0;
	v = strtoull(s, NULL, 0);
	return errno ? 0 : v;
}

/* $N the script reads as a number: a whole decimal, hex (0x) or octal
 * (0) integer of 64 bits, as bpftrace takes it; 0 or 1 once told. */
static int check_numeric_args(const struct options *o)
{
	int i;

	for (i = 0; i < P->nargs && i < o->nargs && P->arg_numeric; i++) {
		const char *s = o->args[i];
		char *end;

		if (!P->arg_numeric[i])
			continue;
		errno = 0;
		strtoll(s, &end, 0);
		/* strtoll() would skip leading blanks and read "" as 0 */
		if (!*s || isspace((unsigned char)*s) || *end)
			return fail("$%d is used as a number but given '%s'; try str($%d)", i + 1, s, i + 1);
		if (errno == ERANGE && P->arg_numeric[i] == 2 && arg_wide(s))
			continue;
		if (errno == ERANGE && arg_wide(s))
			return fail("$%d is used as a number but given '%s', out of range of a 64-bit signed "
				    "integer (one printed by %%lu or %%lx alone may be up to 2^64 - 1)", i + 1, s);
		if (errno == ERANGE)
			return fail("$%d is used as a number but given '%s', out of range of a 64-bit integer",
				    i + 1, s);
	}
	return 0;
}

/* A $N checked against bounds (unroll($N)): bpftrace refuses the script
 * when it compiles with the value it was given ("unroll minimum value is
 * 1"); the tracer refuses to start. A $N not given is 0. */
static int check_arg_bounds(const struct options *o)
{
	int i;

	for (i = 0; i < P->narg_bounds; i++) {
		const struct plyc_arg_bound *b = &P->arg_bounds[i];
		long long v = b->index <= o->nargs ? strtoll(o->args[b->index - 1], NULL, 0) : 0;

		if (v < b->lo || v > b->hi)
			return fail("%s:%d:%d: %s($%d): $%d is %lld, and %s's count must be %lld to %lld "
				    "(bpftrace: %s %s value is %lld)", P->script, b->line, b->col, b->what,
				    b->index, b->index, v, b->what, b->lo, b->hi, b->what,
				    v < b->lo ? "minimum" : "maximum", v < b->lo ? b->lo : b->hi);
	}
	return 0;
}

/* After --version or --help: 0 once written, else 1 and why (a closed
 * stdout was plugged with /dev/null, plug_std_fds()). */
static int stdout_closed;

/* -h, --version, --list, --info: printed whole, or the reader gone
 * (`| head -1`: EPIPE, SIGPIPE being ignored till the run's handler), which
 * ends them with 0 and nothing said, as a run (docs/output.md). */
static int stdout_written(void)
{
	errno = 0;
	if (stdout_closed)
		errno = EBADF;
	else if (!fflush(stdout) && !ferror(stdout))
		return 0;
	if (errno == EPIPE)
		return 0;
	return fail("writing output: %s", strerror(errno ? errno : EIO));
}

/* Why FILE cannot be the kernel BTF libbpf reads for --btf, or NULL: a
 * regular file that starts as BTF (0xeb9f, either byte order) or an ELF
 * file (a vmlinux) does. Opened without blocking (a FIFO would wait for a
 * writer), and checked here where the message can name it: libbpf's own
 * failure is "loading the BPF programs failed: Input/output error". */
static const char *btf_file_problem(const char *path)
{
	static char why[128];
	unsigned char magic[4];
	struct stat st;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return strerror(errno);
	if (fstat(fd, &st) || (S_ISREG(st.st_mode) && (n = read(fd, magic, sizeof(magic))) < 0)) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		close(fd);
		return why;
	}
	close(fd);
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? "is a directory, not a BTF file" :
		       S_ISFIFO(st.st_mode) ? "is a FIFO, not a BTF file" :
		       S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "is a device, not a BTF file" :
		       "is not a regular file";
	if (n >= 2 && ((magic[0] == 0x9f && magic[1] == 0xeb) || (magic[0] == 0xeb && magic[1] == 0x9f)))
		return NULL;
	if (n == 4 && !memcmp(magic, "\177ELF", 4))
		return NULL;
	return "is not kernel BTF (neither BTF nor an ELF vmlinux): give a copy of the kernel's "
	       "/sys/kernel/btf/vmlinux or its vmlinux";
}

static int parse_args(int argc, char **argv, struct options *o)
{
	/* --list, --dry-run and --info set their flag (getopt_long then returns 0) */
	const struct option longopts[] = {
		{ "btf", required_argument, NULL, 'B' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "metrics-prefix", required_argument, NULL, 'P' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "list", no_argument, &o->list, 1 },
		{ "dry-run", no_argument, &o->dry_run, 1 },
		{ "info", no_argument, &o->info, 1 },
		{ 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "+c:p:d:f:o:kqvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->cmd = optarg;
			break;
		case 'p':
			o->pid = parse_pid(optarg);
			if (!o->pid)
				return fail("-p takes a process id, not '%s'", optarg);
			if (o->pid < 0)
				return fail("-p %s: no such process (the kernel's pids go up to its pid_max)", optarg);
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (end == optarg || *end || errno || !isfinite(o->duration) || o->duration <= 0)
				return fail("-d takes a number of seconds more than 0, not '%s'", optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				o->json = 1;
			else if (strcmp(optarg, "text"))
				return fail("-f takes text or json, not '%s'", optarg);
			break;
		case 'o':
			if (!*optarg)
				return fail("-o takes a file name, not ''");
			o->outfile = optarg;
			break;
		case 'k':
			o->keep_going = 1;
			break;
		case 'q':
			if (!plyc_rt.output->attached)
				return fail("-q is for tracers of bpftrace scripts (ply's output has no banner)");
			o->quiet = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'B':
			o->btf = optarg;
			break;
		case 'M':
			o->metrics = optarg;
			break;
		case 'P':
			if (!plyc_metrics_prefix_ok(optarg))
				return fail("--metrics-prefix takes a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), not '%s'",
					    optarg);
			o->metrics_prefix = optarg;
			break;
		case 0:
			break;
		case 'V':
			printf("%s (plyc %s, from %s)\n", P->name, P->version, P->script);
			exit(stdout_written());
		case 'h':
			usage(stdout);
			exit(stdout_written());
		default:
			usage(stderr);
			return 1;
		}
	}
	if (o->cmd && o->pid)
		return fail("-c and -p can't be used together");
	o->args = argv + optind;
	o->nargs = argc - optind;
	/* bpftrace's getopt permutes its arguments, so a `--` after a
	 * positional one (`p1 -- 20`) ends its options and is no argument
	 * itself ($2 is 20); ours stops at the first positional argument and
	 * leaves that `--` among them: it is taken out here, once, as getopt
	 * takes out one */
	if (optind < 2 || strcmp(argv[optind - 1], "--"))
		for (c = 0; c < o->nargs; c++)
			if (!strcmp(o->args[c], "--")) {
				memmove(&o->args[c], &o->args[c + 1], (size_t)(o->nargs - c) * sizeof(*o->args));
				o->nargs--;
				break;
			}
	if (P->nopts) {
		o->opt_values = calloc((size_t)P->nopts, sizeof(*o->opt_values));
		if (!o->opt_values)
			return fail("out of memory");
		c = plyc_opts_parse(P, o->args, &o->nargs, o->opt_values);
		if (c == 2) {
			usage(stdout);
			exit(stdout_written());
		}
		if (c)
			return 1;
	}
	/* bpftrace (0.20 on) reads a $N it was not given as 0 or "" */
	if (o->nargs < P->nargs && !P->args_optional)
		return fail("the script reads $%d but %d argument%s given", P->nargs, o->nargs,
			    o->nargs == 1 ? " was" : "s were");
	return check_numeric_args(o) || check_arg_bounds(o);
}

/* Tell every probe to stop counting (plyc_stopped in .bss), so END and the
 * dump see the final state at once; detaching hundreds of tracepoints
 * takes the kernel seconds, and comes after. */
static void stop_probes(struct bpf_object *obj)
{
	size_t offset = 0, size;
	struct bpf_map *bss = plyc_global_var(obj, ".bss", "plyc_stopped", &offset);
	uint32_t key = 0, one = 1;
	char *value;

	if (!bss)
		return;
	size = bpf_map__value_size(bss);
	value = calloc(1, size);
	if (value && offset + sizeof(one) <= size && !bpf_map_lookup_elem(bpf_map__fd(bss), &key, value)) {
		memcpy(value + offset, &one, sizeof(one));
		bpf_map_update_elem(bpf_map__fd(bss), &key, value, 0);
	}
	free(value);
	/* A probe that passed the check before the flag was set may still be
	 * running (its CPU descheduled by a hypervisor, a loop of map
	 * updates): END and the dump would read its half-done work, a map
	 * cleared at its end printed full. BPF programs run inside RCU
	 * read-side sections, and a global membarrier is synchronize_rcu(),
	 * so after it every program that started before the flag has
	 * returned. Where the kernel refuses it (nohz_full, before 4.3) the
	 * window stays as it was. */
#ifdef SYS_membarrier
	syscall(SYS_membarrier, 1 /* MEMBARRIER_CMD_GLOBAL */, 0, 0);
#endif
}

static int fill_params(char *params, const struct options *o, uint64_t target);

struct params_arg {
	const struct options *o;
	uint64_t target;
};

static int edit_params(char *params, const void *arg)
{
	const struct params_arg *a = arg;

	return fill_params(params, a->o, a->target);
}

static int set_params(struct bpf_object *obj, const struct options *o, uint64_t target)
{
	struct params_arg a = { o, target };
	int err = plyc_edit_rodata(obj, "plyc_params", P->params_size, edit_params, &a);

	if (err == -ENOENT)
		return fail("the BPF object has no parameters (was it built by this plyc?)");
	if (err == -ENOMEM)
		return fail("out of memory");
	if (err < 0)
		return fail("cannot set the BPF program's parameters: %s", strerror(-err));
	return err;
}

static int fill_params(char *params, const struct options *o, uint64_t target)
{
	int i;

	memcpy(params + P->off_target, &target, sizeof(target));
	{
		uint64_t pid_filter = o->pid > 0 ? (uint64_t)o->pid : 0;

		memcpy(params + P->off_pid_filter, &pid_filter, sizeof(pid_filter));
	}
	{
		/* bpf_ktime_get_ns()'s clock, for bpftrace's `elapsed`. */
		struct timespec ts;
		uint64_t start = 0, count = (uint64_t)o->nargs;

		if (!clock_gettime(CLOCK_MONOTONIC, &ts))
			start = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		memcpy(params + P->off_start_ns, &start, sizeof(start));
		memcpy(params + P->off_arg_count, &count, sizeof(count));
	}
	{
		/* nsecs(sw_tai): the boot clock plus this offset, measured
		 * between two reads of the boot clock around one of TAI's */
		struct timespec b1, tai, b2;
		uint64_t offset = 0;

		if (!clock_gettime(CLOCK_BOOTTIME, &b1) && !clock_gettime(CLOCK_TAI, &tai) &&
		    !clock_gettime(CLOCK_BOOTTIME, &b2)) {
			uint64_t boot = ((uint64_t)b1.tv_sec * 1000000000ULL + (uint64_t)b1.tv_nsec) / 2 +
					((uint64_t)b2.tv_sec * 1000000000ULL + (uint64_t)b2.tv_nsec) / 2;

			offset = (uint64_t)tai.tv_sec * 1000000000ULL + (uint64_t)tai.tv_nsec - boot;
		}
		memcpy(params + P->off_tai_offset, &offset, sizeof(offset));
	}
	if (P->ndconsts) {
		/* kaddr(), cgroupid(), ncpus: found here, not where it was built */
		uint64_t *values = calloc((size_t)P->ndconsts, sizeof(*values));

		if (!values)
			return fail("out of memory");
		if (plyc_dconst_resolve(P, values)) {
			free(values);
			return 1;
		}
		memcpy(params + P->off_dconst, values, (size_t)P->ndconsts * sizeof(*values));
		free(values);
	}
	for (i = 0; i < P->nargs && i < o->nargs; i++) {   /* the others stay 0 and "" */
		int64_t num;

		errno = 0;
		num = strtoll(o->args[i], NULL, 0);
		if (errno == ERANGE && P->arg_numeric && P->arg_numeric[i] == 2)
			num = (int64_t)arg_wide(o->args[i]);

		memcpy(params + P->off_arg_num + i * sizeof(int64_t), &num, sizeof(num));
		strncpy(params + P->off_arg_str + i * P->arg_str_size, o->args[i], P->arg_str_size - 1);
	}
	if (P->nopts)
		plyc_opts_fill(P, o->opt_values, params);
	for (i = 0; i < P->nprobes; i++) {
		uint8_t wrapped = (uint8_t)plyc_probe_wrapped(i);

		memcpy(params + P->off_kwrap + i, &wrapped, 1);
	}
	/* Tracepoint fields: their offsets and sizes for the programs that read
	 * them with a helper; plyc_tp_patch() rewrites the others' loads. */
	if (P->nslots) {
		const struct plyc_tploc *loc = plyc_tp_resolve(P);

		if (!loc)
			return 1;
		for (i = 0; i < P->nslots; i++) {
			memcpy(params + P->off_tp_off + i * sizeof(uint32_t), &loc[i].off, sizeof(loc[i].off));
			memcpy(params + P->off_tp_size + i * sizeof(uint32_t), &loc[i].size, sizeof(loc[i].size));
		}
	}
	return 0;
}

/* A verifier rejection, told in the script's terms: the probe, the script
 * line of the last instruction it looked at, and the verifier's reason. */
static void explain_load_failure(struct bpf_object *obj, int err)
{
	const char *log = libbpf_log ? libbpf_log : "";
	const char *prog = NULL, *p;
	int cline = 0, sline = 0, i, failed;
	char reason[512] = "";

	/* "; source @ NAME.bpf.c:LINE" lines carry the C line. */
	for (p = log; (p = strstr(p, ".bpf.c:")); p++)
		cline = atoi(p + 7);
	if (cline > 0 && cline <= P->nlines)
		sline = P->linemap[cline - 1];
	/* The program that failed, not one libbpf only relocated before it
	 * (BEGIN's and END's are no probe's: then none is named). */
	failed = strstr(log, "': BPF program load failed") != NULL;
	for (i = 0; i < P->nprobes; i++) {
		char needle[160];

		snprintf(needle, sizeof(needle), "prog '%s'%s", P->probes[i].prog,
			 failed ? ": BPF program load failed" : "");
		if (strstr(log, needle))
			prog = P->probes[i].spec;
	}
	/* The verifier's reason is the last non-empty line before "processed". */
	p = strstr(log, "processed ");
	if (!p)
		p = strstr(log, "-- END PROG LOAD LOG --");
	if (p) {
		const char *end = p, *start;

		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		start = end;
		while (start > log && start[-1] != '\n')
			start--;
		snprintf(reason, sizeof(reason), "%.*s", (int)(end - start), start);
	}
	/* libbpf's "extern (func ksym) 'NAME': not found in kernel or module
	 * BTFs" (a kfunc) or "(var ksym) 'NAME': not found in kernel BTF" (a
	 * per-CPU variable): what this kernel lacks, by name */
	if ((p = strstr(log, " ksym) '")) && strstr(p, "': not found in kernel")) {
		const char *name = p + strlen(" ksym) '");
		int func = p - log >= 5 && !strncmp(p - 5, "(func", 5);

		fail("this kernel%s has no %s %.*s, which the script needs%s", func ? "" : "'s BTF",
		     func ? "kfunc" : "per-CPU variable", (int)strcspn(name, "'"), name,
		     strncmp(name, "bpf_task_from_pid'", 18) ? "" : " (comm(pid): Linux 6.2 or later)");
		return;
	}
	/* libbpf's words for a missing BTF ("failed to find valid kernel BTF",
	 * "Error loading vmlinux BTF"), not its debug line "loading kernel
	 * BTF '...': 0" of every load */
	if (strstr(log, "valid kernel BTF") || strstr(log, "vmlinux BTF")) {
		fail("this kernel has no BTF, which these probes need (CO-RE): rebuild the tracer with "
		     "`plyc build --btf FILE` (the target kernel's BTF, vmlinux or image), or run it with --btf FILE");
		return;
	}
	/* Older kernels (5.10) refuse a hash map's key over 512 bytes (their
	 * MAX_BPF_STACK) with E2BIG: a key holding a string of 0.27's default
	 * max_strlen (1024) is one. Said so, with the way out, rather than
	 * libbpf's bare "Argument list too long". */
	if (err == -E2BIG && (p = strstr(log, "': failed to create"))) {
		const char *name = p;
		char mname[128];
		struct bpf_map *m;

		/* libbpf's "map 'NAME': failed to create: ..." */
		while (name > log && name[-1] != '\'')
			name--;
		snprintf(mname, sizeof(mname), "%.*s", (int)(p - name), name);
		m = bpf_object__find_map_by_name(obj, mname);
		if (m && bpf_map__key_size(m) > 512) {
			fail("this kernel refuses map %s: its key is %u bytes, and this kernel's hash maps take at most 512 "
			     "(a string in a key is max_strlen bytes, 1024 by default as in bpftrace 0.27: build with a smaller "
			     "one, config = { max_strlen = 256 })", mname, bpf_map__key_size(m));
			return;
		}
	}
	/* EPERM is the missing capability; EACCES (like EINVAL) is the
	 * verifier refusing a program, whose reason is then in the log. */
	if (err == -EPERM && !reason[0]) {
		fail("permission denied loading BPF programs: run as root (needs CAP_BPF and CAP_PERFMON)");
		return;
	}
	if (!reason[0] && err == -EACCES)
		snprintf(reason, sizeof(reason), "the verifier refused it (its log has no reason)");
	if (sline)
		fprintf(stderr, "%s:%d: error: the kernel's verifier rejected the probe%s%s: %s\n", P->script, sline,
			prog ? " " : "", prog ? prog : "", reason[0] ? reason : strerror(-err));
	else if (err == -EACCES)
		fail("the kernel's verifier rejected the BPF program%s%s: %s", prog ? " of " : "", prog ? prog : "",
		     reason);
	else
		fail("loading the BPF programs failed: %s%s%s", strerror(-err), reason[0] ? ": " : "", reason);
	if (plyc_verifier_hint(log, reason, sizeof(reason)))
		fprintf(stderr, "%s: note: %s\n", P->name, reason);
	if (!verbose)
		fprintf(stderr, "%s: run with -v for the verifier's full log\n", P->name);
}

/* The kernel BTF built into the tracer, as a file libbpf can open, when
 * this kernel has none of its own (or PLYC_IGNORE_KERNEL_BTF is set, to
 * test exactly that). NULL: use the kernel's. */
static const char *embedded_btf(const struct plyc_program *prog, char *path, size_t len)
{
	size_t done = 0;
	int fd;

	if (!prog->btf_size || (!access("/sys/kernel/btf/vmlinux", R_OK) && !getenv("PLYC_IGNORE_KERNEL_BTF")))
		return NULL;
	fd = memfd_create("plyc-btf", 0);
	if (fd < 0)
		return NULL;
	while (done < prog->btf_size) {
		ssize_t n = write(fd, prog->btf + done, prog->btf_size - done);

		if (n <= 0) {
			close(fd);
			return NULL;
		}
		done += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	if (verbose)
		fprintf(stderr, "%s: using the kernel BTF built into the tracer (%zu bytes)\n", P->name, prog->btf_size);
	return path;
}

/* A process to watch for -p: a pidfd polls readable once it has exited,
 * zombie or not; without pidfds (before 5.3), fall back to kill(pid, 0). */
static int target_gone(long pid, int pidfd)
{
	if (pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

		return poll(&pfd, 1, 0) > 0;
	}
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* With -v and kernel.bpf_stats_enabled=1: what each probe cost per event. */
static void report_costs(struct bpf_object *obj)
{
	struct bpf_program *bp;

	bpf_object__for_each_program(bp, obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(bp);

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
			continue;
		fprintf(stderr, "%s: %s (%s): %llu runs, %.0f ns each\n", P->name, bpf_program__name(bp),
			bpf_program__section_name(bp), (unsigned long long)info.run_cnt,
			(double)info.run_time_ns / (double)info.run_cnt);
	}
}

/* -o's file is opened only after the load (plyc_out_open), so what can
 * be told of it without touching it is told first: a directory, or a
 * folder that isn't there. 0, or the errno that open() would give. */
static int outfile_can_be(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	char *dir;
	int err = 0;

	if ((err = plyc_out_refused(path)))
		return err;
	if (!stat(path, &st))
		return S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (errno != ENOENT)
		return errno;
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return ENOMEM;
	if (stat(dir, &st))
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	free(dir);
	return err;
}

/* Events go to the script's printers until the output fails: then
 * ring_buffer__poll() stops at once (a negative return), the run ends. */
static int on_event(const void *data, size_t size)
{
	if (plyc_out_error())
		return -ECANCELED;
	if (after_exit && !(iterating && plyc_rt.output->iteration_through_exit))
		return 0;
	return P->handle_event(data, size);
}

/* A closed 0, 1 or 2 would be the next file opened (a BPF object's, -o's,
 * the BTF's) and output or messages would land in it: /dev/null takes
 * its place. 1 if standard output was closed. */
static int plug_std_fds(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (fd == 1)
			stdout_closed = 1;
		if (open("/dev/null", O_RDWR) < 0)
			break;
	}
	return stdout_closed;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* How long to wait for events: 100 ms, less when a report is due sooner. */
static int poll_ms(double report_due)
{
	double left = report_due ? (report_due - now()) * 1000 : 100;

	return left <= 0 ? 0 : left < 100 ? (int)left + 1 : 100;
}

/* One run's state, handed from phase to phase. */
struct run {
	struct options o;
	struct bpf_object *obj;
	struct plyc_links links;
	const unsigned char *image;   /* what libbpf opened: prog->obj or plyc_read_helpers' copy */
	char btf_path[64];            /* the embedded BTF's file, when it is used */
	uint64_t target;              /* $target: -c's command or -p's process */
	int pidfd;                    /* -p's process to watch, or -1 */
	int stats_fd;                 /* plyc_stats, or -1 */
	uint64_t reported_lost;       /* events lost that were told */
	int failed;                   /* the run fails (told), its exit status 1 */
};

/* Phase 1, arguments: the output style, standard descriptors, -h and the
 * options (parse_args), the runtime's state and libbpf's log hook, root,
 * --btf. 0, or 1 once told. */
static int arguments(struct run *r, struct plyc_program *prog, int argc, char **argv)
{
	struct options *o = &r->o;
	int closed_out;

	plyc_cpp_demangle = !prog->no_cpp_demangle;
	if (prog->usyms)
		plyc_usyms = prog->usyms;
	plyc_str_trailer = prog->str_trailer;
	plyc_output_use(prog->output, prog->style, prog->report_output);
	closed_out = plug_std_fds();
	/* a closed pipe is EPIPE, not death by SIGPIPE, from the first write
	 * (-h, --list, --info); the run catches it (catch_signals()), -c's command
	 * starts with the default (child.c) */
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(argc, argv, o))
		return 1;
	if (closed_out && !o->outfile)
		return fail("writing output: %s (standard output is closed)", strerror(EBADF));
	if (!o->pid && !o->cmd && prog->default_pid > 0)
		o->pid = prog->default_pid;
	verbose = o->verbose;
	prog->verbose = o->verbose;
	prog->target_pid = o->pid ? o->pid : -1;
	plyc_rt_init();
	plyc_rt.json = o->json;
	plyc_rt.time_formats = prog->time_formats;
	plyc_rt.enums = prog->enums;
	libbpf_set_print(libbpf_print);

	if (geteuid() != 0)
		return fail("tracing needs root (CAP_BPF and CAP_PERFMON); run it with sudo");
	if (o->btf) {
		const char *why = btf_file_problem(o->btf);

		if (why)
			return fail("--btf %s: %s", o->btf, why);
	}
	return 0;
}

/* --info and --list: they ask the kernel and end there (load/info.c, each
 * provider's list); their exit status. */
static int query(struct run *r, const struct plyc_program *prog)
{
	int failed;

	if (r->o.info) {
		plyc_info(prog, r->o.btf, stdout);
		return stdout_written();
	}
	failed = plyc_check_targets(prog) != 0;
	plyc_list_targets(prog, stdout);
	return stdout_written() || failed;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* a closed terminal's SIGHUP too: the exit dump, then out */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* SA_RESTART: a write waiting on a slow reader goes on (only a
	 * stop gives it up, outfile.c); poll() and epoll_wait() are
	 * interrupted all the same (signal(7)) */
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
}

/* bpftrace's tracers take SIGUSR1 (0.27: its self probes, 0.17: the maps
 * printed); ply's keep the default, as ply does. After -c's command is
 * forked, whose action stays the default one until its exec (what a probe
 * reads of it there, as under bpftrace). */
static void catch_usr1(const struct plyc_program *prog)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };

	if (plyc_rt.output->catches_usr1 || plyc_has_probes_of(prog, &plyc_provider_self_usr1))
		sigaction(SIGUSR1, &sa, NULL);
}

/* Phase 2, start: what can refuse the run before the BPF object is
 * opened: -o's folder, --metrics' port, then the signals caught and the
 * target: -c's command started (held until attached) or -p's process
 * found. 0, or 1 once told (nothing to clean up: the process ends). */
static int start(struct run *r, const struct plyc_program *prog)
{
	const struct options *o = &r->o;
	int err;

	if (o->outfile && (err = outfile_can_be(o->outfile)))
		return fail("cannot open %s: %s", o->outfile, plyc_out_strerror(err));
	if (o->metrics) {
		char why[256], bound[96];

		if (plyc_metrics_listen(o->metrics, why, sizeof(why), bound, sizeof(bound)))
			return fail("%s", why);
		fprintf(stderr, "%s: serving metrics at http://%s/metrics\n", prog->name, bound);
	}
	catch_signals();
	/* --dry-run starts no command, but says, as bpftrace 0.27's, that the run could not */
	if (o->cmd && o->dry_run && plyc_child_check(prog->name, o->cmd))
		return 1;
	if (o->cmd && !o->dry_run) {
		int pid = plyc_child_start(prog->name, o->cmd);

		if (pid < 0)
			return 1;
		r->target = (uint64_t)pid;
	} else if (o->pid) {
		if (kill((pid_t)o->pid, 0) && errno == ESRCH)
			return fail("-p %ld: no such process", o->pid);
		r->target = (uint64_t)o->pid;
#ifdef SYS_pidfd_open
		r->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)o->pid, 0);
#endif
	} else if (!o->cmd && prog->no_target_warning) {
		fprintf(stderr, "%s: warning: %s\n", prog->name, prog->no_target_warning);
	}
	catch_usr1(prog);
	return 0;
}

/* Phase 3, open: the BPF object opened (its image with the memory-read
 * helpers this kernel has), every attach target resolved, the parameters
 * set, and what depends on the device settled, before the (slow) load.
 * 0, or 1 once told. */
static int open_object(struct run *r, const struct plyc_program *prog)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	size_t image_size;

	open_opts.object_name = prog->name;
	open_opts.btf_custom_path = r->o.btf ? r->o.btf : embedded_btf(prog, r->btf_path, sizeof(r->btf_path));
	/* libbpf reads the image until load: it lives until teardown. */
	r->image = plyc_read_helpers(prog, &image_size);
	if (!r->image)
		return fail("out of memory");
	r->obj = bpf_object__open_mem(r->image, image_size, &open_opts);
	if (!r->obj)
		return fail("cannot open the BPF object: %s", strerror(errno));
	/* kprobe targets decide parameters (syscall wrappers) and program
	 * types (kprobe.multi) */
	return plyc_check_targets(prog) || set_params(r->obj, &r->o, r->target) || plyc_tp_patch(prog, r->obj) ||
	       plyc_prepare_programs(prog, r->obj) || plyc_once_prepare(prog, r->obj) ||
	       plyc_output_prepare(r->obj, prog->name, r->o.verbose) ||
	       plyc_pidns_prepare(r->obj, prog->name, r->o.verbose, r->o.pid) || plyc_check_needs(prog, r->obj) ||
	       plyc_maps_prepare(prog, r->obj, r->o.verbose);
}

/* Phase 4, load: the verifier's (a refusal told in the script's terms),
 * then the maps' descriptors, the stacks, the stats and the output
 * buffer. 0, or 1 once told. */
static int load(struct run *r, struct plyc_program *prog)
{
	struct bpf_map *m;
	int err = bpf_object__load(r->obj), i;

	if (err) {
		explain_load_failure(r->obj, err);
		return 1;
	}
	for (i = 0; i < prog->nmaps; i++) {
		m = bpf_object__find_map_by_name(r->obj, prog->map_cnames[i]);
		prog->maps[i].fd = m ? bpf_map__fd(m) : -1;
	}
	plyc_stacks_find(r->obj);
	m = bpf_object__find_map_by_name(r->obj, "plyc_stats");
	r->stats_fd = m ? bpf_map__fd(m) : -1;
	if (plyc_output_open(r->obj, on_event))
		return fail("cannot set up the output buffer: %s", strerror(errno));
	return 0;
}

/* bpftrace 0.27's --dry-run: everything attached, then nothing run (no
 * banner, no BEGIN or END, no output): each probe that fails says why. */
static int dry_run(struct run *r, const struct plyc_program *prog)
{
	if (plyc_attach_every(prog, r->obj, &r->links))
		return 1;
	if (r->o.verbose)
		fprintf(stderr, "%s: %d probe%s attached and detached (dry run)\n", prog->name, r->links.n,
			r->links.n == 1 ? "" : "s");
	return 0;
}

/* Phase 5, attach: -o's file, the banner, BEGIN run, the probes attached,
 * -c's command let go. 0, or 1 once told. */
static int attach(struct run *r, const struct plyc_program *prog)
{
	int err, i;

	/* -o's file is created (or emptied) only now, once everything that
	 * could refuse the run (arguments, privileges, BTF, -c's command, the
	 * verifier) has passed. */
	err = plyc_out_open(r->o.outfile);
	plyc_out_stop_flag(&stopping);
	if (err)
		return fail("cannot open %s: %s", r->o.outfile ? r->o.outfile : "standard output", plyc_out_strerror(-err));
	/* bpftrace says it before BEGIN runs */
	if (plyc_rt.output->attached && !r->o.quiet) {
		plyc_rt.output->attached(plyc_rt.out, plyc_count_probes(prog));
		fflush(plyc_rt.out);
	}
	if (plyc_once_run(prog, r->obj, &plyc_provider_begin))
		return 1;
	plyc_output_drain();
	fflush(plyc_rt.out);
	iterating = 1;
	if (plyc_attach_all(prog, r->obj, &r->links)) {
		iterating = 0;
		return 1;
	}
	iterating = 0;
	/* an iterator's run is its iteration, done at attach (providers/iter.c) */
	for (i = 0; i < prog->nprobes; i++)
		if (prog->probes[i].provider->ends_run)
			plyc_request_exit(0);
	/* bpftrace (since 0.24) ends a run whose only probes are BEGIN and END
	 * once BEGIN's output is out, as if BEGIN had called exit(): END runs,
	 * the maps are printed. ply's tracer waits for a signal, -d or -c. */
	if (plyc_rt.output->once_only_ends && plyc_once_only(prog))
		plyc_request_exit(0);
	if (r->o.verbose) {
		fprintf(stderr, "%s: %d probe%s attached\n", prog->name, r->links.n, r->links.n == 1 ? "" : "s");
		plyc_maps_report_memory(prog->name, r->obj, "after load");
	}
	/* exit() in BEGIN, or a signal while attaching: the command never runs.
	 * One that cannot run (its exec failed) ends the run with no output. */
	return r->o.cmd && !stopping && plyc_child_release();
}

/* Events lost since the last told: said (with -k at most once a second,
 * by next_told), 1 when that ends the run (no -k). */
static int lost_told(struct run *r, const struct plyc_program *prog, double *next_told)
{
	uint64_t lost = plyc_stat_sum(r->stats_fd, 0) + plyc_output_lost();

	if (lost <= r->reported_lost || (r->o.keep_going && now() < *next_told))
		return 0;
	*next_told = now() + 1;
	fprintf(stderr, "%s: warning: %" PRIu64 " event%s lost (output buffer full)%s\n", prog->name,
		lost - r->reported_lost, lost - r->reported_lost == 1 ? "" : "s",
		r->o.keep_going ? "" : "; stopping (-k keeps going)");
	r->reported_lost = lost;
	return !r->o.keep_going;
}

/* One wait for events (and --metrics' scrapes, side by side with the
 * output's epoll set): 0, or a -errno. */
static int wait_events(double report_due, struct plyc_metrics_src *msrc)
{
	struct pollfd pfd[2] = { { .fd = -1 }, { .fd = -1 } };
	int err;

	if (plyc_metrics_fd() < 0)
		return plyc_output_poll(poll_ms(report_due));
	pfd[0] = (struct pollfd){ .fd = plyc_output_epoll_fd(), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = plyc_metrics_fd(), .events = POLLIN };
	err = poll(pfd, 2, poll_ms(report_due));
	err = err < 0 ? -errno : plyc_output_consume();
	msrc->output_lost = plyc_output_lost();
	plyc_metrics_serve(msrc);
	return err;
}

/* The periodic report, when due, after the events that came before it;
 * the next one due in *due. 1 when the run ends here. */
static int report_if_due(const struct plyc_program *prog, double *due)
{
	if (!*due || now() < *due)
		return 0;
	plyc_output_drain();
	if (plyc_rt.output->report(prog))
		plyc_request_exit(0);
	fflush(plyc_rt.out);
	if (plyc_out_error())
		return 1;
	*due += prog->report->interval;
	if (*due <= now())   /* late (a busy machine): no catching up */
		*due = now() + prog->report->interval;
	return stopping;
}

/* SIGUSR1 received: the self probes run, in the script's order, then what
 * the style prints (bpftrace 0.17: the maps). 1 when the run fails. */
static int answer_usr1(struct run *r, const struct plyc_program *prog)
{
	usr1_pending = 0;
	if (plyc_once_run(prog, r->obj, &plyc_provider_self_usr1))
		return 1;
	if (plyc_rt.output->on_usr1) {
		plyc_output_drain();
		plyc_rt.output->on_usr1(prog);
	}
	fflush(plyc_rt.out);
	return 0;
}

/* Phase 6, poll: events printed as they come until a signal, exit(), -d's
 * deadline, the end of -c's command or -p's process, a failed output,
 * or events lost without -k. */
static void poll_run(struct run *r, const struct plyc_program *prog)
{
	const struct options *o = &r->o;
	struct plyc_metrics_src msrc = { 0 };
	double deadline = o->duration > 0 ? now() + o->duration : 0;
	double report_due = prog->report ? now() + prog->report->interval : 0;
	double next_lost_told = 0, next_lost_check = 0;
	int err, status = 0;

	msrc.tracer = prog->name;
	msrc.script = prog->script;
	msrc.version = prog->version;
	msrc.prefix = o->metrics_prefix ? o->metrics_prefix : "plyc";
	msrc.maps = prog->maps;
	msrc.nmaps = prog->nmaps;
	msrc.stats_fd = r->stats_fd;
	msrc.probes_attached = r->links.n;

	while (!stopping) {
		err = wait_events(report_due, &msrc);
		if (err < 0 && err != -EINTR && !plyc_out_error()) {
			r->failed = fail("reading events failed: %s", strerror(-err));
			break;
		}
		fflush(plyc_rt.out);
		if (usr1_pending && !stopping && answer_usr1(r, prog)) {
			r->failed = 1;
			break;
		}
		if (stopping || plyc_out_error() || report_if_due(prog, &report_due))
			break;
		if (deadline && now() >= deadline)
			break;
		if (o->cmd && plyc_child_reap(&status))
			break;
		if (o->pid && target_gone(o->pid, r->pidfd))
			break;
		/* A syscall: not after every poll, at most ten times a second. */
		if (now() < next_lost_check)
			continue;
		next_lost_check = now() + 0.1;
		if (lost_told(r, prog, &next_lost_told)) {
			r->failed = 1;
			break;
		}
	}
}

/* Phase 7, end: the probes stopped, END run, the maps' dump (or a
 * report's last), the probes detached, and what went wrong unseen told:
 * events lost, loops capped, map updates refused. */
static void end(struct run *r, const struct plyc_program *prog)
{
	uint64_t lost;

	/* Stop the probes first so END sees the final state. No more scrapes:
	 * and the background detacher (a fork) must not keep the port. */
	stop_probes(r->obj);
	plyc_metrics_close();
	/* What is left of the command's group goes before END and the dump,
	 * so that nothing of it writes among them. */
	if (r->o.cmd)
		plyc_child_kill();
	plyc_output_drain();
	after_exit = 0;     /* END's own output */
	if (plyc_once_run(prog, r->obj, &plyc_provider_end))
		r->failed = 1;
	plyc_output_drain();
	fflush(plyc_rt.out);
	if (r->o.verbose) {
		report_costs(r->obj);
		plyc_maps_report_memory(prog->name, r->obj, "at exit");
	}
	/* the maps' dump, or a report's last one */
	plyc_rt.output->at_exit(prog, exit_requested);
	fflush(plyc_rt.out);
	plyc_detach_in_background(&r->links);

	lost = plyc_stat_sum(r->stats_fd, 0) + plyc_output_lost();
	if (lost > r->reported_lost) {
		fprintf(stderr, "%s: warning: %" PRIu64 " event%s lost (output buffer full)\n",
			prog->name, lost - r->reported_lost, lost - r->reported_lost == 1 ? "" : "s");
		if (!r->o.keep_going)
			r->failed = 1;
	}
	plyc_report_loop_caps(prog, r->obj);
	/* Map updates the kernel refused, by reason (docs/output.md). */
	if (plyc_report_refusals(prog->name, r->stats_fd, prog->maps, prog->nmaps, r->o.keep_going))
		r->failed = 1;
}

/* Phase 8, teardown: everything let go, the output closed and checked;
 * the exit status. */
static int teardown(struct run *r, const struct plyc_program *prog)
{
	int err;

	plyc_metrics_close();
	if (r->pidfd >= 0)
		close(r->pidfd);
	plyc_detach_all(&r->links);
	plyc_child_kill();
	plyc_output_free();
	bpf_object__close(r->obj);
	if (r->image != prog->obj)
		free((void *)r->image);
	free(libbpf_log);
	/* The reader gone (`| head`): the end, as for other tools; a disk
	 * full or a closed file: the output is incomplete, a failure. */
	err = plyc_out_close();
	if (err == EPIPE)
		return r->failed;
	if (err == EINTR)
		return fail("writing output: stopped by a signal while the reader was not reading");
	if (err)
		return fail("%s: %s", plyc_out_what(), strerror(err));
	if (exit_asked)
		fprintf(stderr, "%s: warning: exit(%lld): an exit status is 0 to 255; exiting with 255\n",
			prog->name, exit_asked);
	if (r->failed)
		return 1;
	return exit_requested ? exit_code : 0;
}

/* The tracer's life in its phases (docs/design.md "The runtime"): each
 * returns 0 to go on; one that fails has said why, and the run goes to
 * teardown (before open, nothing is held: it ends at once). */
int plyc_main(struct plyc_program *prog, int argc, char **argv)
{
	struct run r = { .image = prog->obj, .pidfd = -1, .stats_fd = -1 };

	P = prog;
	if (arguments(&r, prog, argc, argv))
		return 1;
	if (r.o.info || r.o.list)
		return query(&r, prog);
	if (start(&r, prog))
		return 1;
	prog->target_task = r.target ? (long)r.target : -1;
	if (open_object(&r, prog) || load(&r, prog))
		r.failed = 1;
	else if (r.o.dry_run)
		r.failed = dry_run(&r, prog);
	else if (attach(&r, prog))
		r.failed = 1;
	else {
		poll_run(&r, prog);
		end(&r, prog);
	}
	return teardown(&r, prog);
}
