/* kfunc / kretfunc: fentry / fexit programs, attached by BPF trampolines
 * to the functions the target names in the device's BTF (vmlinux's, or a
 * module's). A wildcard's program is loaded once per matched function: the
 * first by libbpf with the object, the others from its relocated
 * instructions, each with that function as its attach target (a tracing
 * program is verified for one function). The program reads fixed context
 * words (the build machine's prototypes): a function whose prototype on the
 * device puts an argument read elsewhere is refused (exact name) or left
 * out (wildcard). `probe` in a wildcard: each function's link carries a BPF
 * cookie under which its name is in plyc_tp_names (Linux 6.0: fentry
 * links take cookies, and the verifier lets tracing programs read them). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "plyc_attach.h"
#include "plyc_kfuncs.h"
#include "plyc_rt.h"
#include "plyc_tp.h"
#include "providers/kfunc.h"

struct kfstate {
	struct btf *btf;           /* vmlinux's, or the module's (split on vmlinux's) */
	struct btf *base;          /* vmlinux's, under a module's */
	char **names;              /* the functions matched, as attached */
	int *ids;                  /* ... their BTF ids */
	size_t n;
	int *fds;                  /* the clones' programs and links (2 per function after the first) */
	size_t nfds;
	int module_fd;             /* the module's BTF object in the kernel (a clone's target's), or -1 */
};

static const struct plyc_kfunc_data *D(const struct plyc_probe_ctx *c)
{
	return c->pr->data;
}

static int has(const struct kfstate *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->names[i], name))
			return 1;
	return 0;
}

static int add(struct kfstate *k, const char *name, int id)
{
	char **names = realloc(k->names, (k->n + 1) * sizeof(*names));
	int *ids;

	if (!names)
		return -ENOMEM;
	k->names = names;
	if (!(ids = realloc(k->ids, (k->n + 1) * sizeof(*ids))))
		return -ENOMEM;
	k->ids = ids;
	if (!(k->names[k->n] = strdup(name)))
		return -ENOMEM;
	k->ids[k->n++] = id;
	return 0;
}

/* Why the device's prototype of func (BTF id) doesn't fit the words the
 * program reads, in why; 0 when it fits. */
static int misfit(const struct plyc_probe_ctx *c, const struct btf *btf, int id, char *why, size_t len)
{
	const struct btf_type *proto = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	const struct btf_param *params = btf_params(proto);
	int nargs = btf_vlen(proto);
	const char *p = D(c)->args;
	char name[128];
	int slot, used;

	while (p && *p && sscanf(p, "%127[^@]@%d%n", name, &slot, &used) == 2) {
		p += used + (p[used] == ',');
		if (slot >= nargs || strcmp(btf__name_by_offset(btf, params[slot].name_off), name)) {
			snprintf(why, len, "its argument %d is not '%s' here", slot, name);
			return 1;
		}
	}
	if (D(c)->ret_slot >= 0 && D(c)->ret_slot != nargs) {
		snprintf(why, len, "it takes %d arguments here, not %d", nargs, D(c)->ret_slot);
		return 1;
	}
	return 0;
}

/* The functions a glob matches in the BTF, traceable ones only where the
 * device lists them (available_filter_functions), as bpftrace does. */
static int match_glob(struct plyc_probe_ctx *c, struct kfstate *k)
{
	__u32 i, n = btf__type_cnt(k->btf), skipped = 0;
	int listed = plyc_kfuncs_ftrace_listed(), err;
	char why[160];

	/* A module's own types follow vmlinux's. */
	for (i = k->base ? btf__type_cnt(k->base) : 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(k->btf, i);
		const char *name = t ? btf__name_by_offset(k->btf, t->name_off) : NULL;

		if (!t || !btf_is_func(t) || !name || !plyc_glob_match(D(c)->target, name) ||
		    (listed && !plyc_kfunc_ftraceable(name)) || has(k, name))
			continue;
		if (misfit(c, k->btf, (int)i, why, sizeof(why))) {
			if (skipped++ < 5)
				fprintf(stderr, "%s: warning: %s: leaving out %s: %s\n", c->pr->where, c->pr->spec,
					name, why);
			continue;
		}
		if ((err = add(k, name, (int)i)))
			return err;
	}
	return 0;
}

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_kfunc_data *d = D(c);
	struct kfstate *k;
	char why[160];
	int id, err;

	if (!(c->state = k = calloc(1, sizeof(*k))))
		return -1;
	k->module_fd = -1;
	k->btf = btf__load_vmlinux_btf();
	if (!k->btf)
		return plyc_probe_fatal(c->prog, c->pr, "kfunc probes need the kernel's BTF "
					"(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF), which this kernel lacks");
	if (d->module) {
		k->base = k->btf;
		k->btf = btf__load_module_btf(d->module, k->base);
		if (!k->btf)
			return plyc_probe_error(c->prog, c->pr, "no module %s with BTF is loaded on this kernel",
						d->module);
	}
	if (plyc_has_glob(d->target)) {
		if ((err = match_glob(c, k)))
			return plyc_probe_fatal(c->prog, c->pr, "cannot list the kernel's functions: %s",
						strerror(-err));
		if (!k->n)
			return plyc_probe_error(c->prog, c->pr, "no traceable kernel function on this device "
						"matches %s", d->target);
		return 0;
	}
	id = btf__find_by_name_kind(k->btf, d->target, BTF_KIND_FUNC);
	if (id < 0) {
		char near[512];

		plyc_kfunc_near(d->target, near, sizeof(near));
		return plyc_probe_error(c->prog, c->pr, "no kernel function %s in %s's BTF on this device%s%s",
					d->target, d->module ? d->module : "the kernel", near[0] ? "; near: " : "", near);
	}
	if (misfit(c, k->btf, id, why, sizeof(why)))
		return plyc_probe_fatal(c->prog, c->pr, "%s differs from the build machine's: %s", d->target, why);
	return add(k, d->target, id) ? -1 : 0;
}

/* The context words the program reads, as a mask (bit n: ctx[n]). */
static __u64 words_read(const struct plyc_kfunc_data *d)
{
	const char *p = d->args;
	__u64 mask = d->ret_slot >= 0 ? 1ULL << d->ret_slot : 0;
	int slot, used;
	char name[128];

	while (p && *p && sscanf(p, "%127[^@]@%d%n", name, &slot, &used) == 2) {
		p += used + (p[used] == ',');
		mask |= 1ULL << slot;
	}
	return mask;
}

static int module_btf_fd(const char *name);

/* The first function is the object's program's target; fentry must work
 * here, and the verifier take the words read (5.10 refuses an argument
 * that points to other than a struct). */
static int prepare(struct plyc_probe_ctx *c, struct bpf_object *obj)
{
	const struct plyc_kfunc_data *d = D(c);
	struct kfstate *k = c->state;
	struct bpf_program *bp = bpf_object__find_program_by_name(obj, c->pr->prog);
	int err;

	if (!d->module) {
		if (plyc_trampoline_takes(k->ids[0], -1, d->retprobe, 0, 0))
			return plyc_probe_error(c->prog, c->pr, "this kernel cannot attach BPF trampolines "
						"(fentry/fexit) to %s: kfunc probes need them (x86_64 has them "
						"since Linux 5.5, arm64 since 6.0, 32-bit ARM not at all); "
						"kprobe:%s does not need them", k->names[0],
						plyc_has_glob(d->target) ? d->target : k->names[0]);
		if ((err = plyc_trampoline_takes(k->ids[0], -1, d->retprobe, words_read(d), 0)))
			return plyc_probe_error(c->prog, c->pr, "this kernel's verifier refuses reading the "
						"arguments %s of %s that the script reads (Linux 5.10 takes only "
						"pointers to structs): %s", d->args && d->args[0] ? d->args : "(retval)",
						k->names[0], plyc_errstr(err));
	}
	if (d->names) {
		/* a module's function id is in its split BTF: name the object */
		if (d->module && k->module_fd < 0 && (k->module_fd = module_btf_fd(d->module)) < 0)
			return plyc_probe_error(c->prog, c->pr, "cannot find module %s's BTF in the kernel",
						d->module);
		if ((err = plyc_trampoline_takes(k->ids[0], k->module_fd, d->retprobe, 0, 1)))
			return plyc_probe_fatal(c->prog, c->pr, "'probe' in a %s wildcard needs BPF cookies on "
						"fentry/fexit programs, which this kernel lacks (Linux 6.0 has "
						"them; %s:%s%s%s takes them from 5.15): %s",
						d->retprobe ? "kretfunc" : "kfunc", d->retprobe ? "kretprobe" : "kprobe",
						d->module ? d->module : "", d->module ? ":" : "", d->target,
						plyc_errstr(err));
	}
	if (!bp || bpf_program__set_attach_target(bp, 0, k->names[0]))
		return plyc_probe_error(c->prog, c->pr, "cannot set %s as the program's target: %s", k->names[0],
					plyc_errstr(errno));
	return 0;
}

/* The kernel's BTF object of module `name` (its fd), which a program
 * attached to one of its functions names with the function's id; -1 where
 * none is found. */
static int module_btf_fd(const char *name)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = { 0 };
		__u32 len = sizeof(info);
		char got[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (__u64)(unsigned long)got;
		info.name_len = sizeof(got);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf && !strcmp(got, name))
			return fd;
		close(fd);
	}
	return -1;
}

/* `probe` in a wildcard: function i's cookie, under which its name goes in
 * plyc_tp_names (runtime-c/bpf/plyc.bpf.h) before it can fire, as 0.27
 * names it (fentry:vmlinux:vfs_read). kfuncs take ids from 2^30 up
 * (tracepoints from 1, uprobes from 3 << 30, kprobes from 2^31). 0: no
 * name is read, or it could not be recorded (told). */
static __u64 name_cookie(const struct plyc_probe_ctx *c, struct bpf_object *obj, const char *func)
{
	static __u32 last = 1U << 30;
	char name[PLYC_TP_NAME_SIZE] = "";

	if (!D(c)->names)
		return 0;
	snprintf(name, sizeof(name), "%s:%s:%s", D(c)->retprobe ? "fexit" : "fentry",
		 D(c)->module ? D(c)->module : "vmlinux", func);
	return plyc_name_cookie(c, obj, &last, name);
}

/* Function i of a wildcard: the program's instructions loaded again for
 * it, its link carrying cookie (0: none). */
static int attach_clone(struct plyc_probe_ctx *c, struct bpf_program *bp, size_t i, __u64 cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .tracing.cookie = cookie);
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = D(c)->retprobe ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)((struct kfstate *)c->state)->ids[i]);
	struct kfstate *k = c->state;
	int *fds = realloc(k->fds, (k->nfds + 2) * sizeof(*fds));
	int prog, link;

	if (!fds)
		return ENOMEM;
	k->fds = fds;
	if (D(c)->module) {
		/* a module's function id is in its split BTF: name the object */
		if (k->module_fd < 0 && (k->module_fd = module_btf_fd(D(c)->module)) < 0)
			return ENOENT;
		opts.attach_btf_obj_fd = (__u32)k->module_fd;
	}
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, bpf_program__name(bp), "GPL", bpf_program__insns(bp),
			     bpf_program__insn_cnt(bp), &opts);
	if (prog < 0)
		return errno;
	link = cookie ? bpf_link_create(prog, 0, opts.expected_attach_type, &lopts)
		      : bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0) {
		int err = errno;

		close(prog);
		return err;
	}
	k->fds[k->nfds++] = prog;
	k->fds[k->nfds++] = link;
	return 0;
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	struct kfstate *k = c->state;
	LIBBPF_OPTS(bpf_trace_opts, opts, .cookie = name_cookie(c, obj, k->names[0]));
	struct bpf_link *link;
	size_t i, attached = 1, failed = 0;
	__u64 cookie = 0;
	int err;

	if (D(c)->names && !opts.cookie)
		return -1;
	if (!(link = bpf_program__attach_trace_opts(bp, &opts)))
		return plyc_probe_error(P, pr, "cannot attach to %s: %s", k->names[0], plyc_errstr(errno));
	if (plyc_add_link(links, link))
		return -1;
	for (i = 1; i < k->n; i++) {
		if (D(c)->names && !(cookie = name_cookie(c, obj, k->names[i])))
			return -1;
		if ((err = attach_clone(c, bp, i, cookie))) {
			if (failed++ < 5)
				fprintf(stderr, "%s: warning: %s: cannot attach to %s: %s\n", pr->where, pr->spec,
					k->names[i], plyc_errstr(err));
			continue;
		}
		attached++;
	}
	if (k->n > 1 && (failed || P->verbose))
		fprintf(stderr, "%s: %s: attached to %zu of %zu functions\n", pr->where, pr->spec, attached, k->n);
	return 0;
}

/* missing_probes: the function is missing, the program must not load. */
static void leave_out(struct plyc_probe_ctx *c, struct bpf_object *obj)
{
	struct bpf_program *bp = bpf_object__find_program_by_name(obj, c->pr->prog);

	if (bp)
		bpf_program__set_autoload(bp, false);
}

static int count(const struct plyc_probe_ctx *c)
{
	const struct kfstate *k = c->state;

	return k && k->n ? (int)k->n : 1;
}

static void release(struct plyc_probe_ctx *c)
{
	struct kfstate *k = c->state;
	size_t i;

	if (!k)
		return;
	for (i = k->nfds; i > 0; i--)
		close(k->fds[i - 1]);
	if (k->module_fd >= 0)
		close(k->module_fd);
	for (i = 0; i < k->n; i++)
		free(k->names[i]);
	free(k->fds);
	free(k->names);
	free(k->ids);
	btf__free(k->btf);
	btf__free(k->base);
	memset(k, 0, sizeof(*k));
	k->module_fd = -1;
}

/* each function it resolved to, as bpftrace 0.27's -l names it */
static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	const struct kfstate *k = c->state;
	const char *mod = D(c)->module && *D(c)->module ? D(c)->module : "vmlinux";
	size_t i;

	for (i = 0; k && i < k->n; i++)
		fprintf(fp, "%s:%s:%s\n", D(c)->retprobe ? "fexit" : "fentry", mod, k->names[i]);
}

const struct plyc_provider plyc_provider_kfunc = {
	.name = "kfunc", .resolve = resolve, .prepare = prepare, .leave_out = leave_out, .attach = attach,
	.count = count, .release = release, .list = list,
};

const struct plyc_provider plyc_provider_kretfunc = {
	.name = "kretfunc", .resolve = resolve, .prepare = prepare, .leave_out = leave_out, .attach = attach,
	.count = count, .release = release, .list = list,
};
