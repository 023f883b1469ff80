"""What a provider is (Provider) and what it makes (Target, Var): the base
every provider module imports (the table of them is providers/__init__.py).
A provider turns a probe spec into an attach target, names the BPF section
and context type, and adds the variables its probes may use (Var: what
each reads, as data; plyc/codegen/variables.py gives their C). Its C half is
runtime-c/providers/NAME.c: `c_provider` names it, and `c_data` gives the
designated initializer of the data struct its providers/NAME.h declares
(docs/design.md, "How to add a provider")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..ir.nodes import Spec
from ..ir.variables import Var
from ..diag import PlycError


@dataclass(frozen=True)
class Fields:
    """A probe spec's parts, as its provider takes them. A front end whose
    specs are text has the provider parse it (Provider.fields); one that
    parses its own spec syntax builds these itself. Values are kept as
    written, so the provider's messages quote them."""
    function: str = ""               # kprobe/kfunc/uprobe: symbol, glob or 0xADDR; an event's name
    module: str = ""                 # kprobe/kfunc/rawtracepoint: kernel module
    group: Optional[str] = None      # tracepoint: its group; usdt: its provider (None: none written)
    binary: str = ""                 # uprobe/usdt: a path, or a library's short name (c)
    offset: Optional[str] = None     # kprobe/uprobe: +OFFSET as written (None: none)
    count: Optional[str] = None      # interval: the count; profile: hz; software/hardware: the period
    unit: str = ""                   # interval: ns us ms s m ("": s)
    cpu: str = ""                    # profile: one CPU
    mode: str = ""                   # watchpoint: the accesses watched (r, w, x), as written
    extra: str = ""                  # what else was written (an argument BEGIN refuses)


def is_glob(text: str) -> bool:
    """Whether a probe's part or a listing's pattern is a glob (* ? [...])."""
    return any(c in text for c in "*?[")


@dataclass
class Target:
    """A parsed spec: what the loader attaches, and how."""
    provider: "Provider"
    spec: Spec
    target: str = ""                 # tracepoint group/event, symbol, ...
    period_ns: int = 0               # interval
    freq: int = 0                    # profile
    cpu: int = -1
    glob: bool = False
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Provider:
    name: str
    aliases: tuple[str, ...]
    # The spec's text as this provider spells it -> its Fields
    fields: Callable[[Spec], Fields]
    # (spec, its Fields) -> the target, every value checked
    make: Callable[[Spec, Fields], Target]
    section: Callable[[Target], str]
    ctx_decl: str
    variables: tuple[Var, ...] = ()
    # data->field / regs->field access: (target, field name, span) -> (type, C code)
    member: Optional[Callable] = None
    # (target, variable name, KernelTypes) -> a better type for a variable, or None
    typed: Optional[Callable] = None
    # (target, plyc's --target name) -> None, or PlycError where that
    # architecture cannot run it (watchpoint modes its CPUs lack)
    for_arch: Optional[Callable] = None
    # (target, KernelTypes, arch) -> how it can run as fentry/fexit, or None
    fentry: Optional[Callable] = None
    # args.NAME of a context of typed arguments (`data`, a ctx of "fargs"):
    # (target, name, KernelTypes, span) -> its Var, from the BTF prototype
    arg: Optional[Callable] = None
    # (target, KernelTypes, span) -> the Var of the return value it reads
    # from its context, typed from the prototype (kretfunc), or None
    retval: Optional[Callable] = None
    # The C half: `const struct plyc_provider` in runtime-c/providers/
    c_provider: str = ""
    # (target, probe resources) -> (C data struct, [(field, C expression)]),
    # or None: the probe carries no data
    c_data: Optional[Callable] = None
    # Runs in a context that may be preempted (sleepable user probes): its
    # scratch slot must be claimed (cgen)
    preemptible: bool = False
    # Run by the tracer itself (BEGIN and END once, self on its signal),
    # not attached to a kernel event
    runs_once: bool = False
    # Defined in the BPF C when a probe is of this provider (its helpers in
    # runtime-c/bpf/ need it), e.g. PLYC_USDT
    bpf_define: str = ""
    # C lines at the start of each of its programs (iter: the last call,
    # which has no object, returns at once)
    prologue: tuple[str, ...] = ()
    # target -> its prologue, where it differs by target (a pinned iterator's)
    prologue_for: Optional[Callable] = None
    # Its events are filtered by the tracer's -p PID where the program asks
    # (Program.pid_filter: bpftrace's "-p acts like a predicate" of 0.27):
    # kernel probes and CPU-wide events. Not uprobes and USDT (attached to
    # the process), BEGIN/END (run once), interval (its wall-clock rate kept)
    # nor iterators (run in the tracer); docs/bpftrace.md, "-p PID"
    pid_filtered: bool = False
    # The argument of an example probe, for `a PROVIDER probe needs an argument`
    example: str = ""
    has_stack: bool = True
    # How its programs are named (codegen/names.py): `prog_name`, one name
    # for its one program (BEGIN: begin); else after the last `/` or `:`
    # part of what it traces where `name_last` (vfs_read, sys_enter_read),
    # with its own name first where `name_prefixed` (a return probe's:
    # kretprobe_vfs_read beside its entry's vfs_read); else its name and
    # the whole argument (profile_99hz)
    prog_name: str = ""
    name_last: bool = False
    name_prefixed: bool = False
    # Its programs run on a user task's registers: the stack they read
    # (sargN) is user memory
    user: bool = False
    # Its C half names, at run time, the attach point a glob matched
    # (`probe` in a bpftrace wildcard: PLYC_TP_NAMES in the probe's
    # bpf_defines, read by its c_data)
    names_matches: bool = False
    # The run ends once it is attached (iter: the attach runs the
    # iteration), so no probe but a runs_once one may run beside it
    ends_run: bool = False
    # (target) -> the kernel events its program joins, each running at most
    # BPF_TRACE_MAX_PROGS programs (codegen/limits.py), or None: no such limit
    shared_events: Optional[Callable] = None
    # (target) -> the kernel function whose fentry/fexit trampoline its own
    # program joins (BPF_MAX_TRAMP_LINKS, codegen/limits.py), or None
    trampoline: Optional[Callable] = None
    # (target) -> its programs run in a task's context with interrupts on
    # (system calls, user probes, the tracer's own BEGIN/END and
    # iterators), or None: maybe in an interrupt, or with interrupts off.
    # Only there may a shared aggregation's keys be allocated as they come
    # (runtime-c/load/mapmem.c says why)
    task_context: Optional[Callable[[Target], bool]] = None
    doc: str = ""

    # Fields -> the spec's text as this provider spells it (the probe's
    # name in the IR, the program's name and the tracer's messages)
    spell: Optional[Callable[[Fields], str]] = None

    def parse(self, spec: Spec) -> Target:
        """A spec written as text."""
        return self.make(spec, self.fields(spec))

    def var(self, name: str) -> Optional[Var]:
        for v in self.variables:
            if v.name == name:
                return v
        return None


def c_str(s: str) -> str:
    """A C string literal, or NULL for none."""
    from ..codegen.cescape import c_string
    return c_string(s) if s else "NULL"


def spec_error(spec: Spec, message: str, note: str = None) -> PlycError:
    from ..diag import error
    return error(message, spec.span, note)
