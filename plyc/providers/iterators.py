"""iter:OBJECT (bpftrace's iterator probes) — a BPF iterator over the kernel's
tasks (`task`), their open files (`task_file`) or their memory mappings
(`task_vma`): the program runs once for each, and `ctx` is the iterator's
context (`struct bpf_iter__task *`: `ctx->task`, `ctx->file`, `ctx->fd`,
`ctx->vma`), read through BTF.

The tracer runs the iteration itself, once, after BEGIN (runtime-c/
providers/iter.c): it links the program, reads the iterator to its end, and
the run stops there, as bpftrace's does. The programs' output goes through
the events, as every probe's (bpftrace writes an iterator's printf with
bpf_seq_printf; docs/bpftrace.md says what differs).

    iter:task { printf("%s:%d\\n", ctx->task->comm, ctx->task->pid); }

A pinned iterator (`iter:task:PIN`, bpftrace 0.27's) is not run: the
tracer pins its link at PIN in the BPF file system (a relative PIN under
/sys/fs/bpf, as 0.27 puts it), says "Program pinned to PIN" as 0.27 does,
and the run ends; each read of the pin (`cat PIN`) runs the program, whose
printf() writes into what the read returns (bpf_seq_printf, codegen/
seqprintf.py), as bpftrace's does. The pin outlives the tracer: that is
what the user asked for (docs/bpftrace.md).
"""
from __future__ import annotations

from .. import types as T
from ..ir import variables as V
from .base import Fields, Provider, Target, Var, c_str, spec_error

# object: the Linux version that has its iterator (the tracer's message)
OBJECTS = {"task": "5.8", "task_file": "5.8", "task_vma": "5.12"}
# Where a relative pin goes (bpftrace 0.27's), and the longest path the kernel takes
BPFFS = "/sys/fs/bpf/"
PATH_MAX = 4096


def fields(spec) -> Fields:
    """`OBJECT[:PIN]`."""
    obj, sep, pin = spec.arg.partition(":")
    return Fields(function=obj, extra=pin if sep else "")


def spell(f: Fields) -> str:
    return f.function + (f":{f.extra}" if f.extra else "")


def make(spec, f: Fields) -> Target:
    known = ", ".join(OBJECTS)
    if f.function not in OBJECTS:
        raise spec_error(spec, f"unknown iterator '{f.function}'", f"plyc's iterators are: {known}")
    t = Target(PROVIDER, spec, f.function)
    if f.extra:
        t.extra["pin"] = pin_path(spec, f.extra)
    return t


def pin_path(spec, pin: str) -> str:
    """Where `iter:OBJECT:PIN` pins: PIN, under /sys/fs/bpf where relative."""
    if "\0" in pin or pin.endswith("/"):
        raise spec_error(spec, f"'{pin}' names no file to pin the iterator at")
    path = pin if pin.startswith("/") else BPFFS + pin
    if len(path.encode()) >= PATH_MAX:
        raise spec_error(spec, f"the pin's path is longer than the kernel takes ({PATH_MAX - 1} bytes)")
    return path


def pinned(t: Target) -> str:
    """The path a pinned iterator's link goes to, "" for one the tracer runs."""
    return t.extra.get("pin", "")


def typed(t: Target, name: str, ktypes):
    """ctx: a pointer to the iterator's context struct, from the kernel's BTF."""
    if name != "ctx":
        return None
    tid = ktypes.lookup(("struct", f"bpf_iter__{t.target}"))
    return ktypes.pointer_to(tid) if tid is not None else None


# Every iterator's context is (meta, object, ...), meta's first member the
# seq_file: the iteration's last call has no object and returns at once; the
# others write a byte each to the iterator's text, which paces the tracer's
# reads (runtime-c/providers/iter.c).
PROLOGUE = (
    "if (!((void **)ctx)[1])",
    "\treturn 0;",
    "bpf_seq_write(*(struct seq_file **)((void **)ctx)[0], \"\", 1);",
)


# What a pinned iterator's printf() may hold: the kernel formats it
# (bpf_seq_printf, codegen/seqprintf.py), at most 12 values of these
PIN_MAX_ARGS = 12
PIN_INT_CONVS = "diuxX"


def check_pinned(probe, diag) -> None:
    """A pinned iterator's output is what a read of its pin returns, which
    only its printf() writes to, with what the kernel formats: any other
    output (print(), exit(): events no one reads) is refused here."""
    from ..ir import nodes as ir
    from ..printf import Conv
    if not pinned(probe.target):
        return

    def refuse(what, span):
        diag.error(f"{what} in a pinned iterator: its output is what a read of the pin returns, "
                   "which only printf() writes to (with %d %i %u %x %X %s)", span)

    def visit(n):
        if isinstance(n, ir.EmitEvent):
            ev = n.event
            if ev.kind != ir.PRINTF:
                refuse(f"{ev.kind}()" if ev.kind.isidentifier() else "this output", n.span or ev.span)
                return
            convs = [p for p in ev.parts if isinstance(p, Conv)]
            if len(convs) > PIN_MAX_ARGS:
                diag.error(f"a pinned iterator's printf() takes at most {PIN_MAX_ARGS} arguments "
                           "(the kernel's bpf_seq_printf)", n.span or ev.span)
                return
            for conv, arg in zip(convs, n.args):
                ok = (conv.conv in PIN_INT_CONVS and arg.type.is_int) or (conv.conv == "s" and arg.type.kind == "str")
                if not ok:
                    refuse(f"printf's {conv.text} of a {arg.type}", n.span or ev.span)
        for c in ir.children(n):
            visit(c)
    visit(probe.body)


def prologue(t: Target) -> tuple:
    """A pinned iterator's text is what its printf() writes, no pacing byte."""
    return PROLOGUE[:2] if pinned(t) else PROLOGUE


def c_data(t: Target, p):
    return "plyc_iter_data", [("target", c_str(t.target)), ("since", c_str(OBJECTS[t.target])),
                              ("sleepable", "1" if p.probe.sleepable else "0"), ("pin", c_str(pinned(t)))]


PROVIDER = Provider(
    name="iter", aliases=("it",), fields=fields, make=make, spell=spell,
    section=lambda t: f"iter/{t.target}", ctx_decl="void *ctx",
    variables=(Var("ctx", T.U64, V.CTX, doc="the iterator's context (struct bpf_iter__OBJECT *)"),),
    typed=typed, c_provider="plyc_provider_iter", task_context=lambda t: True, c_data=c_data, example="task", prologue=PROLOGUE,
    prologue_for=prologue,
    has_stack=False, ends_run=True, doc="once for each kernel task, open file or mapping (a BPF iterator)")
