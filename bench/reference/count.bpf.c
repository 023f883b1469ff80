// SPDX-License-Identifier: GPL-2.0
/* Reference: count getppid() calls by task name, in a per-CPU hash. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct comm_key {
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm_key);
	__type(value, u64);
} counts SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int count_getppid(void *ctx)
{
	struct comm_key key;
	u64 zero = 0, *val;

	bpf_get_current_comm(key.comm, sizeof(key.comm));
	val = bpf_map_lookup_elem(&counts, &key);
	if (!val) {
		/* New name: create it (another CPU may just have done so). */
		bpf_map_update_elem(&counts, &key, &zero, BPF_NOEXIST);
		val = bpf_map_lookup_elem(&counts, &key);
		if (!val)
			return 0;
	}
	*val += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
