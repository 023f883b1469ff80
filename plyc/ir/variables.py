"""Variables as data: what an ir.Variable reads. A `Var` is a name and a
type (the builtins' and front ends' tables, and the providers', make
them) and a `Source`: one of the core's ways to get a value (a BPF helper,
the probe's context, a register, an argument word), named here; the code
generator's table gives its C (plyc/codegen/variables.py, one entry each:
a test holds the two to the same sources)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import types as T


@dataclass(frozen=True)
class Source:
    name: str
    doc: str


# BPF helpers (any probe).
COMM = Source("comm", "the task's name (a string the generator fills)")
TGID = Source("tgid", "the process id")
TID = Source("tid", "the thread id")
NS_TGID = Source("ns_tgid", "the process id in the tracer's PID namespace")
NS_TID = Source("ns_tid", "the thread id in the tracer's PID namespace")
UID = Source("uid", "the task's user id")
GID = Source("gid", "the task's group id")
CPU = Source("cpu", "the CPU running the probe")
KTIME = Source("ktime", "ns since boot (bpf_ktime_get_ns's clock)")
KSTACK = Source("kstack", "the kernel stack's id in the stack map")
RAND = Source("rand", "a random u32")
CGROUP = Source("cgroup", "the task's cgroup v2 id")
NUMA = Source("numa", "the NUMA node running the probe")
JIFFIES = Source("jiffies", "the kernel's jiffies")
TASK = Source("task", "the current task_struct's address")
FUNC_IP = Source("func_ip", "the traced function's address (bpf_get_func_ip)")
# The probe's context (Var.index: which word or argument).
CTX = Source("ctx", "the context pointer itself")
PERF_CTX = Source("perf_ctx", "a perf event's context (bpf_perf_event_data), copied by direct loads: the copy's address")
CTX_WORD = Source("ctx_word", "a word of the context (raw tracepoint, fentry arguments)")
KPROBE_ARG = Source("kprobe_arg", "a kprobe's argument register (through a syscall wrapper's when wrapped)")
UPROBE_ARG = Source("uprobe_arg", "a uprobe's argument (a register, or the user stack past them)")
USDT_ARG = Source("usdt_arg", "a USDT probe's argument")
IP = Source("ip", "the instruction pointer")
RET = Source("ret", "the return value register")

SOURCES = (COMM, TGID, TID, NS_TGID, NS_TID, UID, GID, CPU, KTIME, KSTACK, RAND, CGROUP, NUMA, JIFFIES, TASK, FUNC_IP,
           CTX, PERF_CTX, CTX_WORD, KPROBE_ARG, UPROBE_ARG, USDT_ARG, IP, RET)


@dataclass(frozen=True)
class Var:
    """A built-in or provider variable: `reads` its source (`index`: the
    word or argument, for those of the context)."""
    name: str
    type: T.Type
    reads: Source
    index: int = 0
    doc: str = ""
    # its value stays the same within one run of a probe's program (a map
    # key made of it is computed once: codegen's key hoisting)
    invariant: bool = False
