/* kprobe / kretprobe: resolved on the device (globs, every era's syscall
 * spelling), run as the fentry/fexit twin where the device allows, with
 * kprobe.multi for many functions where it works, else a kprobe each. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "plyc_arch.h"
#include "plyc_attach.h"
#include "plyc_kfuncs.h"
#include "plyc_tp.h"
#include "providers/kprobe.h"

struct kstate {
	struct plyc_kfuncs funcs;  /* the kernel functions the target resolved to */
	int fentry;                /* runs as its fentry/fexit twin */
	int multi;                 /* attaches with kprobe.multi */
	int left_out;              /* missing_probes: none of its probe's attach points is here */
};

/* Shared by every probe: whether kprobe.multi works (0: not asked yet),
 * and vmlinux's BTF while the twins are chosen. */
static int use_multi;
static struct btf *vmlinux;

static const struct plyc_kprobe_data *D(const struct plyc_probe_ctx *c)
{
	return c->pr->data;
}

/* Why a module has none of the functions asked for: not loaded, or built
 * into the kernel (/sys/module/NAME without the initstate of a loaded one). */
static const char *module_state(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (access(path, F_OK))
		return " (the module is not loaded)";
	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, F_OK) ? " (the module is built into this kernel: leave out its name)" : "";
}

static int is_address(const char *target)
{
	return !strncmp(target, "0x", 2);
}

/* Groups of alternative attach points (kprobe:a, kprobe:__a) with at least
 * one function on the device, by group number: set while resolving. */
static unsigned char *found;
static int nfound;

static int group_found(int group)
{
	if (group >= nfound) {
		unsigned char *f = realloc(found, (size_t)group + 1);

		if (!f)
			return -1;
		memset(f + nfound, 0, (size_t)(group + 1 - nfound));
		found = f;
		nfound = group + 1;
	}
	found[group] = 1;
	return 0;
}

/* Every probe is resolved: an alternative the device lacks is left out
 * (with a warning, as bpftrace skips it) where another of its group is
 * there; where none is, each says so, as a probe of its own would (0),
 * or, with missing_probes = warn | ignore, is left out too (1). */
static int check_alternative(const struct plyc_probe_ctx *c)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const struct plyc_kprobe_data *d = D(c);
	const struct kstate *k = c->state;

	if (!d->group || k->funcs.n || is_address(d->target))
		return 0;
	if (d->group < nfound && found[d->group]) {
		if (P->missing_probes != PLYC_MISSING_IGNORE)
			fprintf(stderr, "%s: warning: %s: no kernel function %s %s on this device: left out, "
				"its probe's other attach points run\n", pr->where, pr->spec,
				plyc_has_glob(d->target) ? "matches" : "named", d->target);
		return 0;
	}
	if (P->missing_probes != PLYC_MISSING_ERROR) {
		if (P->missing_probes == PLYC_MISSING_WARN)
			fprintf(stderr, "%s: warning: %s: no kernel function %s %s on this device, nor any other "
				"attach point of this probe: left out\n", pr->where, pr->spec,
				plyc_has_glob(d->target) ? "matches" : "named", d->target);
		return 1;
	}
	return plyc_probe_error(P, pr, "no kernel function %s %s on this device, nor any other attach "
				"point of this probe", plyc_has_glob(d->target) ? "matches" : "named", d->target);
}

/* missing_probes: neither the kprobe nor its twin may load (the twin is
 * tied to its function at load). */
static void leave_out(struct plyc_probe_ctx *c, struct bpf_object *obj)
{
	const char *progs[2] = { c->pr->prog, D(c)->fentry_prog };
	struct kstate *k = c->state;
	int i;

	for (i = 0; i < 2; i++) {
		struct bpf_program *bp = progs[i] ? bpf_object__find_program_by_name(obj, progs[i]) : NULL;

		if (bp)
			bpf_program__set_autoload(bp, false);
	}
	if (k)
		k->left_out = 1;
}

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const char *target = D(c)->target;
	struct kstate *k;
	int err;

	if (!(c->state = k = calloc(1, sizeof(*k))))
		return -1;
	if (is_address(target))
		return group_found(D(c)->group);
	if (D(c)->names && libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) != 1)
		return plyc_probe_fatal(P, pr, "'probe' in a %s wildcard needs BPF cookies, which this kernel "
					"lacks (Linux 5.15 has them)", D(c)->retprobe ? "kretprobe" : "kprobe");
	if (!plyc_tracefs() && access("/proc/kallsyms", R_OK))
		return plyc_probe_fatal(P, pr, "cannot list the kernel's functions (no tracefs, no /proc/kallsyms)");
	if (D(c)->module) {
		err = plyc_kfuncs_in_module(target, plyc_has_glob(target), D(c)->module, &k->funcs);
		if (err == -ENOENT)
			return plyc_probe_error(P, pr, "no function %s in module %s on this device%s", target,
						D(c)->module, module_state(D(c)->module));
		if (err)
			return plyc_probe_fatal(P, pr, "cannot read /proc/kallsyms: %s", strerror(-err));
		return group_found(D(c)->group);
	}
	err = plyc_kfuncs_resolve(target, plyc_has_glob(target), &k->funcs);
	if (err == -ENOENT && D(c)->group)
		return 0;   /* an alternative the device lacks: prepare() decides */
	if (!err && group_found(D(c)->group))
		return -1;
	if (err == -ENOENT && plyc_has_glob(target))
		return plyc_probe_error(P, pr, "no kernel function on this device matches %s", target);
	if (err == -ENOENT) {
		char near[512];

		plyc_kfunc_near(target, near, sizeof(near));
		return plyc_probe_error(P, pr, "no kernel function %s on this device%s%s", target,
					near[0] ? "; near: " : "", near);
	}
	if (err)
		return plyc_probe_fatal(P, pr, "cannot list the kernel's functions: %s", strerror(-err));
	return 0;
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
int plyc_kprobe_multi_works(const char *sym)
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

/* Run the probe as its fentry/fexit twin? Only where the device resolved the
 * function the twin was built for, with the same number of arguments in
 * its BTF, and fentry works there. PLYC_NO_FENTRY=1 keeps kprobes (to
 * compare them). */
static int use_fentry(const struct plyc_kprobe_data *d, const struct plyc_kfuncs *k)
{
	const struct btf_type *fn, *proto;
	int id;

	if (!d->fentry_prog || getenv("PLYC_NO_FENTRY") || k->n != 1 || strcmp(k->names[0], d->fentry_func))
		return 0;
	if (!vmlinux && !(vmlinux = btf__load_vmlinux_btf()))
		return 0;
	id = btf__find_by_name_kind(vmlinux, d->fentry_func, BTF_KIND_FUNC);
	if (id < 0)
		return 0;
	fn = btf__type_by_id(vmlinux, id);
	proto = btf__type_by_id(vmlinux, fn->type);
	if (!proto || btf_vlen(proto) != d->fentry_nargs)
		return 0;
	return !plyc_trampoline_takes(id, -1, d->retprobe, d->fentry_ctx, 0);
}

/* The twin or the kprobe (a kprobe needs kprobes in the kernel); several
 * functions by kprobe.multi where every one is ftrace-able and it works. */
static int prepare(struct plyc_probe_ctx *c, struct bpf_object *obj)
{
	const struct plyc_probe *pr = c->pr;
	const struct plyc_kprobe_data *d = D(c);
	struct kstate *k = c->state;
	struct bpf_program *kp = bpf_object__find_program_by_name(obj, pr->prog);
	size_t j;

	switch (check_alternative(c)) {
	case 0:
		break;
	case 1:
		leave_out(c, obj);
		return 0;
	default:
		return -1;
	}
	if (d->fentry_prog) {
		struct bpf_program *fp = bpf_object__find_program_by_name(obj, d->fentry_prog);

		if (kp && fp && use_fentry(d, &k->funcs) && !bpf_program__set_attach_target(fp, 0, d->fentry_func)) {
			bpf_program__set_autoload(kp, false);
			k->fentry = 1;
		} else if (fp) {
			bpf_program__set_autoload(fp, false);
		}
	}
	if (!k->fentry && d->fentry_only)
		return plyc_probe_error(c->prog, pr, "%s needs this probe to run as %s, which this device "
					"can't do here (fentry: Linux 5.5 x86_64, 6.0 arm64; BTF)", d->fentry_only,
					d->retprobe ? "fexit" : "fentry");
	if (!k->fentry && !plyc_probe_pmu_available("kprobe"))
		return plyc_probe_error(c->prog, pr, "this kernel has no kprobes (built without "
					"CONFIG_KPROBES)%s", d->fentry_prog ? ", and fentry can't attach here" : "");
	if (!kp || k->funcs.n < 2)
		return 0;
	/* kprobe.multi attaches through ftrace: every function must be
	 * ftrace-able, or the whole attachment fails. */
	for (j = 0; j < k->funcs.n && plyc_kfunc_ftraceable(k->funcs.names[j]); j++)
		;
	if (j < k->funcs.n)
		return 0;
	if (use_multi == 0)
		use_multi = plyc_kprobe_multi_works(k->funcs.names[0]) ? 1 : -1;
	if (use_multi > 0) {
		bpf_program__set_expected_attach_type(kp, BPF_TRACE_KPROBE_MULTI);
		k->multi = 1;
	}
	return 0;
}

/* A kprobe on one function failed. A symbol that isn't among the
 * functions ftrace lists is most likely not traceable at all (notrace, on
 * the kprobe blacklist, or a local copy of an inline function, like 6.1's
 * dev_queue_xmit): say so, with the traceable functions of a near name. */
static int kprobe_refused(const struct plyc_probe_ctx *c, const char *func, int err)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	char near[512];

#ifdef PLYC_FTRACE_SITE
	if (err == EINVAL && D(c)->retprobe && plyc_kfunc_ftraceable(func))
		return plyc_probe_error(P, pr, "cannot attach to %s: this kernel has no kprobes on ftrace "
					"sites (CONFIG_KPROBES_ON_FTRACE), where a kretprobe must go: it runs as "
					"fexit where the build's BTF (--btf) has the function as the device does", func);
#endif
	if ((err != EINVAL && err != ENOENT && err != EOPNOTSUPP) || plyc_kfunc_ftraceable(func) ||
	    !plyc_kfunc_in_kallsyms(func))
		return plyc_probe_error(P, pr, "cannot attach to %s: %s", func, plyc_errstr(err));
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
static struct bpf_link *kprobe_link(const struct plyc_probe_ctx *c, struct bpf_program *bp, const char *func,
				    __u64 cookie)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = D(c)->retprobe, .offset = D(c)->offset,
		    .bpf_cookie = cookie);
	struct bpf_link *link = bpf_program__attach_kprobe_opts(bp, func, &opts);

#ifdef PLYC_FTRACE_SITE
	if (!link && errno == EINVAL && !opts.retprobe && !D(c)->offset && plyc_kfunc_ftraceable(func)) {
		opts.offset = PLYC_FTRACE_SITE;
		link = bpf_program__attach_kprobe_opts(bp, func, &opts);
		if (!link)
			errno = EINVAL;
		else if (c->prog->verbose)
			fprintf(stderr, "%s: %s: at %s+%d, past its ftrace site (no kprobes on ftrace here)\n",
				c->pr->where, c->pr->spec, func, PLYC_FTRACE_SITE);
	}
#endif
	return link;
}

/* `probe` in a glob: function i's cookie, under which its name goes in
 * plyc_tp_names (runtime-c/bpf/plyc.bpf.h) before it can fire. Kprobes
 * take ids from 2^31 up, tracepoints from 1 (tracepoint.c). 0: no name
 * is read, or it could not be recorded (told). */
static __u64 name_cookie(const struct plyc_probe_ctx *c, struct bpf_object *obj, const char *func)
{
	static __u32 last = 1U << 31;
	char name[PLYC_TP_NAME_SIZE] = "";

	if (!D(c)->names)
		return 0;
	snprintf(name, sizeof(name), "%s:%s", D(c)->retprobe ? "kretprobe" : "kprobe", func);
	return plyc_name_cookie(c, obj, &last, name);
}

/* The fentry/fexit twin chosen before load. */
static int attach_fentry(struct plyc_probe_ctx *c, struct bpf_object *obj, struct plyc_links *links)
{
	const struct plyc_kprobe_data *d = D(c);
	struct bpf_program *fp = bpf_object__find_program_by_name(obj, d->fentry_prog);
	struct bpf_link *link = fp ? bpf_program__attach_trace(fp) : NULL;

	if (!link)
		return plyc_probe_error(c->prog, c->pr, "cannot attach to %s: %s", d->fentry_func,
					plyc_errstr(errno));
	if (c->prog->verbose)
		fprintf(stderr, "%s: %s: running as %s\n", c->pr->where, c->pr->spec,
			d->retprobe ? "fexit" : "fentry");
	return plyc_add_link(links, link);
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	struct kstate *ks = c->state;
	struct plyc_kfuncs *k = &ks->funcs;
	int ret = D(c)->retprobe, attached = 0, failed = 0;
	struct bpf_link *link;
	size_t j;

	/* Every probe is prepared: the twins are chosen. */
	btf__free(vmlinux);
	vmlinux = NULL;
	if (ks->left_out)
		return 0;
	if (ks->fentry)
		return attach_fentry(c, obj, links);
	if (!k->n && D(c)->group && !is_address(D(c)->target))   /* an alternative left out */
		return 0;
	if (is_address(D(c)->target)) {
		LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = ret,
			    .offset = (size_t)strtoull(D(c)->target, NULL, 16));

		link = bpf_program__attach_kprobe_opts(bp, NULL, &opts);
		if (!link)
			return plyc_probe_error(P, pr, "cannot attach: %s", plyc_errstr(errno));
		return plyc_add_link(links, link);
	}
	if (ks->multi) {
		LIBBPF_OPTS(bpf_kprobe_multi_opts, opts, .syms = (const char **)k->names, .cnt = k->n,
			    .retprobe = ret);
		__u64 *cookies = D(c)->names ? calloc(k->n, sizeof(*cookies)) : NULL;

		if (D(c)->names && !cookies)
			return -1;
		for (j = 0; cookies && j < k->n; j++)
			if (!(cookies[j] = name_cookie(c, obj, k->names[j]))) {
				free(cookies);
				return -1;
			}
		opts.cookies = cookies;
		link = bpf_program__attach_kprobe_multi_opts(bp, NULL, &opts);
		j = (size_t)errno;
		free(cookies);
		errno = (int)j;
		if (!link)
			return plyc_probe_error(P, pr, "cannot attach to the %zu matching functions: %s",
						k->n, plyc_errstr(errno));
		if (P->verbose)
			fprintf(stderr, "%s: %s: %zu functions (kprobe.multi)\n", pr->where, pr->spec, k->n);
		return plyc_add_link(links, link);
	}
	for (j = 0; j < k->n; j++) {
		__u64 cookie = name_cookie(c, obj, k->names[j]);

		if (D(c)->names && !cookie)
			return -1;
		link = kprobe_link(c, bp, k->names[j], cookie);
		if (!link) {
			/* One function of a glob that can't be probed is not fatal. */
			if (k->n == 1 && errno == EILSEQ)
				return plyc_probe_error(P, pr, "%s+%llu is not the start of an instruction",
							k->names[j], (unsigned long long)D(c)->offset);
			if (k->n == 1)
				return kprobe_refused(c, k->names[j], errno);
			if (failed++ < 5)
				fprintf(stderr, "%s: warning: %s: cannot attach to %s: %s\n", pr->where,
					pr->spec, k->names[j], plyc_errstr(errno));
			continue;
		}
		if (plyc_add_link(links, link))
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


static int wrapped(const struct plyc_probe_ctx *c)
{
	const struct kstate *k = c->state;

	return k ? k->funcs.wrapped : 0;
}

static void release(struct plyc_probe_ctx *c)
{
	struct kstate *k = c->state;

	if (k)
		plyc_kfuncs_free(&k->funcs);
	free(found);
	found = NULL;
	nfound = 0;
	btf__free(vmlinux);
	vmlinux = NULL;
}

/* each function a glob matches, as bpftrace counts them */
static int count(const struct plyc_probe_ctx *c)
{
	const struct kstate *k = c->state;

	if (k && k->left_out)
		return 0;
	if (k && plyc_has_glob(D(c)->target) && !k->funcs.n && D(c)->group)
		return 0;   /* a glob left out (an exact name left out counts, as in bpftrace) */
	return k && plyc_has_glob(D(c)->target) && k->funcs.n ? (int)k->funcs.n : 1;
}

/* each function it resolved to, as bpftrace's -l names it */
static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	const struct kstate *k = c->state;
	const char *kind = D(c)->retprobe ? "kretprobe" : "kprobe", *mod = D(c)->module;
	size_t j;

	if (!k || k->left_out)
		return;
	for (j = 0; j < k->funcs.n; j++)
		fprintf(fp, "%s:%s%s%s\n", kind, mod && *mod ? mod : "", mod && *mod ? ":" : "", k->funcs.names[j]);
	if (!k->funcs.n)
		fprintf(fp, "%s:%s\n", kind, D(c)->target);
}

const struct plyc_provider plyc_provider_kprobe = {
	.name = "kprobe", .resolve = resolve, .prepare = prepare, .leave_out = leave_out, .attach = attach,
	.wrapped = wrapped, .list = list,
	.release = release, .count = count,
};

const struct plyc_provider plyc_provider_kretprobe = {
	.name = "kretprobe", .resolve = resolve, .prepare = prepare, .leave_out = leave_out, .attach = attach,
	.wrapped = wrapped, .list = list,
	.release = release, .count = count,
};
