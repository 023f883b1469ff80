/* A provider's C half: how its probes are found on the device, set up
 * before the load and attached. Each provider is one file under
 * providers/ (NAME.c, with NAME.h declaring the data its generated probes
 * point to) and one line of plyc_providers.h; attach.c runs the ops of
 * every probe in turn and holds what they share (links, errors). */
#ifndef PLYC_PROVIDER_H
#define PLYC_PROVIDER_H

#include <stdio.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct plyc_program;
struct plyc_probe;
struct plyc_links;

/* One probe as the tracer runs it. */
struct plyc_probe_ctx {
	const struct plyc_program *prog;
	const struct plyc_probe *pr;
	int index;
	void *state;   /* the provider's own, from resolve; freed by the tracer after release */
};

struct plyc_provider {
	const char *name;
	/* Find the target on this device, before the load: 0, or -1 once told. */
	int (*resolve)(struct plyc_probe_ctx *c);
	/* Program settings that depend on the device (autoload, the fentry
	 * twin, attach type), before the load: 0, or -1 once told. */
	int (*prepare)(struct plyc_probe_ctx *c, struct bpf_object *obj);
	/* The probe is left out (missing_probes = warn | ignore: its target is
	 * missing): keep its programs from loading, which would fail without
	 * the function they are tied to. NULL: its programs load without it. */
	void (*leave_out)(struct plyc_probe_ctx *c, struct bpf_object *obj);
	/* NULL: the tracer runs the program itself (BEGIN, END). */
	int (*attach)(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		      struct plyc_links *links);
	/* How many probes bpftrace would count this one as, once resolved
	 * (its "Attaching N probes..."): each match of a wildcard. NULL: 1. */
	int (*count)(const struct plyc_probe_ctx *c);
	/* Whether the probe resolved to syscall wrappers (plyc_params.kwrap). */
	int (*wrapped)(const struct plyc_probe_ctx *c);
	/* What `state` holds besides itself (state itself the tracer frees). */
	void (*release)(struct plyc_probe_ctx *c);
	/* What it attaches on this device once resolved, one line each in
	 * bpftrace's `-l` text (the tracer's --list). NULL: the spec as
	 * written (timers), or nothing where attach is NULL (BEGIN, END). */
	void (*list)(const struct plyc_probe_ctx *c, FILE *fp);
	/* The run ends once it is attached (iter: attach ran the iteration). */
	int ends_run;
};

#endif
