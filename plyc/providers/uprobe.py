"""uprobe / uretprobe / usdt — user-space probes. Parsed and type-checked;
code generation comes with the function probe work."""
from __future__ import annotations

from .. import types as T
from . import Provider, Target, Var, spec_error

ARGS = tuple(Var(f"arg{i}", T.U64, f"PT_REGS_PARM{i + 1}(ctx)") for i in range(10))


def parse_kind(kind):
    def parse(spec) -> Target:
        path, sep, sym = spec.arg.rpartition(":")
        if not sep or not path or not sym:
            raise spec_error(spec, f"'{spec.arg}' is not PATH:symbol",
                             "e.g. uprobe:/bin/bash:readline, uprobe:c:malloc, usdt:/path:provider:name")
        prov = {"PLYC_P_UPROBE": UPROBE, "PLYC_P_URETPROBE": URETPROBE, "PLYC_P_USDT": USDT}[kind]
        return Target(prov, spec, kind, spec.arg)
    return parse


UPROBE = Provider(name="uprobe", aliases=("u",), parse=parse_kind("PLYC_P_UPROBE"),
                  section=lambda t: "uprobe", ctx_decl="struct pt_regs *ctx",
                  variables=ARGS + (Var("caller", T.SYM, "PT_REGS_IP(ctx)"),),
                  runnable_here=False, doc="user function entry")
URETPROBE = Provider(name="uretprobe", aliases=("ur",), parse=parse_kind("PLYC_P_URETPROBE"),
                     section=lambda t: "uretprobe", ctx_decl="struct pt_regs *ctx",
                     variables=(Var("retval", T.S64, "PT_REGS_RC(ctx)"),),
                     runnable_here=False, doc="user function return")
USDT = Provider(name="usdt", aliases=(), parse=parse_kind("PLYC_P_USDT"),
                section=lambda t: "usdt", ctx_decl="struct pt_regs *ctx",
                variables=ARGS, runnable_here=False, doc="user static tracepoint")
