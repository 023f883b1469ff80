// SPDX-License-Identifier: GPL-2.0
/* Reference: one record per getppid() call through a ring buffer; the
 * loader prints a line for each. Records that do not fit are counted. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "printf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} lost SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int emit_getppid(void *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	u32 zero = 0;
	u64 *n;

	if (!e) {
		n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			*n += 1;
		return 0;
	}
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
