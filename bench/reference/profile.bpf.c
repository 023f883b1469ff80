// SPDX-License-Identifier: GPL-2.0
/* Reference: kernel stacks sampled on every CPU, counted by stack in a
 * per-CPU hash keyed by the stack map's id. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define MAX_DEPTH 127

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 4096);
	__uint(key_size, sizeof(u32));
	__uint(value_size, MAX_DEPTH * sizeof(u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, s64);
	__type(value, u64);
} counts SEC(".maps");

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	s64 id = bpf_get_stackid(ctx, &stacks, 0);
	u64 zero = 0, *val;

	val = bpf_map_lookup_elem(&counts, &id);
	if (!val) {
		bpf_map_update_elem(&counts, &id, &zero, BPF_NOEXIST);
		val = bpf_map_lookup_elem(&counts, &id);
		if (!val)
			return 0;
	}
	*val += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
