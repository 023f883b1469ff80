/* Attaching probes: each probe's provider (plyc_provider.h) does its own
 * kind; what they share is here. */
#ifndef PLYC_ATTACH_H
#define PLYC_ATTACH_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "plyc_loader.h"
#include "plyc_provider.h"

struct plyc_links {
	struct bpf_link **v;
	int n, cap;
};

/* Every probe's target exists on this device (its provider's resolve),
 * before the load. */
int plyc_check_targets(const struct plyc_program *prog);
/* The probes as bpftrace counts them, after plyc_check_targets. */
int plyc_count_probes(const struct plyc_program *prog);
/* Whether probe i resolved to syscall wrappers (for plyc_params.kwrap). */
int plyc_probe_wrapped(int probe);
/* Program settings that depend on the device (providers' prepare), before load. */
int plyc_prepare_programs(const struct plyc_program *prog, struct bpf_object *obj);
int plyc_attach_all(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links);
/* The same, going on past a probe that fails (each is told): --dry-run. */
int plyc_attach_every(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links);
/* What each probe resolved to, one line each (bpftrace's -l text), after
 * plyc_check_targets: --list. */
void plyc_list_targets(const struct plyc_program *prog, FILE *fp);
void plyc_detach_all(struct plyc_links *links);
/* The same, in a child process the tracer doesn't wait for, when there are
 * many links (their probes must already be stopped). */
void plyc_detach_in_background(struct plyc_links *links);
/* A program that returns 0, of this type (its fd, or -errno): enough to ask
 * the kernel whether it loads, runs or attaches a kind of program. */
int plyc_load_trivial(enum bpf_prog_type type, struct bpf_prog_load_opts *opts);
/* Whether a trivial fentry (fexit) program reading the context words of
 * mask (bit n: ctx[n]; with cookie, its BPF cookie too) loads for BTF
 * function id (of module BTF object btf_fd, else -1: vmlinux) and attaches:
 * 0, else the errno. BTF alone doesn't say (arm64 got trampolines in 6.0,
 * 32-bit ARM has none), nor which arguments the verifier lets a program
 * read (5.10 refuses one that points to other than a struct). The kprobe
 * and kfunc providers' test, and --info's. */
int plyc_trampoline_takes(int id, int btf_fd, int fexit, uint64_t mask, int cookie);
/* "script:LINE: error: SPEC: message" on stderr (while a probe that may be
 * left out is resolved, missing_probes's warning or nothing); returns -1. */
int plyc_probe_error(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same, an error whatever missing_probes says (a resolve's failure
 * that is not a missing target: no BTF, no kprobes); returns
 * PLYC_PROBE_FATAL. */
#define PLYC_PROBE_FATAL (-2)
int plyc_probe_fatal(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* For providers: keep a link (0, or -ENOMEM); an errno (or libbpf's own
 * codes, 4000 and up) as text. */
int plyc_add_link(struct plyc_links *links, struct bpf_link *link);
const char *plyc_errstr(int err);

/* `probe` in a glob: put name in plyc_tp_names under the next id after
 * *last (each provider counts from its own base) and return that id, the
 * attachment's BPF cookie; 0 when the map is absent or the name could not
 * be recorded (told). */
__u64 plyc_name_cookie(const struct plyc_probe_ctx *c, struct bpf_object *obj, __u32 *last, const char *name);
int plyc_has_glob(const char *s);
/* A perf event of attr on every online CPU (cpu -1) or on one, running bp;
 * `what` names it in errors ("timer"). 0, or -1 once told. */
int plyc_attach_perf(struct plyc_probe_ctx *c, struct bpf_program *bp, struct plyc_links *links,
		     struct perf_event_attr *attr, int cpu, const char *what);
/* A uprobe's or usdt's binary or library that plyc_resolve_binary refused. */
int plyc_binary_error(struct plyc_probe_ctx *c, const char *path, int err);
int plyc_perf_open(struct perf_event_attr *attr, int cpu);

#endif
