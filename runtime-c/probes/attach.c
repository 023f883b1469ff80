/* Running every probe's provider in turn (resolve, prepare, attach,
 * release), and what providers share: links, errors, perf events, trivial
 * programs. Every failure names the probe and its line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "plyc_attach.h"

static const struct plyc_program *P;
/* Per probe: its provider's view of it. */
static struct plyc_probe_ctx *ctxs;
/* Per probe: left out, its target missing (bpftrace's missing_probes). */
static unsigned char *skipped;
/* How plyc_probe_error reports: an error, or (missing_probes) a warning or nothing. */
static enum plyc_missing reporting = PLYC_MISSING_ERROR;

static void report(const struct plyc_probe *pr, enum plyc_missing how, const char *fmt, va_list ap)
{
	if (how == PLYC_MISSING_IGNORE)
		return;
	fprintf(stderr, "%s: %s: %s: ", pr->where, how == PLYC_MISSING_WARN ? "warning" : "error", pr->spec);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int plyc_probe_error(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
{
	va_list ap;

	(void)prog;
	va_start(ap, fmt);
	report(pr, reporting, fmt, ap);
	va_end(ap);
	return -1;
}

int plyc_probe_fatal(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
{
	va_list ap;

	(void)prog;
	va_start(ap, fmt);
	report(pr, PLYC_MISSING_ERROR, fmt, ap);
	va_end(ap);
	return PLYC_PROBE_FATAL;
}

int plyc_add_link(struct plyc_links *links, struct bpf_link *link)
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

int plyc_has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* An errno from libbpf, which has codes of its own (4000 and up). */
const char *plyc_errstr(int err)
{
	static char buf[256];

	if (err < 0)
		err = -err;
	if (err >= 4000 && err < 4100 && !libbpf_strerror(err, buf, sizeof(buf)))
		return buf;
	return strerror(err);
}

int plyc_probe_wrapped(int probe)
{
	const struct plyc_probe_ctx *c = ctxs ? &ctxs[probe] : NULL;

	return c && c->pr->provider->wrapped ? c->pr->provider->wrapped(c) : 0;
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

/* An fentry or fexit program that reads the context words of mask (bit n:
 * ctx[n]; with cookie, calling bpf_get_attach_cookie first), loaded for
 * BTF function id (of the module BTF object btf_fd, else vmlinux's: -1)
 * and attached: a trampoline, with cookie by a link carrying one. */
int plyc_trampoline_takes(int id, int btf_fd, int fexit, uint64_t mask, int cookie)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = fexit ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)id, .attach_btf_obj_fd = btf_fd >= 0 ? (__u32)btf_fd : 0);
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .tracing.cookie = 1);
	struct bpf_insn insns[67];
	int n = 0, slot, prog, link;

	if (cookie)     /* r1 is the context */
		insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_attach_cookie };
	for (slot = 0; slot < 64; slot++)
		if (mask >> slot & 1)   /* r0 = *(u64 *)(r1 + 8 * slot) */
			insns[n++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_0,
							.src_reg = BPF_REG_1, .off = (__s16)(8 * slot) };
	insns[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 };
	insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, (size_t)n, &opts);
	if (prog < 0)
		return errno ? errno : EINVAL;
	link = cookie ? bpf_link_create(prog, 0, opts.expected_attach_type, &lopts)
		      : bpf_raw_tracepoint_open(NULL, prog);
	n = link < 0 ? (errno ? errno : EINVAL) : 0;
	close(prog);
	if (link >= 0)
		close(link);
	return n;
}

int plyc_prepare_programs(const struct plyc_program *prog, struct bpf_object *obj)
{
	int i;

	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_provider *pv = prog->probes[i].provider;

		if (skipped[i]) {
			if (pv->leave_out)
				pv->leave_out(&ctxs[i], obj);
			continue;
		}
		if (pv->prepare && pv->prepare(&ctxs[i], obj))
			return -1;
	}
	return 0;
}

int plyc_check_targets(const struct plyc_program *prog)
{
	int i, ret, err = 0;

	P = prog;
	ctxs = calloc((size_t)prog->nprobes, sizeof(*ctxs));
	skipped = calloc((size_t)prog->nprobes + 1, 1);
	if (!ctxs || !skipped)
		return -1;
	for (i = 0; i < prog->nprobes; i++)
		ctxs[i] = (struct plyc_probe_ctx){ .prog = prog, .pr = &prog->probes[i], .index = i };
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_provider *pv = prog->probes[i].provider;
		/* missing_probes = warn | ignore: a probe whose target is missing is
		 * left out, where its program loads without it or its provider
		 * keeps it from loading (leave_out: a kprobe's fentry twin, a
		 * kfunc's program, tied to their function at load) */
		int may_skip = prog->missing_probes != PLYC_MISSING_ERROR && (!pv->prepare || pv->leave_out);

		reporting = may_skip ? prog->missing_probes : PLYC_MISSING_ERROR;
		if (pv->resolve && (ret = pv->resolve(&ctxs[i]))) {
			/* left out, or failed (then not listed by --list; the run ends) */
			skipped[i] = 1;
			if (!may_skip || ret == PLYC_PROBE_FATAL)
				err = -1;
		}
		reporting = PLYC_MISSING_ERROR;
	}
	return err;
}

int plyc_count_probes(const struct plyc_program *prog)
{
	int i, n = 0;

	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_provider *pv = prog->probes[i].provider;

		if (skipped && skipped[i])
			continue;
		n += pv->count && ctxs ? pv->count(&ctxs[i]) : 1;
	}
	return n;
}

int plyc_binary_error(struct plyc_probe_ctx *c, const char *path, int err)
{
	if (err == -ENOENT && !strchr(path, '/'))
		return plyc_probe_error(c->prog, c->pr, "no library or program '%s' on this device", path);
	if (err == -ENOEXEC)
		return plyc_probe_error(c->prog, c->pr, "%s: not a regular file", path);
	return plyc_probe_error(c->prog, c->pr, "%s: %s", path, strerror(-err));
}

int plyc_perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int plyc_attach_perf(struct plyc_probe_ctx *c, struct bpf_program *bp, struct plyc_links *links,
		     struct perf_event_attr *attr, int only, const char *what)
{
	const struct plyc_probe *pr = c->pr;
	int ncpus = libbpf_num_possible_cpus(), cpu, attached = 0;

	for (cpu = 0; cpu < ncpus; cpu++) {
		struct bpf_link *link;
		int fd;

		if (only >= 0 && cpu != only)
			continue;
		fd = plyc_perf_open(attr, cpu);
		if (fd < 0) {
			/* Possible but offline CPUs can't be opened: skip them. */
			if (errno == ENODEV || errno == EINVAL)
				continue;
			return plyc_probe_error(c->prog, pr, "cannot open %s on CPU %d: %s", what, cpu,
						plyc_errstr(errno));
		}
		link = bpf_program__attach_perf_event(bp, fd);
		if (!link) {
			int err = errno;

			close(fd);
			return plyc_probe_error(c->prog, pr, "cannot attach to %s on CPU %d: %s", what, cpu,
						plyc_errstr(err));
		}
		if (plyc_add_link(links, link))
			return -1;
		attached++;
	}
	if (!attached)
		return plyc_probe_error(c->prog, pr, only >= 0 ? "CPU %d is not online" : "no CPU is online", only);
	return 0;
}

/* every: go on past a probe that fails (--dry-run tells each one) */
static int attach_probes(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links,
			 int every)
{
	int i, failed = 0;

	P = prog;
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		struct bpf_program *bp = bpf_object__find_program_by_name(obj, pr->prog);

		if (!bp)
			failed = plyc_probe_error(P, pr, "program %s is missing from the BPF object", pr->prog);
		else if (skipped && skipped[i])
			continue;
		else if (pr->provider->attach && pr->provider->attach(&ctxs[i], obj, bp, links))
			failed = -1;
		if (failed && !every)
			break;
	}
	return failed;
}

int plyc_attach_all(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links)
{
	return attach_probes(prog, obj, links, 0);
}

int plyc_attach_every(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links)
{
	return attach_probes(prog, obj, links, 1);
}

void plyc_list_targets(const struct plyc_program *prog, FILE *fp)
{
	int i;

	for (i = 0; ctxs && i < prog->nprobes; i++) {
		const struct plyc_provider *pv = prog->probes[i].provider;

		if (skipped[i] || !pv->attach)
			continue;
		if (pv->list)
			pv->list(&ctxs[i], fp);
		else
			fprintf(fp, "%s\n", prog->probes[i].spec);
	}
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

	if (ctxs && P) {
		for (i = 0; i < P->nprobes; i++) {
			if (ctxs[i].pr->provider->release)
				ctxs[i].pr->provider->release(&ctxs[i]);
			free(ctxs[i].state);
		}
		free(ctxs);
		ctxs = NULL;
	}
	for (i = 0; i < links->n; i++)
		bpf_link__destroy(links->v[i]);
	free(links->v);
	links->v = NULL;
	links->n = links->cap = 0;
}

__u64 plyc_name_cookie(const struct plyc_probe_ctx *c, struct bpf_object *obj, __u32 *last, const char *name)
{
	struct bpf_map *names = bpf_object__find_map_by_name(obj, "plyc_tp_names");
	__u32 id = *last + 1;

	if (!names)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(names), &id, name, BPF_ANY)) {
		plyc_probe_error(c->prog, c->pr, "cannot record %s's name for 'probe': %s", name, plyc_errstr(errno));
		return 0;
	}
	*last = id;
	return id;
}
