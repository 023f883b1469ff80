/* Attaching each probe kind; every failure names the probe and its line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "plyc_arch.h"
#include "plyc_attach.h"
#include "plyc_kfuncs.h"
#include "plyc_uprobes.h"

static const struct plyc_program *P;

/* Per probe: the kernel functions a kprobe target resolved to. */
static struct plyc_kfuncs *resolved;
static int use_multi;
/* Per probe: the binary a uprobe/usdt target resolved to, and a uprobe's
 * function's offset in it. */
static char (*binaries)[PATH_MAX];
static uint64_t *uoffsets;
/* Per probe: runs as its fentry/fexit twin; attaches with kprobe.multi. */
static char *as_fentry, *as_multi;

int plyc_probe_error(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
{
	va_list ap;

	(void)prog;
	fprintf(stderr, "%s: error: %s: ", pr->where, pr->spec);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int add_link(struct plyc_links *links, struct bpf_link *link)
{
	if (links->n == links->cap) {
		int cap = links->cap ? links->cap * 2 : 16;
		struct bpf_link **v = realloc(links->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		links->v = v;
		links->cap = cap;
	}
	links->v[links->n++] = link;
	return 0;
}

static void split(const char *target, char *group, size_t len, const char **event)
{
	snprintf(group, len, "%s", target);
	char *slash = strchr(group, '/');

	*slash = 0;
	*event = slash + 1;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int count_match(const char *group, const char *event, void *arg)
{
	(void)group;
	(void)event;
	(void)arg;
	return 0;
}

static int is_address(const char *target)
{
	return !strncmp(target, "0x", 2);
}

static int resolve_kprobe(int i)
{
	const struct plyc_probe *pr = &P->probes[i];
	int err;

	if (is_address(pr->target))
		return 0;
	if (!plyc_tracefs() && access("/proc/kallsyms", R_OK))
		return plyc_probe_error(P, pr, "cannot list the kernel's functions (no tracefs, no /proc/kallsyms)");
	err = plyc_kfuncs_resolve(pr->target, has_glob(pr->target), &resolved[i]);
	if (err == -ENOENT && has_glob(pr->target))
		return plyc_probe_error(P, pr, "no kernel function on this device matches %s", pr->target);
	if (err == -ENOENT) {
		char near[512];

		plyc_kfunc_near(pr->target, near, sizeof(near));
		return plyc_probe_error(P, pr, "no kernel function %s on this device%s%s", pr->target,
					near[0] ? "; near: " : "", near);
	}
	if (err)
		return plyc_probe_error(P, pr, "cannot list the kernel's functions: %s", strerror(-err));
	return 0;
}

/* An errno from libbpf, which has codes of its own (4000 and up). */
static const char *errstr(int err)
{
	static char buf[256];

	if (err < 0)
		err = -err;
	if (err >= 4000 && err < 4100 && !libbpf_strerror(err, buf, sizeof(buf)))
		return buf;
	return strerror(err);
}

/* A uprobe's function, by name (and version), to its offset in the file:
 * libbpf 1.1 refuses a name that several versions of the function share. */
static int resolve_ufunc(int i)
{
	const struct plyc_probe *pr = &P->probes[i];
	const char *bin = binaries[i], *at = strchr(pr->target, '@');
	int len = at ? (int)(at - pr->target) : (int)strlen(pr->target);
	char versions[1024];
	int err = plyc_uprobe_offset(bin, pr->target, &uoffsets[i], versions, sizeof(versions));

	switch (err) {
	case 0:
		return 0;
	case -ENOENT:
		return plyc_probe_error(P, pr, "no function %.*s in %s", len, pr->target, bin);
	case -ENOMSG:
		if (at)
			return plyc_probe_error(P, pr, "%s has no %sversion %s of %.*s (it has %s)", bin,
						at[1] == '@' ? "default " : "", at[1] == '@' ? at + 2 : at + 1, len,
						pr->target, versions);
		return plyc_probe_error(P, pr, "%s has no default version of %.*s, only %s: name one", bin,
					len, pr->target, versions);
	case -EEXIST:
		/* Local functions of one name in several files have no version. */
		if (!strchr(versions, '@'))
			return plyc_probe_error(P, pr, "%s has several functions named %.*s: give the "
						"address of one (PATH:0xADDR)", bin, len, pr->target);
		return plyc_probe_error(P, pr, "%s has several functions named %.*s (%s)%s", bin, len,
					pr->target, versions, at ? "" : ": name one as NAME@VERSION");
	case -EOPNOTSUPP:
		/* Called once, by the dynamic loader: a probe there never fires. */
		return plyc_probe_error(P, pr, "%.*s in %s is an IFUNC: its address is the resolver that "
					"picks an implementation when the library is loaded; probe the "
					"implementation instead: %s%s", len, pr->target, bin,
					versions[0] ? versions : "its address (PATH:0xADDR, from the "
					"library's debug symbols)", versions[0] ? " (by name or PATH:0xADDR)" : "");
	case -EILSEQ:
		/* The kernel would refuse it (EINVAL): say why. */
		return plyc_probe_error(P, pr, "%.*s in %s is Thumb code: 32-bit ARM kernels put uprobes only "
					"on ARM-mode instructions (code built with -marm)", len, pr->target, bin);
	default:
		return plyc_probe_error(P, pr, "cannot read the symbols of %s: %s", bin, errstr(err));
	}
}

static int resolve_binary(int i)
{
	const struct plyc_probe *pr = &P->probes[i];
	int err = plyc_resolve_binary(pr->path, binaries[i], sizeof(binaries[i]));

	if (err == -ENOENT && !strchr(pr->path, '/'))
		return plyc_probe_error(P, pr, "no library or program '%s' on this device", pr->path);
	if (err)
		return plyc_probe_error(P, pr, "%s: %s", pr->path, strerror(-err));
	if ((pr->kind == PLYC_P_UPROBE || pr->kind == PLYC_P_URETPROBE) && !is_address(pr->target))
		return resolve_ufunc(i);
	return 0;
}

int plyc_probe_wrapped(int probe)
{
	return resolved ? resolved[probe].wrapped : 0;
}

/* A program that returns 0: enough to ask this kernel whether it loads and
 * attaches a kind of program, which its version alone doesn't say. (opts
 * not const: libbpf 1.3+ declares bpf_prog_load's so, 1.1 const.) */
int plyc_load_trivial(enum bpf_prog_type type, struct bpf_prog_load_opts *opts)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(type, NULL, "GPL", insns, 2, opts);
}

/* Whether attaching a trivial program gave a link; closes both. */
static int attached(int prog, int link)
{
	close(prog);
	if (link < 0)
		return 0;
	close(link);
	return 1;
}

/* Whether this kernel attaches one program to many functions at once
 * (kprobe.multi, 5.18+ with CONFIG_FPROBE). */
static int kprobe_multi_works(const char *sym)
{
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_KPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	int prog = plyc_load_trivial(BPF_PROG_TYPE_KPROBE, &popts);

	if (prog < 0)
		return 0;
	lopts.kprobe_multi.syms = &sym;
	lopts.kprobe_multi.cnt = 1;
	return attached(prog, bpf_link_create(prog, 0, BPF_TRACE_KPROBE_MULTI, &lopts));
}

/* Whether an fentry (or fexit) program that reads the context slots of
 * mask `ctx` (bit n: ctx[n], an argument or the return value) can attach
 * to BTF function id on this kernel: BTF alone doesn't say (arm64 got
 * trampolines in 6.0, 32-bit ARM has none), nor which arguments the
 * verifier lets a program read (5.10 refuses one that points to other than
 * a struct, such as __netif_receive_skb_core's struct sk_buff **). */
static int fentry_works(int func_id, int fexit, uint64_t ctx)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = fexit ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)func_id);
	struct bpf_insn insns[66];
	int n = 0, slot, prog;

	for (slot = 0; slot < 64; slot++)
		if (ctx >> slot & 1)   /* r0 = *(u64 *)(r1 + 8 * slot) */
			insns[n++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_0,
							.src_reg = BPF_REG_1, .off = (__s16)(8 * slot) };
	insns[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 };
	insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, (size_t)n, &opts);

	if (prog < 0)
		return 0;
	return attached(prog, bpf_raw_tracepoint_open(NULL, prog));
}

/* Run probe i as its fentry/fexit twin? Only where the device resolved the
 * function the twin was built for, with the same number of arguments in
 * its BTF, and fentry works there. PLYC_NO_FENTRY=1 keeps kprobes (to
 * compare them). */
static int use_fentry(const struct plyc_probe *pr, const struct plyc_kfuncs *k, struct btf **vmlinux)
{
	const struct btf_type *fn, *proto;
	int id;

	if (!pr->fentry_prog || getenv("PLYC_NO_FENTRY") || k->n != 1 || strcmp(k->names[0], pr->fentry_func))
		return 0;
	if (!*vmlinux && !(*vmlinux = btf__load_vmlinux_btf()))
		return 0;
	id = btf__find_by_name_kind(*vmlinux, pr->fentry_func, BTF_KIND_FUNC);
	if (id < 0)
		return 0;
	fn = btf__type_by_id(*vmlinux, id);
	proto = btf__type_by_id(*vmlinux, fn->type);
	if (!proto || btf_vlen(proto) != pr->fentry_nargs)
		return 0;
	return fentry_works(id, pr->kind == PLYC_P_KRETPROBE, pr->fentry_ctx);
}

int plyc_prepare_programs(const struct plyc_program *prog, struct bpf_object *obj)
{
	struct btf *vmlinux = NULL;
	int i;

	as_fentry = calloc((size_t)prog->nprobes, 1);
	as_multi = calloc((size_t)prog->nprobes, 1);
	if (!as_fentry || !as_multi)
		return -1;
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		struct bpf_program *kp, *fp;

		if (!pr->fentry_prog)
			continue;
		kp = bpf_object__find_program_by_name(obj, pr->prog);
		fp = bpf_object__find_program_by_name(obj, pr->fentry_prog);
		if (kp && fp && use_fentry(pr, &resolved[i], &vmlinux) &&
		    !bpf_program__set_attach_target(fp, 0, pr->fentry_func)) {
			bpf_program__set_autoload(kp, false);
			as_fentry[i] = 1;
		} else if (fp) {
			bpf_program__set_autoload(fp, false);
		}
	}
	btf__free(vmlinux);
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		char path[512];

		/* A kprobe that can't run as fentry needs kprobes. */
		if ((pr->kind == PLYC_P_KPROBE || pr->kind == PLYC_P_KRETPROBE) && !as_fentry[i] && plyc_tracefs()) {
			snprintf(path, sizeof(path), "%s/kprobe_events", plyc_tracefs());
			if (access(path, F_OK))
				return plyc_probe_error(P, pr, "this kernel has no kprobes (built without CONFIG_KPROBES)%s",
							pr->fentry_prog ? ", and fentry can't attach here" : "");
		}
	}
	for (i = 0; i < prog->nprobes; i++) {
		struct bpf_program *bp = bpf_object__find_program_by_name(obj, prog->probes[i].prog);
		size_t j;

		if (!bp || !resolved || resolved[i].n < 2)
			continue;
		/* kprobe.multi attaches through ftrace: every function must be
		 * ftrace-able, or the whole attachment fails. */
		for (j = 0; j < resolved[i].n && plyc_kfunc_ftraceable(resolved[i].names[j]); j++)
			;
		if (j < resolved[i].n)
			continue;
		if (use_multi == 0)
			use_multi = kprobe_multi_works(resolved[i].names[0]) ? 1 : -1;
		if (use_multi > 0) {
			bpf_program__set_expected_attach_type(bp, BPF_TRACE_KPROBE_MULTI);
			as_multi[i] = 1;
		}
	}
	return 0;
}

int plyc_check_targets(const struct plyc_program *prog)
{
	int i, err = 0;

	P = prog;
	resolved = calloc((size_t)prog->nprobes, sizeof(*resolved));
	binaries = calloc((size_t)prog->nprobes, sizeof(*binaries));
	uoffsets = calloc((size_t)prog->nprobes, sizeof(*uoffsets));
	if (!resolved || !binaries || !uoffsets)
		return -1;
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		char group[256];
		const char *event;
		int n;

		switch (pr->kind) {
		case PLYC_P_TRACEPOINT:
			split(pr->target, group, sizeof(group), &event);
			if (!plyc_tracefs()) {
				err = plyc_probe_error(P, pr, "tracefs is not available (mount it on /sys/kernel/tracing)");
				break;
			}
			if (has_glob(event)) {
				n = plyc_tp_glob(group, event, count_match, NULL);
				if (n <= 0)
					err = plyc_probe_error(P, pr, "no tracepoint on this kernel matches %s", pr->target);
			} else if (plyc_tp_exists(group, event)) {
				err = plyc_probe_error(P, pr, "no such tracepoint on this kernel");
			}
			break;
		case PLYC_P_KPROBE:
		case PLYC_P_KRETPROBE:
			if (resolve_kprobe(i))
				err = -1;
			break;
		case PLYC_P_UPROBE:
		case PLYC_P_URETPROBE:
		case PLYC_P_USDT:
			if (resolve_binary(i))
				err = -1;
			break;
		default:
			break;
		}
	}
	return err;
}

struct tp_ctx {
	struct bpf_program *prog;
	struct plyc_links *links;
	const struct plyc_probe *pr;
};

static int attach_tp(const char *group, const char *event, void *arg)
{
	struct tp_ctx *c = arg;
	struct bpf_link *link = bpf_program__attach_tracepoint(c->prog, group, event);

	if (!link)
		return plyc_probe_error(P, c->pr, "cannot attach to %s:%s: %s", group, event, errstr(errno));
	return add_link(c->links, link);
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_timer(const struct plyc_probe *pr, struct bpf_program *prog, struct plyc_links *links)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};
	int ncpus = libbpf_num_possible_cpus(), cpu, attached = 0;

	if (pr->kind == PLYC_P_INTERVAL) {
		attr.sample_period = pr->period_ns;
	} else {
		attr.freq = 1;
		attr.sample_freq = pr->freq;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct bpf_link *link;
		int fd;

		if (pr->cpu >= 0 && cpu != pr->cpu)
			continue;
		fd = perf_open(&attr, cpu);
		if (fd < 0) {
			/* Possible but offline CPUs can't be opened: skip them. */
			if (errno == ENODEV || errno == EINVAL)
				continue;
			return plyc_probe_error(P, pr, "cannot open a timer on CPU %d: %s", cpu, errstr(errno));
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			int err = errno;

			close(fd);
			return plyc_probe_error(P, pr, "cannot attach to the timer on CPU %d: %s", cpu, errstr(err));
		}
		if (add_link(links, link))
			return -1;
		attached++;
	}
	if (!attached)
		return plyc_probe_error(P, pr, pr->cpu >= 0 ? "CPU %d is not online" : "no CPU is online", pr->cpu);
	return 0;
}

/* A kprobe on one function failed. A symbol that isn't among the
 * functions ftrace lists is most likely not traceable at all (notrace, on
 * the kprobe blacklist, or a local copy of an inline function, like 6.1's
 * dev_queue_xmit): say so, with the traceable functions of a near name. */
static int kprobe_refused(const struct plyc_probe *pr, const char *func, int err)
{
	char near[512];

#ifdef PLYC_FTRACE_SITE
	if (err == EINVAL && pr->kind == PLYC_P_KRETPROBE && plyc_kfunc_ftraceable(func))
		return plyc_probe_error(P, pr, "cannot attach to %s: this kernel has no kprobes on ftrace "
					"sites (CONFIG_KPROBES_ON_FTRACE), where a kretprobe must go: it runs as "
					"fexit where the build's BTF (--btf) has the function as the device does", func);
#endif
	if ((err != EINVAL && err != ENOENT && err != EOPNOTSUPP) || plyc_kfunc_ftraceable(func) ||
	    !plyc_kfunc_in_kallsyms(func))
		return plyc_probe_error(P, pr, "cannot attach to %s: %s", func, errstr(err));
	plyc_kfunc_near(func, near, sizeof(near));
	return plyc_probe_error(P, pr, "%s is not a traceable function on this device (%s)%s%s", func,
				plyc_kfunc_blacklisted(func) ? "it is on the kernel's kprobe blacklist" :
				"a notrace symbol: the kernel refused a kprobe on it",
				near[0] ? "; near: " : "", near);
}

/* A kprobe on func+offset. A kernel without KPROBES_ON_FTRACE refuses
 * one on an ftrace site, where riscv64's functions start: a kprobe at the
 * entry then goes just past the site's nops, where the arguments are still
 * in their registers (a kretprobe must be at the entry: its fexit twin is
 * the way there). */
static struct bpf_link *kprobe_link(const struct plyc_probe *pr, struct bpf_program *bp, const char *func)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = pr->kind == PLYC_P_KRETPROBE, .offset = pr->offset);
	struct bpf_link *link = bpf_program__attach_kprobe_opts(bp, func, &opts);

#ifdef PLYC_FTRACE_SITE
	if (!link && errno == EINVAL && !opts.retprobe && !pr->offset && plyc_kfunc_ftraceable(func)) {
		opts.offset = PLYC_FTRACE_SITE;
		link = bpf_program__attach_kprobe_opts(bp, func, &opts);
		if (!link)
			errno = EINVAL;
		else if (P->verbose)
			fprintf(stderr, "%s: %s: at %s+%d, past its ftrace site (no kprobes on ftrace here)\n",
				pr->where, pr->spec, func, PLYC_FTRACE_SITE);
	}
#endif
	return link;
}

static int attach_kprobe(int i, struct bpf_program *bp, struct plyc_links *links)
{
	const struct plyc_probe *pr = &P->probes[i];
	struct plyc_kfuncs *k = &resolved[i];
	int ret = pr->kind == PLYC_P_KRETPROBE, attached = 0, failed = 0;
	struct bpf_link *link;
	size_t j;

	if (is_address(pr->target)) {
		LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = ret,
			    .offset = (size_t)strtoull(pr->target, NULL, 16));

		link = bpf_program__attach_kprobe_opts(bp, NULL, &opts);
		if (!link)
			return plyc_probe_error(P, pr, "cannot attach: %s", errstr(errno));
		return add_link(links, link);
	}
	if (as_multi && as_multi[i]) {
		LIBBPF_OPTS(bpf_kprobe_multi_opts, opts, .syms = (const char **)k->names, .cnt = k->n,
			    .retprobe = ret);

		link = bpf_program__attach_kprobe_multi_opts(bp, NULL, &opts);
		if (!link)
			return plyc_probe_error(P, pr, "cannot attach to the %zu matching functions: %s",
						k->n, errstr(errno));
		if (P->verbose)
			fprintf(stderr, "%s: %s: %zu functions (kprobe.multi)\n", pr->where, pr->spec, k->n);
		return add_link(links, link);
	}
	for (j = 0; j < k->n; j++) {
		link = kprobe_link(pr, bp, k->names[j]);
		if (!link) {
			/* One function of a glob that can't be probed is not fatal. */
			if (k->n == 1 && errno == EILSEQ)
				return plyc_probe_error(P, pr, "%s+%llu is not the start of an instruction",
							k->names[j], (unsigned long long)pr->offset);
			if (k->n == 1)
				return kprobe_refused(pr, k->names[j], errno);
			if (failed++ < 5)
				fprintf(stderr, "%s: warning: %s: cannot attach to %s: %s\n", pr->where,
					pr->spec, k->names[j], errstr(errno));
			continue;
		}
		if (add_link(links, link))
			return -1;
		attached++;
	}
	if (k->n > 1 && (failed || P->verbose))
		fprintf(stderr, "%s: %s: attached to %d of %zu functions\n", pr->where, pr->spec,
			attached, k->n);
	if (!attached)
		return plyc_probe_error(P, pr, "could not attach to any matching function");
	return 0;
}

/* The fentry/fexit twin chosen for probe i before load. */
static int attach_fentry(int i, struct bpf_object *obj, struct plyc_links *links)
{
	const struct plyc_probe *pr = &P->probes[i];
	struct bpf_program *fp = bpf_object__find_program_by_name(obj, pr->fentry_prog);
	struct bpf_link *link = fp ? bpf_program__attach_trace(fp) : NULL;

	if (!link)
		return plyc_probe_error(P, pr, "cannot attach to %s: %s", pr->fentry_func, errstr(errno));
	if (P->verbose)
		fprintf(stderr, "%s: %s: running as %s\n", pr->where, pr->spec,
			pr->kind == PLYC_P_KRETPROBE ? "fexit" : "fentry");
	return add_link(links, link);
}

static int attach_uprobe(int i, struct bpf_program *bp, struct plyc_links *links)
{
	const struct plyc_probe *pr = &P->probes[i];
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = pr->kind == PLYC_P_URETPROBE);
	size_t offset = pr->offset;
	struct bpf_link *link;

	if (is_address(pr->target)) {
		long off = plyc_vaddr_to_offset(binaries[i], strtoull(pr->target, NULL, 16));

		if (off < 0)
			return plyc_probe_error(P, pr, "%s is not an address of code in %s", pr->target, binaries[i]);
		offset = (size_t)off;
	} else {
		offset += uoffsets[i];
	}
	link = bpf_program__attach_uprobe_opts(bp, (pid_t)P->target_pid, binaries[i], offset, &opts);
	if (!link)
		return plyc_probe_error(P, pr, "cannot attach to %s in %s: %s", pr->target, binaries[i],
					errstr(errno));
	return add_link(links, link);
}

/* Before BPF cookies (5.15), libbpf's USDT code finds a probe's argument
 * spec by the address that fired, one spec per address, so it refuses a
 * second program at the same probe (EEXIST). The spec stored for the first
 * describes the same arguments: the second program is attached as a plain
 * uprobe at the probe's locations and reads its arguments through it. */
static int attach_usdt_again(int i, struct bpf_program *bp, struct plyc_links *links,
			     const char *provider)
{
	const struct plyc_probe *pr = &P->probes[i];
	uint64_t offsets[64];
	int j, n = plyc_usdt_locations(binaries[i], provider, pr->target, offsets, 64);

	if (n < 0)
		return plyc_probe_error(P, pr, "cannot attach to %s:%s in %s: %s", provider, pr->target,
					binaries[i], errstr(n));
	for (j = 0; j < n; j++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(bp, (pid_t)P->target_pid, binaries[i],
									 (size_t)offsets[j], &opts);

		if (!link)
			return plyc_probe_error(P, pr, "cannot attach to %s:%s in %s: %s", provider,
						pr->target, binaries[i], errstr(errno));
		if (add_link(links, link))
			return -1;
	}
	if (P->verbose)
		fprintf(stderr, "%s: %s: shares the argument spec of an earlier probe at the same "
			"place (no BPF cookies in this kernel)\n", pr->where, pr->spec);
	return 0;
}

static int attach_usdt(int i, struct bpf_program *bp, struct plyc_links *links)
{
	const struct plyc_probe *pr = &P->probes[i];
	char provider[256];
	struct bpf_link *link;
	int err;

	if (pr->usdt_provider) {
		snprintf(provider, sizeof(provider), "%s", pr->usdt_provider);
	} else if ((err = plyc_usdt_provider(binaries[i], pr->target, provider, sizeof(provider)))) {
		if (err == -EEXIST)
			return plyc_probe_error(P, pr, "several providers in %s have a probe %s: name one "
						"(usdt:PATH:provider:name)", binaries[i], pr->target);
		return plyc_probe_error(P, pr, "no USDT probe %s in %s", pr->target, binaries[i]);
	}
	link = bpf_program__attach_usdt(bp, (pid_t)P->target_pid, binaries[i], provider, pr->target, NULL);
	if (!link && errno == EEXIST)
		return attach_usdt_again(i, bp, links, provider);
	if (!link && errno == EOPNOTSUPP)
		return plyc_probe_error(P, pr, "cannot attach to %s:%s in %s: the libbpf built into this "
					"tracer cannot read USDT arguments on this architecture", provider,
					pr->target, binaries[i]);
	if (!link)
		return plyc_probe_error(P, pr, errno == ENOENT ? "no USDT probe %s:%s in %s" :
					"cannot attach to %s:%s in %s: %s", provider, pr->target, binaries[i],
					errstr(errno));
	return add_link(links, link);
}

int plyc_attach_all(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links)
{
	int i;

	P = prog;
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		struct bpf_program *bp = bpf_object__find_program_by_name(obj, pr->prog);
		char group[256];
		const char *event;

		if (!bp)
			return plyc_probe_error(P, pr, "program %s is missing from the BPF object", pr->prog);
		switch (pr->kind) {
		case PLYC_P_BEGIN:
		case PLYC_P_END:
			break;
		case PLYC_P_TRACEPOINT: {
			struct tp_ctx c = { bp, links, pr };

			split(pr->target, group, sizeof(group), &event);
			if (has_glob(event)) {
				if (plyc_tp_glob(group, event, attach_tp, &c) < 0)
					return -1;
			} else if (attach_tp(group, event, &c)) {
				return -1;
			}
			break;
		}
		case PLYC_P_INTERVAL:
		case PLYC_P_PROFILE:
			if (attach_timer(pr, bp, links))
				return -1;
			break;
		case PLYC_P_KPROBE:
		case PLYC_P_KRETPROBE:
			if (as_fentry && as_fentry[i] ? attach_fentry(i, obj, links) : attach_kprobe(i, bp, links))
				return -1;
			break;
		case PLYC_P_UPROBE:
		case PLYC_P_URETPROBE:
			if (attach_uprobe(i, bp, links))
				return -1;
			break;
		case PLYC_P_USDT:
			if (attach_usdt(i, bp, links))
				return -1;
			break;
		default:
			return plyc_probe_error(P, pr, "this provider is not supported by this version of plyc yet");
		}
	}
	return 0;
}

/* Detaching is slow for many probes (the kernel takes ~80 ms for each
 * tracepoint perf event). By then the probes are stopped and everything is
 * printed, so a child of ours does it while the tracer exits: our own
 * references are dropped without detaching, the child's are the last. */
void plyc_detach_in_background(struct plyc_links *links)
{
	pid_t pid;
	int i;

	if (links->n < 32) {
		plyc_detach_all(links);
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* Holding the caller's pipes open would make it wait for us. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		setsid();
		plyc_detach_all(links);
		_exit(0);
	}
	if (pid < 0) {
		plyc_detach_all(links);
		return;
	}
	for (i = 0; i < links->n; i++) {
		bpf_link__disconnect(links->v[i]);
		bpf_link__destroy(links->v[i]);
	}
	links->n = 0;
	plyc_detach_all(links);
}

void plyc_detach_all(struct plyc_links *links)
{
	int i;

	if (resolved && P) {
		for (i = 0; i < P->nprobes; i++)
			plyc_kfuncs_free(&resolved[i]);
		free(resolved);
		resolved = NULL;
		free(binaries);
		binaries = NULL;
		free(uoffsets);
		uoffsets = NULL;
		free(as_fentry);
		as_fentry = NULL;
		free(as_multi);
		as_multi = NULL;
	}
	for (i = 0; i < links->n; i++)
		bpf_link__destroy(links->v[i]);
	free(links->v);
	links->v = NULL;
	links->n = links->cap = 0;
}
