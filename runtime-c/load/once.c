/* BEGIN and END: programs the tracer runs once itself, not on a kernel
 * event. Where the kernel runs a raw tracepoint program on request
 * (BPF_PROG_TEST_RUN, 5.10+) that is how. Before 5.10 the same program is
 * loaded as a uprobe program instead, attached for this process only to an
 * instruction of the tracer itself, and run by calling the function that
 * holds it (bpftrace does the same). Either way it runs in the tracer's
 * task (comm, pid are the tracer's) and its body reads nothing of its
 * context, so one body serves both. PLYC_NO_TEST_RUN=1 takes the uprobe
 * way on any kernel, to test it. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"
#include "plyc_attach.h"
#include "plyc_providers.h"

static enum { BY_TEST_RUN, BY_UPROBE } how;
static long site_offset = -1;

/* The uprobe's place: a nop with a global label, so the probe goes on an
 * instruction every kernel's uprobes can step, whatever the compiler puts
 * at the function's entry (x86's endbr64). 32-bit ARM uprobes take only
 * ARM-mode code, and Debian's armhf compilers default to Thumb. */
#if defined(__arm__)
__attribute__((target("arm")))
#endif
__attribute__((noinline)) void plyc_once_trigger(void)
{
	__asm__ volatile(".globl plyc_once_site\nplyc_once_site:\n\tnop" ::: "memory");
}
extern const char plyc_once_site[];

/* Where plyc_once_site is in the tracer's file (the offset a uprobe takes):
 * from the mapping that holds it, so PIE or not, stripped or not. */
static long site_file_offset(void)
{
	uintptr_t addr = (uintptr_t)plyc_once_site, start, end;
	unsigned long long off;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");
	long found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx", &start, &end, perms, &off) == 4 &&
		    addr >= start && addr < end && perms[2] == 'x') {
			found = (long)(addr - start + off);
			break;
		}
	}
	fclose(f);
	return found;
}

int plyc_test_run_works(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int fd = plyc_load_trivial(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL), ok;

	if (fd < 0)
		return 0;
	ok = !bpf_prog_test_run_opts(fd, &opts);
	close(fd);
	return ok;
}

static int is_begin_end(const struct plyc_probe *pr)
{
	return pr->provider == &plyc_provider_begin || pr->provider == &plyc_provider_end;
}

/* run by the tracer: BEGIN, END, and self probes on their signal */
static int is_once(const struct plyc_probe *pr)
{
	return is_begin_end(pr) || pr->provider == &plyc_provider_self_usr1;
}

int plyc_has_probes_of(const struct plyc_program *P, const struct plyc_provider *which)
{
	int i;

	for (i = 0; i < P->nprobes; i++)
		if (P->probes[i].provider == which)
			return 1;
	return 0;
}

int plyc_once_only(const struct plyc_program *P)
{
	int i;

	for (i = 0; i < P->nprobes; i++)
		if (!is_begin_end(&P->probes[i]))
			return 0;
	return P->nprobes > 0;
}

int plyc_once_prepare(const struct plyc_program *P, struct bpf_object *obj)
{
	const struct plyc_probe *first = NULL;
	int forced = getenv("PLYC_NO_TEST_RUN") != NULL, i;

	for (i = 0; i < P->nprobes && !first; i++)
		if (is_once(&P->probes[i]))
			first = &P->probes[i];
	if (!first)
		return 0;
	if (!forced && plyc_test_run_works()) {
		how = BY_TEST_RUN;
		if (P->verbose)
			fprintf(stderr, "%s: BEGIN and END run by BPF_PROG_TEST_RUN\n", P->name);
		return 0;
	}
	if (!plyc_probe_pmu_available("uprobe"))
		return plyc_probe_error(P, first, "BEGIN and END need BPF_PROG_TEST_RUN for raw tracepoints "
					"(Linux 5.10)%s or uprobes (CONFIG_UPROBE_EVENTS), and this kernel has neither",
					forced ? ", which PLYC_NO_TEST_RUN turns off," : "");
	site_offset = site_file_offset();
	if (site_offset < 0)
		return plyc_probe_error(P, first, "cannot find the tracer's own code in /proc/self/maps, where "
					"BEGIN and END are run from");
	for (i = 0; i < P->nprobes; i++) {
		struct bpf_program *bp;

		if (!is_once(&P->probes[i]))
			continue;
		bp = bpf_object__find_program_by_name(obj, P->probes[i].prog);
		if (bp && bpf_program__set_type(bp, BPF_PROG_TYPE_KPROBE))
			return plyc_probe_error(P, &P->probes[i], "cannot make the program a uprobe program");
	}
	how = BY_UPROBE;
	if (P->verbose)
		fprintf(stderr, "%s: BEGIN and END run by a uprobe on the tracer (offset 0x%lx of /proc/self/exe)%s\n",
			P->name, site_offset, forced ? ": PLYC_NO_TEST_RUN" : ": no BPF_PROG_TEST_RUN for raw tracepoints");
	return 0;
}

/* One program, once: attached for this thread only, hit, detached. */
static int run_by_uprobe(struct bpf_program *bp)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(bp, getpid(), "/proc/self/exe",
								(size_t)site_offset, &opts);

	if (!link)
		return -1;
	plyc_once_trigger();
	bpf_link__destroy(link);
	return 0;
}

int plyc_once_run(const struct plyc_program *P, struct bpf_object *obj, const struct plyc_provider *which)
{
	int i;

	for (i = 0; i < P->nprobes; i++) {
		const struct plyc_probe *pr = &P->probes[i];
		struct bpf_program *bp;
		LIBBPF_OPTS(bpf_test_run_opts, opts);
		int err;

		if (pr->provider != which)
			continue;
		bp = bpf_object__find_program_by_name(obj, pr->prog);
		if (!bp)
			return plyc_probe_error(P, pr, "program %s is missing from the BPF object", pr->prog);
		if (how == BY_UPROBE)
			err = run_by_uprobe(bp);
		else
			err = bpf_prog_test_run_opts(bpf_program__fd(bp), &opts);
		if (err)
			return plyc_probe_error(P, pr, "cannot run it (%s): %s",
						how == BY_UPROBE ? "a uprobe on the tracer" : "BPF_PROG_TEST_RUN",
						strerror(errno));
	}
	return 0;
}
