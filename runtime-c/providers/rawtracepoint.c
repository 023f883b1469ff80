/* rawtracepoint: the program runs with the tracepoint's TP_PROTO arguments
 * as words (Linux 4.17). The kernel finds the tracepoint by name, in
 * vmlinux or a loaded module, and checks at attach that the program reads
 * no more words than the tracepoint passes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "plyc_attach.h"
#include "providers/rawtracepoint.h"

/* rawtracepoint:MODULE:event: the kernel attaches by the event's name
 * alone, so that the module's own is taken only where the module is loaded
 * and its BTF has the event's btf_trace_ typedef (not vmlinux's of the
 * name: bpftrace's "No matches"). 0, or the error told. */
static int in_module(struct plyc_probe_ctx *c, const struct plyc_rawtracepoint_data *d)
{
	struct btf *base = btf__load_vmlinux_btf(), *mod;
	char name[256];
	int id, own = 0;

	if (!base)
		return plyc_probe_error(c->prog, c->pr, "rawtracepoint:%s:%s: the module's tracepoints are found "
					"by the kernel's BTF, which this kernel lacks", d->module, d->target);
	mod = btf__load_module_btf(d->module, base);
	if (mod) {
		snprintf(name, sizeof(name), "btf_trace_%s", d->target);
		id = btf__find_by_name_kind(mod, name, BTF_KIND_TYPEDEF);
		own = id > 0 && (__u32)id >= btf__type_cnt(base);
		btf__free(mod);
	}
	btf__free(base);
	if (!mod)
		return plyc_probe_error(c->prog, c->pr, "no module %s with BTF is loaded on this kernel", d->module);
	if (!own)
		return plyc_probe_error(c->prog, c->pr, "module %s has no raw tracepoint %s", d->module, d->target);
	return 0;
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_rawtracepoint_data *d = c->pr->data;
	struct bpf_link *link;
	int err;

	(void)obj;
	if (d->module && in_module(c, d))
		return -1;
	link = bpf_program__attach_raw_tracepoint(bp, d->target);
	err = errno;
	if (link)
		return plyc_add_link(links, link);
	if (err == ENOENT)
		return plyc_probe_error(c->prog, c->pr, "no raw tracepoint %s on this kernel", d->target);
	if (err == EINVAL)
		return plyc_probe_error(c->prog, c->pr, "cannot attach to %s: the script reads more arguments "
					"than this kernel's %s passes (its types are the build machine's)",
					d->target, d->target);
	return plyc_probe_error(c->prog, c->pr, "cannot attach to %s: %s", d->target, plyc_errstr(err));
}

static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	fprintf(fp, "rawtracepoint:%s\n", ((const struct plyc_rawtracepoint_data *)c->pr->data)->target);
}

const struct plyc_provider plyc_provider_rawtracepoint = {
	.name = "rawtracepoint", .attach = attach, .list = list,
};
