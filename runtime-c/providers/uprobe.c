/* uprobe / uretprobe: the binary or library found on the device (by path,
 * or a library by short name), the function by name and version to its
 * offset in the file, or an address in it; a glob, every function whose
 * name matches. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_attach.h"
#include "plyc_tp.h"
#include "plyc_uprobes.h"
#include "providers/uprobe.h"

struct ustate {
	char binary[PATH_MAX];
	uint64_t offset;           /* the function's, in the file */
	uint64_t size;             /* the function's (0: not known) */
	struct plyc_ufuncs funcs;  /* a glob's */
};

static const struct plyc_uprobe_data *D(const struct plyc_probe_ctx *c)
{
	return c->pr->data;
}

static int is_address(const char *target)
{
	return !strncmp(target, "0x", 2);
}

/* A uprobe's function, by name (and version), to its offset in the file:
 * libbpf 1.1 refuses a name that several versions of the function share. */
static int resolve_func(struct plyc_probe_ctx *c, struct ustate *u)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const char *target = D(c)->target, *bin = u->binary, *at = strchr(target, '@');
	int len = at ? (int)(at - target) : (int)strlen(target);
	char versions[1024];
	int err = plyc_uprobe_offset(bin, target, &u->offset, &u->size, versions, sizeof(versions));

	switch (err) {
	case 0:
		/* FUNC+N past the function's end lands in another one, maybe
		 * mid-instruction, where the breakpoint corrupts the code the
		 * traced program runs (bpftrace 0.27's check and words) */
		if (u->size && D(c)->offset >= u->size)
			return plyc_probe_error(P, pr, "Offset outside the function bounds ('%.*s' size is %llu)",
						len, target, (unsigned long long)u->size);
		return 0;
	case -ENOENT:
		return plyc_probe_error(P, pr, "no function %.*s in %s", len, target, bin);
	case -ENOMSG:
		if (at)
			return plyc_probe_error(P, pr, "%s has no %sversion %s of %.*s (it has %s)", bin,
						at[1] == '@' ? "default " : "", at[1] == '@' ? at + 2 : at + 1, len,
						target, versions);
		return plyc_probe_error(P, pr, "%s has no default version of %.*s, only %s: name one", bin,
					len, target, versions);
	case -EEXIST:
		/* Local functions of one name in several files have no version. */
		if (!strchr(versions, '@'))
			return plyc_probe_error(P, pr, "%s has several functions named %.*s: give the "
						"address of one (PATH:0xADDR)", bin, len, target);
		return plyc_probe_error(P, pr, "%s has several functions named %.*s (%s)%s", bin, len,
					target, versions, at ? "" : ": name one as NAME@VERSION");
	case -EOPNOTSUPP:
		/* Called once, by the dynamic loader: a probe there never fires. */
		return plyc_probe_error(P, pr, "%.*s in %s is an IFUNC: its address is the resolver that "
					"picks an implementation when the library is loaded; probe the "
					"implementation instead: %s%s", len, target, bin,
					versions[0] ? versions : "its address (PATH:0xADDR, from the "
					"library's debug symbols)", versions[0] ? " (by name or PATH:0xADDR)" : "");
	case -EILSEQ:
		/* The kernel would refuse it (EINVAL): say why. */
		return plyc_probe_error(P, pr, "%.*s in %s is Thumb code: 32-bit ARM kernels put uprobes only "
					"on ARM-mode instructions (code built with -marm)", len, target, bin);
	default:
		return plyc_probe_error(P, pr, "cannot read the symbols of %s: %s", bin, plyc_errstr(err));
	}
}

/* A glob's functions; `probe` in it names each by a BPF cookie. */
static int resolve_glob(struct plyc_probe_ctx *c, struct ustate *u)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const struct plyc_uprobe_data *d = D(c);
	int err;

	if (d->names && libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) != 1)
		return plyc_probe_error(P, pr, "'probe' in a %s wildcard needs BPF cookies, which this kernel "
					"lacks (Linux 5.15 has them)", d->retprobe ? "uretprobe" : "uprobe");
	err = plyc_uprobe_glob(u->binary, d->target, &u->funcs);
	if (err == -ENOENT)
		return plyc_probe_error(P, pr, "no function in %s matches %s", u->binary, d->target);
	if (err)
		return plyc_probe_error(P, pr, "cannot read the symbols of %s: %s", u->binary, plyc_errstr(-err));
	return 0;
}

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_uprobe_data *d = D(c);
	struct ustate *u;
	int err;

	if (!(c->state = u = calloc(1, sizeof(*u))))
		return -1;
	err = plyc_resolve_binary(d->path, u->binary, sizeof(u->binary));
	if (err)
		return plyc_binary_error(c, d->path, err);
	if (plyc_has_glob(d->target))
		return resolve_glob(c, u);
	return is_address(d->target) ? 0 : resolve_func(c, u);
}

/* `probe` in a glob: function i's cookie, under which its name goes in
 * plyc_tp_names (runtime-c/bpf/plyc.bpf.h) before it can fire. Uprobes
 * take ids from 3 << 30 up (kprobes from 2^31, tracepoints from 1). 0: no
 * name is read, or it could not be recorded (told). */
static __u64 name_cookie(const struct plyc_probe_ctx *c, struct bpf_object *obj, const char *func)
{
	static __u32 last = 3U << 30;
	char name[PLYC_TP_NAME_SIZE] = "";

	if (!D(c)->names)
		return 0;
	snprintf(name, sizeof(name), "%s:%s:%s", D(c)->retprobe ? "uretprobe" : "uprobe", D(c)->path, func);
	return plyc_name_cookie(c, obj, &last, name);
}

/* Each function of a glob; one that can't be probed is not fatal. */
static int attach_glob(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		       struct plyc_links *links)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	struct ustate *u = c->state;
	int attached = 0, failed = 0;
	size_t j;

	for (j = 0; j < u->funcs.n; j++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = D(c)->retprobe);
		struct bpf_link *link;

		opts.bpf_cookie = name_cookie(c, obj, u->funcs.names[j]);
		if (D(c)->names && !opts.bpf_cookie)
			return -1;
		link = bpf_program__attach_uprobe_opts(bp, (pid_t)P->target_pid, u->binary,
						       (size_t)u->funcs.offsets[j], &opts);
		if (!link) {
			if (failed++ < 5)
				fprintf(stderr, "%s: warning: %s: cannot attach to %s in %s: %s\n", pr->where,
					pr->spec, u->funcs.names[j], u->binary, plyc_errstr(errno));
			continue;
		}
		if (plyc_add_link(links, link))
			return -1;
		attached++;
	}
	if (failed || P->verbose)
		fprintf(stderr, "%s: %s: attached to %d of %zu functions\n", pr->where, pr->spec, attached,
			u->funcs.n);
	if (!attached)
		return plyc_probe_error(P, pr, "could not attach to any matching function");
	return 0;
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const struct plyc_uprobe_data *d = D(c);
	struct ustate *u = c->state;
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = d->retprobe);
	size_t offset = d->offset;
	struct bpf_link *link;

	if (plyc_has_glob(d->target))
		return attach_glob(c, obj, bp, links);
	if (is_address(d->target)) {
		long off = plyc_vaddr_to_offset(u->binary, strtoull(d->target, NULL, 16));

		if (off < 0)
			return plyc_probe_error(P, pr, "%s is not an address of code in %s", d->target, u->binary);
		offset = (size_t)off;
	} else {
		offset += u->offset;
	}
	link = bpf_program__attach_uprobe_opts(bp, (pid_t)P->target_pid, u->binary, offset, &opts);
	if (!link)
		return plyc_probe_error(P, pr, "cannot attach to %s in %s: %s", d->target, u->binary,
					plyc_errstr(errno));
	return plyc_add_link(links, link);
}

static void release(struct plyc_probe_ctx *c)
{
	struct ustate *u = c->state;

	if (u)
		plyc_ufuncs_free(&u->funcs);
}

/* each function a glob matches, as bpftrace counts them */
static int count(const struct plyc_probe_ctx *c)
{
	const struct ustate *u = c->state;

	return u && u->funcs.n ? (int)u->funcs.n : 1;
}

/* the binary as found here, and each function a glob matched */
static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	const struct ustate *u = c->state;
	const char *kind = D(c)->retprobe ? "uretprobe" : "uprobe";
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->funcs.n; i++)
		fprintf(fp, "%s:%s:%s\n", kind, u->binary, u->funcs.names[i]);
	if (!plyc_has_glob(D(c)->target)) {
		if (D(c)->offset)
			fprintf(fp, "%s:%s:%s+%llu\n", kind, u->binary, D(c)->target, (unsigned long long)D(c)->offset);
		else
			fprintf(fp, "%s:%s:%s\n", kind, u->binary, D(c)->target);
	}
}

const struct plyc_provider plyc_provider_uprobe = {
	.name = "uprobe", .resolve = resolve, .attach = attach, .release = release, .count = count, .list = list,
};

const struct plyc_provider plyc_provider_uretprobe = {
	.name = "uretprobe", .resolve = resolve, .attach = attach, .release = release, .count = count, .list = list,
};
