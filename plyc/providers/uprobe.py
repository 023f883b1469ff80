"""uprobe / uretprobe / usdt — user-space probes. `PATH:sym[+off]`,
`PATH:0xADDR`, `PATH:glob*` (every function matching), or a library by short name (`c:malloc` is libc's malloc, as
in argdist); `sym@VERSION` (or `sym@@VERSION`) is one version of a symbol
that a library exports in several, a plain `sym` its default version;
usdt is `PATH:[provider:]name`. Paths, libraries and symbols are resolved
on the device when the tracer starts."""
from __future__ import annotations

import re

from .. import types as T
from .base import Provider, Target, Var, c_str, spec_error

# Arguments of user functions point into user memory.
USER_ARG = T.Type("int", 8, False, user=True)

ARGS = tuple(Var(f"arg{i}", USER_ARG, f"plyc_uprobe_arg(ctx, {i})", doc="argument") for i in range(10))


def parse_kind(kind):
    def parse(spec) -> Target:
        if kind == "usdt":
            parts = spec.arg.split(":")
            if len(parts) not in (2, 3) or not all(parts):
                raise spec_error(spec, f"'{spec.arg}' is not PATH:[provider:]name",
                                 "e.g. usdt:/usr/bin/python3:python:function__entry")
            t = Target(USDT, spec, parts[-1])
            t.extra.update(path=parts[0], usdt_provider=parts[1] if len(parts) == 3 else "",
                           usdt_name=parts[-1])
            return t
        path, sep, sym = spec.arg.rpartition(":")
        if not sep or not path or not sym:
            raise spec_error(spec, f"'{spec.arg}' is not PATH:symbol",
                             "e.g. uprobe:/bin/bash:readline, uprobe:c:malloc, uprobe:/bin/ls:0x4a20")
        sym, _, off = sym.partition("+")
        glob = bool(re.search(r"[*?\[]", sym))
        if glob:
            # every function whose name matches, attached on the device (bpftrace's wildcard)
            if off or "@" in sym or not re.fullmatch(r"[\w.$*?\[\]!^-]+", sym):
                raise spec_error(spec, f"'{sym}{'+' + off if off else ''}' is not a function name glob",
                                 "a glob takes no +offset or @VERSION, e.g. uprobe:/bin/bash:read*")
        elif not re.fullmatch(r"0x[0-9a-fA-F]+|[A-Za-z_.$][\w.$]*(@@?[\w.]+)?", sym) or \
                (off and not re.fullmatch(r"0x[0-9a-fA-F]+|\d+", off)):
            raise spec_error(spec, f"'{sym}{'+' + off if off else ''}' is not a symbol, sym+offset or 0xADDR",
                             "a symbol version is written sym@VERSION, e.g. uprobe:c:clock_nanosleep@GLIBC_2.2.5"
                             if "@" in sym else None)
        if kind == "uretprobe" and (off or sym.startswith("0x")):
            raise spec_error(spec, "a uretprobe takes a function name, not an offset or address")
        t = Target(UPROBE if kind == "uprobe" else URETPROBE, spec, sym, glob=glob)
        t.extra.update(path=path, offset=int(off, 0) if off else 0)
        return t
    return parse


def c_data(t: Target, p):
    if t.provider is USDT:
        return "plyc_usdt_data", [("path", c_str(t.extra["path"])), ("provider", c_str(t.extra["usdt_provider"])),
                                  ("name", c_str(t.extra["usdt_name"]))]
    # `probe` in a glob (bpftrace's): each function attached with a cookie naming it
    names = "PLYC_TP_NAMES" in p.probe.bpf_defines and t.glob
    return "plyc_uprobe_data", [("path", c_str(t.extra["path"])), ("target", c_str(t.target)),
                                ("offset", f"{t.extra['offset']}ULL"), ("retprobe", str(int(t.provider is URETPROBE))),
                                ("names", str(int(names)))]


UPROBE = Provider(name="uprobe", aliases=("u",), parse=parse_kind("uprobe"),
                  c_provider="plyc_provider_uprobe", c_data=c_data, example="/bin/bash:readline", preemptible=True,
                  section=lambda t: "uprobe", ctx_decl="struct pt_regs *ctx",
                  variables=ARGS + (Var("caller", T.Int(8, False, "hex"), "PLYC_IP(ctx)"),
                                    Var("regs", T.Type("ctx", 8, pointee="regs"), "ctx")),
                  doc="user function entry")
URETPROBE = Provider(name="uretprobe", aliases=("ur",), parse=parse_kind("uretprobe"),
                     c_provider="plyc_provider_uretprobe", c_data=c_data, example="/bin/bash:readline", preemptible=True,
                     section=lambda t: "uretprobe", ctx_decl="struct pt_regs *ctx",
                     variables=(Var("retval", T.S64, "PLYC_RET(ctx)"),
                                Var("regs", T.Type("ctx", 8, pointee="regs"), "ctx")),
                     doc="user function return")
USDT = Provider(name="usdt", aliases=(), parse=parse_kind("usdt"),
                c_provider="plyc_provider_usdt", c_data=c_data, preemptible=True, bpf_define="PLYC_USDT",
                example="/path/to/binary:provider:name",
                section=lambda t: "usdt", ctx_decl="struct pt_regs *ctx",
                variables=tuple(Var(f"arg{i}", USER_ARG, f"plyc_usdt_arg(ctx, {i})", doc="argument")
                                for i in range(10)),
                doc="user static tracepoint")
