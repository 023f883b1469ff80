// SPDX-License-Identifier: GPL-2.0
/* Reference: getppid() latency, entry to exit, as a log2 histogram. The
 * entry time waits in a hash keyed by thread. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "log2.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct hist);
} hists SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int enter_getppid(void *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_getppid")
int exit_getppid(void *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid(), zero = 0;
	struct hist *h;
	u64 *tsp, delta;

	tsp = bpf_map_lookup_elem(&start, &tid);
	if (!tsp)
		return 0;
	delta = bpf_ktime_get_ns() - *tsp;
	h = bpf_map_lookup_elem(&hists, &zero);
	if (h)
		h->slots[log2_u64(delta) & (NSLOTS - 1)] += 1;
	bpf_map_delete_elem(&start, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
