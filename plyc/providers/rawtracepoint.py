"""rawtracepoint[:module]:event — a tracepoint's arguments as the kernel
passes them to its probes (TP_PROTO), one 64-bit word each: arg0, arg1, ...
(BPF_PROG_TYPE_RAW_TRACEPOINT, Linux 4.17). `args.name` types them from
the build machine's BTF, as current bpftrace does: the types from the
tracepoint's `btf_trace_EVENT` typedef, the names from the function that
calls BPF programs for it (`__probestub_EVENT` since 6.4, else
`__bpf_trace_EVENT`, or `__bpf_trace_CLASS` of the event's class, found by
the same argument types)."""
from __future__ import annotations

import re

from .. import btf as B
from .. import types as T
from ..diag import error
from ..ir import variables as V
from .base import Provider, Target, Var, c_str, is_glob, spec_error
from .kfunc import fields, spell
from .kfunc import ARGS

WORDS = tuple(Var(f"arg{i}", T.U64, V.CTX_WORD, i, doc="the tracepoint's argument, as a word", invariant=True)
              for i in range(12))


def make(spec, f) -> Target:
    module, event = f.module, f.function
    if is_glob(module + event):
        raise spec_error(spec, "rawtracepoint wildcards are not supported by plyc yet")
    if not re.fullmatch(r"\w+", event) or (module and not re.fullmatch(r"[\w-]+", module)):
        raise spec_error(spec, f"'{spec.arg}' is not a raw tracepoint name (rawtracepoint[:module]:event)")
    t = Target(PROVIDER, spec, event)
    # the module's own tracepoint, checked on the device (the kernel's
    # attach by name would take vmlinux's of that name)
    t.extra["module"] = "" if module == "vmlinux" else module
    return t


def _types(b, proto) -> tuple:
    return tuple(t for _, t in proto.members)


def named_args(b, event: str):
    """[(name, BTF type id)] of a tracepoint's arguments in BTF b; None:
    no btf_trace_EVENT; "": its arguments have no names there."""
    tid = b.find(B.TYPEDEF, f"btf_trace_{event}")
    ptr = b[b[tid].type] if tid is not None else None
    if ptr is None or ptr.kind != B.PTR or b[ptr.type].kind != B.FUNC_PROTO:
        return None
    proto = b[ptr.type]
    named = None
    for fname in (f"__probestub_{event}", f"__bpf_trace_{event}"):
        fid = b.find(B.FUNC, fname)
        if fid is not None:
            named = b[b[fid].type]
            break
    if named is None:
        # An event of a class (DECLARE_EVENT_CLASS) shares its class's function.
        same = {t.type for t in b.types[1:] if t.kind == B.FUNC and t.name.startswith("__bpf_trace_")
                and _types(b, b[t.type]) == _types(b, proto)}
        if len(same) == 1:
            named = b[same.pop()]
    if named is None or not all(n for n, _ in named.members[1:]):
        return ""
    # The first is the probe's own data (void *__data), not the tracepoint's.
    return [(n, t) for (n, _), (_, t) in zip(named.members[1:], proto.members[1:])]


def prototype(target: Target, ktypes, span) -> list:
    """[(name, BTF type id)] of the tracepoint's arguments on the build machine."""
    event = target.target
    try:
        b = ktypes.btf
    except B.BTFError as err:
        raise error(f"raw tracepoint arguments are typed from the kernel's BTF: {err}", span) from None
    args = named_args(b, event)
    if args is None:
        raise error(f"the build machine's kernel BTF has no btf_trace_{event}: the arguments of "
                    f"rawtracepoint:{event} are arg0, arg1, ... only", span)
    if args == "":
        raise error(f"the build machine's kernel BTF names no arguments of rawtracepoint:{event}: "
                    "use arg0, arg1, ...", span)
    return args


def arg(target: Target, name: str, ktypes, span) -> Var:
    args = prototype(target, ktypes, span)
    names = [n for n, _ in args]
    if name not in names:
        raise error(f"rawtracepoint:{target.target} has no argument '{name}'", span,
                    f"its arguments are: {', '.join(names)}")
    i = names.index(name)
    try:
        typ = ktypes.value_type(args[i][1])
    except TypeError as err:
        raise error(f"argument '{name}' of rawtracepoint:{target.target}: {err}", span) from None
    return Var(f"args_{name}", typ, V.CTX_WORD, i, doc=f"argument {name}")


def c_data(t: Target, p):
    return "plyc_rawtracepoint_data", [("target", c_str(t.target)),
                                       ("module", c_str(t.extra["module"]) if t.extra.get("module") else "NULL")]


PROVIDER = Provider(
    name="rawtracepoint", aliases=(), fields=fields, make=make, spell=spell, section=lambda t: "raw_tp", pid_filtered=True,
    ctx_decl="__u64 *ctx", variables=WORDS + (Var("data", ARGS, V.CTX, doc="the arguments: args.name"),),
    c_provider="plyc_provider_rawtracepoint", c_data=c_data, example="sched_switch", arg=arg,
    doc="a tracepoint's raw arguments")
