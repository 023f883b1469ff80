"""uprobe / uretprobe / usdt — user-space probes. `PATH:sym[+off]`,
`PATH:0xADDR`, `PATH:glob*` (every function matching), or a library by short name (`c:malloc` is libc's malloc, as
in argdist); `sym@VERSION` (or `sym@@VERSION`) is one version of a symbol
that a library exports in several, a plain `sym` its default version;
usdt is `PATH:[provider:]name`. Paths, libraries and symbols are resolved
on the device when the tracer starts."""
from __future__ import annotations

import re

from .. import types as T
from ..ir import variables as V
from .base import Fields, Provider, Target, Var, c_str, is_glob, spec_error

# Arguments of user functions point into user memory.
USER_ARG = T.Type("int", 8, False, user=True)

ARGS = tuple(Var(f"arg{i}", USER_ARG, V.UPROBE_ARG, i, doc="argument", invariant=True) for i in range(10))


def _not_usdt(spec):
    return spec_error(spec, f"'{spec.arg}' is not PATH:[provider:]name",
                      "e.g. usdt:/usr/bin/python3:python:function__entry")


def usdt_fields(spec) -> Fields:
    """`PATH:[provider:]name`."""
    parts = spec.arg.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise _not_usdt(spec)
    return Fields(binary=parts[0], group=parts[1] if len(parts) == 3 else None, function=parts[-1])


def usdt_spell(f: Fields) -> str:
    return ":".join(x for x in (f.binary, f.group, f.function) if x is not None)


def fields(spec) -> Fields:
    """`PATH:symbol[+offset]`, `PATH:0xADDR`, `PATH:glob`."""
    path, _, sym = spec.arg.rpartition(":")
    sym, plus, off = sym.partition("+")
    return Fields(binary=path, function=sym, offset=off if plus else None)


def spell(f: Fields) -> str:
    return f"{f.binary}:{f.function}" + (f"+{f.offset}" if f.offset is not None else "")


def make_kind(kind):
    def make(spec, f: Fields) -> Target:
        if kind == "usdt":
            if not f.binary or not f.function or f.group == "":
                raise _not_usdt(spec)
            t = Target(USDT, spec, f.function)
            t.extra.update(path=f.binary, usdt_provider=f.group or "", usdt_name=f.function)
            return t
        path, sym, off = f.binary, f.function, f.offset or ""
        if not path or not (sym or f.offset is not None):
            raise spec_error(spec, f"'{spec.arg}' is not PATH:symbol",
                             "e.g. uprobe:/bin/bash:readline, uprobe:c:malloc, uprobe:/bin/ls:0x4a20")
        glob = is_glob(sym)
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
    return make


def c_data(t: Target, p):
    if t.provider is USDT:
        return "plyc_usdt_data", [("path", c_str(t.extra["path"])), ("provider", c_str(t.extra["usdt_provider"])),
                                  ("name", c_str(t.extra["usdt_name"]))]
    # `probe` in a glob (bpftrace's): each function attached with a cookie naming it
    names = "PLYC_TP_NAMES" in p.probe.bpf_defines and t.glob
    return "plyc_uprobe_data", [("path", c_str(t.extra["path"])), ("target", c_str(t.target)),
                                ("offset", f"{t.extra['offset']}ULL"), ("retprobe", str(int(t.provider is URETPROBE))),
                                ("names", str(int(names)))]


UPROBE = Provider(name="uprobe", aliases=("u",), fields=fields, make=make_kind("uprobe"), spell=spell,
                  c_provider="plyc_provider_uprobe", task_context=lambda t: True, c_data=c_data, example="/bin/bash:readline", preemptible=True,
                  section=lambda t: "uprobe", ctx_decl="struct pt_regs *ctx",
                  variables=ARGS + (Var("caller", T.U64, V.IP, invariant=True),
                                    Var("regs", T.Type("ctx", 8, pointee="regs"), V.CTX)),
                  name_last=True, user=True, names_matches=True, doc="user function entry")
URETPROBE = Provider(name="uretprobe", aliases=("ur",), fields=fields, make=make_kind("uretprobe"), spell=spell,
                     c_provider="plyc_provider_uretprobe", task_context=lambda t: True, c_data=c_data, example="/bin/bash:readline", preemptible=True,
                     section=lambda t: "uretprobe", ctx_decl="struct pt_regs *ctx",
                     variables=(Var("retval", T.S64, V.RET, invariant=True),
                                Var("regs", T.Type("ctx", 8, pointee="regs"), V.CTX)),
                     name_last=True, name_prefixed=True, user=True, names_matches=True, doc="user function return")
USDT = Provider(name="usdt", aliases=(), fields=usdt_fields, make=make_kind("usdt"), spell=usdt_spell,
                c_provider="plyc_provider_usdt", task_context=lambda t: True, c_data=c_data, preemptible=True, bpf_define="PLYC_USDT",
                example="/path/to/binary:provider:name",
                section=lambda t: "usdt", ctx_decl="struct pt_regs *ctx",
                variables=tuple(Var(f"arg{i}", USER_ARG, V.USDT_ARG, i, doc="argument", invariant=True)
                                for i in range(10)),
                name_last=True, user=True, doc="user static tracepoint")
