/* Verifier refusals that mean "this kernel is too old for the script"
 * rather than "the script is wrong", put in terms of the feature and the
 * release that brought it (docs/kernels.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_verifier.h"

/* The helpers generated programs call (docs/kernels.md) by their number
 * in the kernel's UAPI, with the release that made them callable. */
static const struct {
	int id;
	const char *name;
	const char *since;
} helpers[] = {
	{ 1, "bpf_map_lookup_elem", "4.1" },
	{ 2, "bpf_map_update_elem", "4.1" },
	{ 3, "bpf_map_delete_elem", "4.1" },
	{ 4, "bpf_probe_read", "4.1" },
	{ 5, "bpf_ktime_get_ns", "4.1" },
	{ 8, "bpf_get_smp_processor_id", "4.1" },
	{ 14, "bpf_get_current_pid_tgid", "4.2" },
	{ 15, "bpf_get_current_uid_gid", "4.2" },
	{ 16, "bpf_get_current_comm", "4.2" },
	{ 25, "bpf_perf_event_output", "4.4" },
	{ 27, "bpf_get_stackid", "4.6" },
	{ 36, "bpf_probe_write_user", "4.8, for root, in a kernel not locked down (kernel_lockdown(7): "
	      "integrity or confidentiality mode takes it away)" },
	{ 45, "bpf_probe_read_str", "4.11" },
	{ 58, "bpf_override_return", "4.16, in kernels built with CONFIG_BPF_KPROBE_OVERRIDE" },
	{ 109, "bpf_send_signal", "5.3" },
	{ 112, "bpf_probe_read_user", "5.5" },
	{ 113, "bpf_probe_read_kernel", "5.5" },
	{ 114, "bpf_probe_read_user_str", "5.5" },
	{ 115, "bpf_probe_read_kernel_str", "5.5" },
	{ 118, "bpf_jiffies64", "5.5" },
	{ 131, "bpf_ringbuf_reserve", "5.8" },
	{ 132, "bpf_ringbuf_submit", "5.8" },
	{ 147, "bpf_d_path", "5.10" },
	{ 164, "bpf_for_each_map_elem", "5.13" },
	{ 173, "bpf_get_func_ip", "5.15" },
	{ 174, "bpf_get_attach_cookie", "5.15" },
};

/* The number after '#' in the verifier's "invalid func NAME#ID" (kernels
 * that don't know the helper) or "unknown func NAME#ID". */
static int helper_id(const char *log)
{
	static const char *const said[] = { "invalid func ", "unknown func ", "cannot use helper " };
	const char *p, *hash;
	size_t i;

	for (i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		p = strstr(log, said[i]);
		if (!p)
			continue;
		hash = strchr(p, '#');
		if (hash && (!strchr(p, '\n') || hash < strchr(p, '\n')))
			return atoi(hash + 1);
	}
	return -1;
}

int plyc_verifier_hint(const char *log, char *buf, size_t len)
{
	size_t i;
	int id;

	/* Before 5.3 the verifier refuses any backward jump up front. */
	if (strstr(log, "back-edge from insn")) {
		snprintf(buf, len, "the program has a loop, and this kernel refuses loops in BPF "
			 "programs: bounded loops came in Linux 5.3");
		return 1;
	}
	/* The verifier walks each iteration of a loop apart: a while loop whose
	 * end it can't see is walked up to plyc's cap (ir.LOOP_CAP). */
	if (strstr(log, "BPF program is too large")) {
		snprintf(buf, len, "the verifier follows each path of a program, and each iteration of "
			 "a loop apart (a while loop up to plyc's cap of 1024), up to a million "
			 "instructions: a smaller loop body, or a constant bound, loads");
		return 1;
	}
	/* bpf_d_path (path()) is callable from the functions the kernel lists
	 * in btf_allowlist_d_path alone */
	if (strstr(log, "helper call is not allowed in probe")) {
		snprintf(buf, len, "path() (bpf_d_path) can only be used in probes of the functions the "
			 "kernel allows it in (btf_allowlist_d_path: security_inode_getattr, "
			 "vfs_truncate, filp_close, ...)");
		return 1;
	}
	id = helper_id(log);
	if (id < 0)
		return 0;
	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (helpers[i].id == id) {
			snprintf(buf, len, "this kernel has no BPF helper %s for this kind of probe "
				 "(it came in Linux %s)", helpers[i].name, helpers[i].since);
			return 1;
		}
	snprintf(buf, len, "this kernel has no BPF helper #%d for this kind of probe", id);
	return 1;
}
