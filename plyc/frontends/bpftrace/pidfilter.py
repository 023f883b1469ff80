"""The tracer's -p PID as bpftrace 0.27 has it (its man page, -p): "for all
other probes, except begin/end, the pid will act like a predicate to filter
out events not from that pid". Each probe of the kinds below runs its body
only when the tracer was given no -p (pid_filter is 0, plyc_params) or the
event is that process's; uprobes, uretprobes and USDT are attached to the
process itself (runtime-c/providers/uprobe.c), BEGIN and END run once.
Profile, software and hardware events are filtered too: bpftrace attaches
them to the process, plyc samples every CPU and keeps that process's
samples (the same events while it runs; a period counts on a CPU, not in
the process). interval probes and iterators are not filtered: an interval
keeps its wall-clock rate (bpftrace's ticks only while the process runs)
and an iterator runs in the tracer (docs/bpftrace.md, "-p PID")."""
from __future__ import annotations

from ... import builtins as B
from ... import types as T
from ...ir import nodes as ir

FILTERED = ("kprobe", "kretprobe", "kfunc", "kretfunc", "tracepoint", "rawtracepoint", "profile",
            "software", "hardware")


def apply(prog: ir.Program):
    pid = B.variable("pid")
    for p in prog.probes:
        if p.provider.name not in FILTERED:
            continue
        given = ir.Param(ir.PID_FILTER, type=T.U32, span=p.spec.span)
        none = ir.Binary("==", given, ir.IntConst(0, type=T.U32), type=T.S32)
        mine = ir.Binary("==", ir.Variable(pid, type=pid.type), ir.Param(ir.PID_FILTER, type=T.U32),
                         type=T.S32)
        p.body = ir.Block([ir.If(ir.Binary("||", none, mine, type=T.S32), p.body, span=p.spec.span)],
                           span=p.spec.span)
