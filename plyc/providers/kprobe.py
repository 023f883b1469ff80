"""kprobe / kretprobe — kernel function entry and return. Parsed and
type-checked here; code generation and attachment come with the function
probe work (this machine's kernel has no kprobes)."""
from __future__ import annotations

import re

from .. import types as T
from . import Provider, Target, Var, spec_error

ARGS = tuple(Var(f"arg{i}", T.U64, f"PT_REGS_PARM{i + 1}(ctx)") for i in range(10))


def parse_kind(kind):
    def parse(spec) -> Target:
        arg = spec.arg
        if not re.fullmatch(r"(0x[0-9a-fA-F]+|[A-Za-z0-9_.*?\[\]\-!^]+(\+(0x[0-9a-fA-F]+|\d+))?)", arg):
            raise spec_error(spec, f"'{arg}' is not a kernel symbol, glob, sym+offset or 0xADDR")
        if kind == "PLYC_P_KRETPROBE" and "+" in arg:
            raise spec_error(spec, "a kretprobe can't take an offset")
        prov = KPROBE if kind == "PLYC_P_KPROBE" else KRETPROBE
        return Target(prov, spec, kind, arg, glob=bool(re.search(r"[*?\[]", arg)))
    return parse


KPROBE = Provider(
    name="kprobe", aliases=("k",), parse=parse_kind("PLYC_P_KPROBE"),
    section=lambda t: "kprobe", ctx_decl="struct pt_regs *ctx",
    variables=ARGS + (Var("caller", T.SYM, "PT_REGS_IP(ctx)"),
                      Var("regs", T.Type("ctx", 8, pointee="regs"), "ctx")),
    runnable_here=False, doc="kernel function entry")

KRETPROBE = Provider(
    name="kretprobe", aliases=("kr",), parse=parse_kind("PLYC_P_KRETPROBE"),
    section=lambda t: "kretprobe", ctx_decl="struct pt_regs *ctx",
    variables=(Var("retval", T.S64, "PT_REGS_RC(ctx)"),
               Var("regs", T.Type("ctx", 8, pointee="regs"), "ctx")),
    runnable_here=False, doc="kernel function return")
