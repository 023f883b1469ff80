/* uprobe / uretprobe: the binary or library found on the device (by path,
 * or a library by short name), the function by name and version to its
 * offset in the file, or an address in it. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_attach.h"
#include "plyc_uprobes.h"
#include "providers/uprobe.h"

struct ustate {
	char binary[PATH_MAX];
	uint64_t offset;           /* the function's, in the file */
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
	int err = plyc_uprobe_offset(bin, target, &u->offset, versions, sizeof(versions));

	switch (err) {
	case 0:
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
	return is_address(d->target) ? 0 : resolve_func(c, u);
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

	(void)obj;
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

const struct plyc_provider plyc_provider_uprobe = {
	.name = "uprobe", .resolve = resolve, .attach = attach,
};

const struct plyc_provider plyc_provider_uretprobe = {
	.name = "uretprobe", .resolve = resolve, .attach = attach,
};
