// SPDX-License-Identifier: GPL-2.0
/* Reference: a log2 histogram of the size asked of read(2), in a per-CPU
 * array of one histogram. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "log2.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct hist);
} hists SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_read")
int read_size(struct trace_event_raw_sys_enter *ctx)
{
	u32 zero = 0;
	struct hist *h = bpf_map_lookup_elem(&hists, &zero);

	if (h)
		h->slots[log2_u64(ctx->args[2]) & (NSLOTS - 1)] += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
