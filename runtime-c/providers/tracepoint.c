/* tracepoint: group/event, or every event of a group matching a glob, as
 * the device's tracefs lists them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plyc_attach.h"
#include "plyc_tp.h"
#include "providers/tracepoint.h"

static void split(const struct plyc_probe_ctx *c, char *group, size_t len, const char **event)
{
	const struct plyc_tracepoint_data *d = c->pr->data;

	snprintf(group, len, "%s", d->target);
	char *slash = strchr(group, '/');

	*slash = 0;
	*event = slash + 1;
}

static int count_match(const char *group, const char *event, void *arg)
{
	(void)group;
	(void)event;
	(void)arg;
	return 0;
}

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_tracepoint_data *d = c->pr->data;
	char group[256];
	const char *event;

	split(c, group, sizeof(group), &event);
	if ((d->names || d->glob_fields) &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_attach_cookie, NULL) != 1)
		return plyc_probe_error(c->prog, c->pr, "%s in a tracepoint wildcard needs BPF cookies, "
					"which this kernel lacks (Linux 5.15 has them)",
					d->names ? "'probe'" : "reading fields");
	if (!plyc_tracefs())
		return plyc_probe_error(c->prog, c->pr, "tracefs is not available (mount it on /sys/kernel/tracing)");
	if (plyc_has_glob(event)) {
		if (plyc_tp_glob(group, event, count_match, NULL) <= 0)
			return plyc_probe_error(c->prog, c->pr, "no tracepoint on this kernel matches %s", d->target);
	} else if (plyc_tp_exists(group, event)) {
		return plyc_probe_error(c->prog, c->pr, "no such tracepoint on this kernel");
	}
	return 0;
}

struct tp_ctx {
	struct plyc_probe_ctx *c;
	struct bpf_program *prog;
	struct plyc_links *links;
	int names_fd;		/* plyc_tp_names, where `probe` is read in a glob; else -1 */
	int offs_fd;		/* plyc_tp_offs, where a glob's fields are read; else -1 */
};

/* The offsets of this probe's fields in one matched event, under its cookie. */
static int event_fields(struct tp_ctx *t, const char *group, const char *event, __u32 cookie)
{
	const struct plyc_program *P = t->c->prog;
	int i;

	for (i = 0; i < P->nslots; i++) {
		const struct plyc_tpslot *s = &P->slots[i];
		struct { __u32 off, size; } loc;
		__u64 key = (__u64)cookie << 32 | (__u32)i;

		if (s->probe != t->c->index)
			continue;
		if (plyc_tp_field(group, event, s->field, &loc.off, &loc.size))
			return plyc_probe_error(P, t->c->pr, "%s:%s has no field '%s' on this kernel", group, event,
						s->field);
		if (s->is_int ? (loc.size == 0 || loc.size > 8) : loc.size != s->size)
			return plyc_probe_error(P, t->c->pr, "field '%s' of %s:%s is %u bytes on this kernel, %u "
						"where the tracer was built", s->field, group, event, loc.size, s->size);
		if (bpf_map_update_elem(t->offs_fd, &key, &loc, BPF_ANY))
			return plyc_probe_error(P, t->c->pr, "cannot record where %s:%s's fields are: %s", group,
						event, plyc_errstr(errno));
	}
	return 0;
}

/* A glob's event gets the next BPF cookie (1, 2, ...) when its program
 * reads `probe` (its name under the cookie) or fields (their offsets). */
static int describe_event(struct tp_ctx *t, const char *group, const char *event, __u64 *cookie)
{
	static __u32 last;
	char name[PLYC_TP_NAME_SIZE] = "";
	__u32 id = last + 1;

	*cookie = 0;
	if (t->names_fd < 0 && t->offs_fd < 0)
		return 0;
	snprintf(name, sizeof(name), "tracepoint:%s:%s", group, event);
	if (t->names_fd >= 0 && bpf_map_update_elem(t->names_fd, &id, name, BPF_ANY))
		return plyc_probe_error(t->c->prog, t->c->pr, "cannot record %s's name for 'probe': %s", name,
					plyc_errstr(errno));
	if (t->offs_fd >= 0 && event_fields(t, group, event, id))
		return -1;
	last = id;
	*cookie = id;
	return 0;
}

static int attach_one(const char *group, const char *event, void *arg)
{
	struct tp_ctx *t = arg;
	LIBBPF_OPTS(bpf_tracepoint_opts, opts);
	struct bpf_link *link;

	/* described before it can fire */
	if (describe_event(t, group, event, &opts.bpf_cookie))
		return -1;
	link = bpf_program__attach_tracepoint_opts(t->prog, group, event, &opts);
	/* E2BIG: the tracepoint's array of programs is full (BPF_TRACE_MAX_PROGS);
	 * plyc refuses more than that of its own at build time, so others hold the rest */
	if (!link)
		return plyc_probe_error(t->c->prog, t->c->pr, "cannot attach to %s:%s: %s%s", group, event,
					plyc_errstr(errno), errno == E2BIG ? " (the kernel runs at most 64 BPF "
					"programs on one tracepoint, other tracers' included)" : "");
	return plyc_add_link(t->links, link);
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_tracepoint_data *d = c->pr->data;
	struct bpf_map *names = d->names ? bpf_object__find_map_by_name(obj, "plyc_tp_names") : NULL;
	struct bpf_map *offs = d->glob_fields ? bpf_object__find_map_by_name(obj, "plyc_tp_offs") : NULL;
	struct tp_ctx t = { c, bp, links, names ? bpf_map__fd(names) : -1, offs ? bpf_map__fd(offs) : -1 };
	char group[256];
	const char *event;

	split(c, group, sizeof(group), &event);
	if (plyc_has_glob(event))
		return plyc_tp_glob(group, event, attach_one, &t) < 0 ? -1 : 0;
	return attach_one(group, event, &t) ? -1 : 0;
}

/* each tracepoint a glob matches, as bpftrace counts them */
static int count(const struct plyc_probe_ctx *c)
{
	char group[256];
	const char *event;
	int n;

	split(c, group, sizeof(group), &event);
	if (!plyc_has_glob(event))
		return 1;
	n = plyc_tp_glob(group, event, count_match, NULL);
	return n > 0 ? n : 1;
}

static int list_one(const char *group, const char *event, void *arg)
{
	fprintf(arg, "tracepoint:%s:%s\n", group, event);
	return 0;
}

static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	char group[256];
	const char *event;

	split(c, group, sizeof(group), &event);
	if (plyc_has_glob(event))
		plyc_tp_glob(group, event, list_one, fp);
	else
		list_one(group, event, fp);
}

const struct plyc_provider plyc_provider_tracepoint = {
	.name = "tracepoint", .resolve = resolve, .attach = attach, .count = count, .list = list,
};
