"""The C of every variable source (plyc/ir/variables.py): CODE gives a C
expression over `ctx` ({i}: the Var's index, {unit}: the probe's), FILL
the helper that fills a char array for a string-valued one. The helpers
live in runtime-c/bpf/plyc.bpf.h."""
from __future__ import annotations

from ..ir import variables as V

CODE = {
    V.TGID: "(bpf_get_current_pid_tgid() >> 32)",
    V.TID: "(__u32)bpf_get_current_pid_tgid()",
    V.NS_TGID: "(plyc_ns_pid_tgid() >> 32)",
    V.NS_TID: "(__u32)plyc_ns_pid_tgid()",
    V.UID: "(__u32)bpf_get_current_uid_gid()",
    V.GID: "(bpf_get_current_uid_gid() >> 32)",
    V.CPU: "bpf_get_smp_processor_id()",
    V.KTIME: "bpf_ktime_get_ns()",
    V.KSTACK: "plyc_stackid(ctx)",
    V.RAND: "bpf_get_prandom_u32()",
    V.CGROUP: "bpf_get_current_cgroup_id()",
    V.NUMA: "bpf_get_numa_node_id()",
    V.JIFFIES: "bpf_jiffies64()",
    V.TASK: "(__u64)bpf_get_current_task()",
    V.FUNC_IP: "bpf_get_func_ip(ctx)",
    V.CTX: "(__u64)(unsigned long)ctx",     # as a value: an iterator's ctx (others are read through it)
    V.PERF_CTX: "plyc_perf_ctx(ctx)",
    V.CTX_WORD: "ctx[{i}]",
    # the wrapped flag is the tracer's, per probe (a syscall's wrapper on the device)
    V.KPROBE_ARG: "plyc_kprobe_arg(ctx, {i}, plyc_params.kwrap[{unit}])",
    V.UPROBE_ARG: "plyc_uprobe_arg(ctx, {i})",
    V.USDT_ARG: "plyc_usdt_arg(ctx, {i})",
    V.IP: "PLYC_IP(ctx)",
    V.RET: "PLYC_RET(ctx)",
}

FILL = {
    V.COMM: "plyc_comm",
}


def code(var: V.Var, unit: int) -> str:
    """The C expression of var's value in the probe program `unit`."""
    return CODE[var.reads].format(i=var.index, unit=unit)


def fill(var: V.Var) -> str:
    """The helper that fills a char array with var's value."""
    return FILL[var.reads]
