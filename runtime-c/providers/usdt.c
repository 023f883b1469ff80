/* usdt: the binary found on the device, the probe's provider found in it
 * when not named; libbpf reads the arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_attach.h"
#include "plyc_uprobes.h"
#include "providers/usdt.h"

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_usdt_data *d = c->pr->data;
	char *binary = calloc(1, PATH_MAX);
	int err;

	if (!(c->state = binary))
		return -1;
	err = plyc_resolve_binary(d->path, binary, PATH_MAX);
	return err ? plyc_binary_error(c, d->path, err) : 0;
}

/* Before BPF cookies (5.15), libbpf's USDT code finds a probe's argument
 * spec by the address that fired, one spec per address, so it refuses a
 * second program at the same probe (EEXIST). The spec stored for the first
 * describes the same arguments: the second program is attached as a plain
 * uprobe at the probe's locations and reads its arguments through it. */
static int attach_again(struct plyc_probe_ctx *c, struct bpf_program *bp, struct plyc_links *links,
			const char *provider)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const char *binary = c->state, *name = ((const struct plyc_usdt_data *)pr->data)->name;
	uint64_t offsets[64];
	int j, n = plyc_usdt_locations(binary, provider, name, offsets, 64);

	if (n < 0)
		return plyc_probe_error(P, pr, "cannot attach to %s:%s in %s: %s", provider, name,
					binary, plyc_errstr(n));
	for (j = 0; j < n; j++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(bp, (pid_t)P->target_pid, binary,
									 (size_t)offsets[j], &opts);

		if (!link)
			return plyc_probe_error(P, pr, "cannot attach to %s:%s in %s: %s", provider,
						name, binary, plyc_errstr(errno));
		if (plyc_add_link(links, link))
			return -1;
	}
	if (P->verbose)
		fprintf(stderr, "%s: %s: shares the argument spec of an earlier probe at the same "
			"place (no BPF cookies in this kernel)\n", pr->where, pr->spec);
	return 0;
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_program *P = c->prog;
	const struct plyc_probe *pr = c->pr;
	const struct plyc_usdt_data *d = c->pr->data;
	const char *binary = c->state, *name = d->name;
	char provider[256];
	struct bpf_link *link;
	int err;

	(void)obj;
	if (d->provider) {
		snprintf(provider, sizeof(provider), "%s", d->provider);
	} else if ((err = plyc_usdt_provider(binary, name, provider, sizeof(provider)))) {
		if (err == -EEXIST)
			return plyc_probe_error(P, pr, "several providers in %s have a probe %s: name one "
						"(usdt:PATH:provider:name)", binary, name);
		return plyc_probe_error(P, pr, "no USDT probe %s in %s", name, binary);
	}
	link = bpf_program__attach_usdt(bp, (pid_t)P->target_pid, binary, provider, name, NULL);
	if (!link && errno == EEXIST)
		return attach_again(c, bp, links, provider);
	if (!link && errno == EOPNOTSUPP)
		return plyc_probe_error(P, pr, "cannot attach to %s:%s in %s: the libbpf built into this "
					"tracer cannot read USDT arguments on this architecture", provider,
					name, binary);
	if (!link)
		return plyc_probe_error(P, pr, errno == ENOENT ? "no USDT probe %s:%s in %s" :
					"cannot attach to %s:%s in %s: %s", provider, name, binary,
					plyc_errstr(errno));
	return plyc_add_link(links, link);
}

static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	const struct plyc_usdt_data *d = c->pr->data;

	if (c->state)
		fprintf(fp, "usdt:%s:%s%s%s\n", (const char *)c->state, d->provider ? d->provider : "",
			d->provider ? ":" : "", d->name);
}

const struct plyc_provider plyc_provider_usdt = {
	.name = "usdt", .resolve = resolve, .attach = attach, .list = list,
};
