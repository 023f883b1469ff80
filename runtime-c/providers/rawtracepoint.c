/* rawtracepoint: the program runs with the tracepoint's TP_PROTO arguments
 * as words (Linux 4.17). The kernel finds the tracepoint by name, in
 * vmlinux or a loaded module, and checks at attach that the program reads
 * no more words than the tracepoint passes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plyc_attach.h"
#include "providers/rawtracepoint.h"

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_rawtracepoint_data *d = c->pr->data;
	struct bpf_link *link = bpf_program__attach_raw_tracepoint(bp, d->target);
	int err = errno;

	(void)obj;
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
