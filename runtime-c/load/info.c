/* --info: what of this kernel a tracer uses, each feature asked of the
 * kernel as the tracer asks it when it runs (a trivial program loaded and
 * attached where a version can't say), and which fallback it takes where
 * one is missing. Sections as bpftrace 0.27's --info ("System", "Kernel
 * features", ...), one feature a line. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"
#include "plyc_attach.h"
#include "plyc_kfuncs.h"
#include "providers/kprobe.h"

/* A function every kernel the tracers run on has, to ask the trampolines of. */
static const char *const PROBED[] = { "vfs_read", "schedule", "do_nanosleep" };

static const char *yes(int b)
{
	return b ? "yes" : "no";
}

static int module_btf(void)
{
	DIR *d = opendir("/sys/kernel/btf");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux");
	closedir(d);
	return n > 0;
}

/* 1: fentry/fexit attach here (to one of PROBED); names the function in `on` */
static int fentry_here(const char **on)
{
	struct btf *btf = btf__load_vmlinux_btf();
	size_t i;
	int ok = 0;

	for (i = 0; btf && !ok && i < sizeof(PROBED) / sizeof(*PROBED); i++) {
		int id = btf__find_by_name_kind(btf, PROBED[i], BTF_KIND_FUNC);

		if (id > 0 && !plyc_trampoline_takes(id, -1, 0, 0, 0)) {
			ok = 1;
			*on = PROBED[i];
		}
	}
	btf__free(btf);
	return ok;
}

static int multi_here(void)
{
	size_t i;

	for (i = 0; i < sizeof(PROBED) / sizeof(*PROBED); i++)
		if (plyc_kprobe_multi_works(PROBED[i]))
			return 1;
	return 0;
}

void plyc_info(const struct plyc_program *P, const char *btf_file, FILE *fp)
{
	struct utsname u;
	const char *on = NULL;
	int btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	int ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	int read_kernel = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_kernel, NULL) == 1;
	int test_run = plyc_test_run_works(), uprobes = plyc_probe_pmu_available("uprobe");
	int cookies = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) == 1;
	int fentry = fentry_here(&on), multi = multi_here(), kprobes = plyc_probe_pmu_available("kprobe");
	int listed = plyc_kfuncs_ftrace_listed();

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	fprintf(fp, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version, u.machine);
	fprintf(fp, "Tracer\n  %s: built by plyc %s from %s\n\n", P->name, P->version, P->script);
	fprintf(fp, "Kernel features\n");
	fprintf(fp, "  btf: %s\n", yes(btf));
	fprintf(fp, "  module btf: %s\n", yes(module_btf()));
	fprintf(fp, "  ring buffer: %s\n", yes(ringbuf));
	fprintf(fp, "  probe_read_kernel: %s\n", yes(read_kernel));
	fprintf(fp, "  BPF_PROG_TEST_RUN of raw tracepoints: %s\n", yes(test_run));
	fprintf(fp, "  BPF cookies: %s\n", yes(cookies));
	fprintf(fp, "  traceable functions listed: %s\n", yes(listed));
	fprintf(fp, "\nProbe types\n");
	fprintf(fp, "  kprobe: %s\n", yes(kprobes));
	fprintf(fp, "  kprobe_multi: %s\n", yes(multi));
	fprintf(fp, "  fentry: %s%s%s%s\n", yes(fentry), on ? " (on " : "", on ? on : "", on ? ")" : "");
	fprintf(fp, "  uprobe: %s\n", yes(uprobes));
	fprintf(fp, "\nWhat this tracer takes here\n");
	if (btf_file)
		fprintf(fp, "  kernel types: --btf %s\n", btf_file);
	else
		fprintf(fp, "  kernel types: %s\n", btf ? "the kernel's BTF" :
		P->btf_size ? "the BTF embedded at build (the kernel has none)" :
		"none (the kernel has no BTF, none was embedded: --btf FILE gives it)");
	fprintf(fp, "  output: %s\n", ringbuf ? "ring buffer" : "perf buffer (fallback: no BPF ring buffer, Linux 5.8)");
	fprintf(fp, "  memory reads: %s\n", read_kernel ? "bpf_probe_read_kernel and _user" :
		"bpf_probe_read (fallback: no bpf_probe_read_kernel, Linux 5.5)");
	fprintf(fp, "  BEGIN and END: %s\n", test_run ? "BPF_PROG_TEST_RUN" :
		uprobes ? "a uprobe on the tracer (fallback: no BPF_PROG_TEST_RUN of raw tracepoints, Linux 5.10)" :
		"neither BPF_PROG_TEST_RUN nor uprobes: a script with BEGIN or END fails here");
	fprintf(fp, "  kprobes built with an fentry twin: %s\n", fentry ? "fentry/fexit where the device's "
		"function has the build's prototype" : kprobes ? "kprobes (fallback: no BPF trampolines)" :
		"neither kprobes nor trampolines: kprobes fail here");
	fprintf(fp, "  kprobe wildcards: %s\n", multi && listed ? "kprobe.multi" :
		kprobes ? "one kprobe a function (fallback: no kprobe.multi, Linux 5.18 with CONFIG_FPROBE)" :
		"no kprobes here");
	fprintf(fp, "  'probe' and fields in wildcards: %s\n", cookies ? "BPF cookies" :
		"refused (no BPF cookies, Linux 5.15)");
}
