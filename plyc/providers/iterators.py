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
"""
from __future__ import annotations

from .. import types as T
from ..ir import variables as V
from .base import Fields, Provider, Target, Var, c_str, spec_error

# object: the Linux version that has its iterator (the tracer's message)
OBJECTS = {"task": "5.8", "task_file": "5.8", "task_vma": "5.12"}


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
    if f.extra:
        raise spec_error(spec, f"a pinned iterator (iter:{f.function}:{f.extra}) is not supported by plyc yet",
                         f"iter:{f.function} runs the iteration and prints what it prints")
    return Target(PROVIDER, spec, f.function)


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


def c_data(t: Target, p):
    return "plyc_iter_data", [("target", c_str(t.target)), ("since", c_str(OBJECTS[t.target])),
                              ("sleepable", "1" if p.probe.sleepable else "0")]


PROVIDER = Provider(
    name="iter", aliases=("it",), fields=fields, make=make, spell=spell,
    section=lambda t: f"iter/{t.target}", ctx_decl="void *ctx",
    variables=(Var("ctx", T.U64, V.CTX, doc="the iterator's context (struct bpf_iter__OBJECT *)"),),
    typed=typed, c_provider="plyc_provider_iter", task_context=lambda t: True, c_data=c_data, example="task", prologue=PROLOGUE,
    has_stack=False, ends_run=True, doc="once for each kernel task, open file or mapping (a BPF iterator)")
