/* Attaching probes by kind: tracepoints (globs expanded on the device),
 * interval and profile timers (perf events). */
#ifndef PLYC_ATTACH_H
#define PLYC_ATTACH_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"

struct plyc_links {
	struct bpf_link **v;
	int n, cap;
};

/* Every probe's target exists on this device; kprobe targets are
 * resolved to this kernel's functions (before the load). */
int plyc_check_targets(const struct plyc_program *prog);
/* Whether probe i resolved to syscall wrappers (for plyc_params.kwrap). */
int plyc_probe_wrapped(int probe);
/* Program settings that depend on the device (kprobe.multi), before load. */
int plyc_prepare_programs(const struct plyc_program *prog, struct bpf_object *obj);
int plyc_attach_all(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links);
void plyc_detach_all(struct plyc_links *links);
/* The same, in a child process the tracer doesn't wait for, when there are
 * many links (their probes must already be stopped). */
void plyc_detach_in_background(struct plyc_links *links);
/* A program that returns 0, of this type (its fd, or -errno): enough to ask
 * the kernel whether it loads, runs or attaches a kind of program. */
int plyc_load_trivial(enum bpf_prog_type type, struct bpf_prog_load_opts *opts);
/* "script:LINE: error: SPEC: message" on stderr; returns -1. */
int plyc_probe_error(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
