"""kfunc / kretfunc (bpftrace's names; also fentry / fexit) — kernel function
entry and return through BPF trampolines. The program reads the traced
function's arguments as the words of its context, by the place each has
in the function's BTF prototype (`args.file` is ctx[1] of vfs_read on every
kernel that kept its signature); the return value follows them.

A wildcard is one program loaded once per matched function (the tracer
clones it): its code reads fixed places, so every function the glob
matches on the build machine must have each argument the script reads at
the same place with the same type, and the same number of arguments where
it reads the return value. The tracer checks the device's prototypes
against those places and leaves out (wildcard) or refuses (exact name) a
function that differs. `probe` in a wildcard names the function that
fired by the BPF cookie each clone's link carries (Linux 6.0)."""
from __future__ import annotations

import fnmatch
import re

from .. import btf as B
from .. import types as T
from ..diag import error
from ..ir import variables as V
from .base import Fields, Provider, Target, Var, c_str, is_glob, spec_error

ARGS = T.Type("ctx", 8, pointee="fargs")


def fields(spec) -> Fields:
    """`[module:]function`."""
    module, _, func = spec.arg.rpartition(":")
    return Fields(function=func, module=module)


def spell(f: Fields) -> str:
    return f"{f.module}:{f.function}" if f.module else f.function


def make_kind(ret: bool):
    def make(spec, f: Fields) -> Target:
        module, func = f.module, f.function
        if not re.fullmatch(r"[A-Za-z0-9_.*?\[\]!^-]+", func) or (module and not re.fullmatch(r"[\w-]+", module)):
            raise spec_error(spec, f"'{spec.arg}' is not a kernel function, glob or module:function")
        t = Target(KRETFUNC if ret else KFUNC, spec, func, glob=is_glob(func))
        t.extra["module"] = "" if module == "vmlinux" else module
        t.extra["args"] = {}        # argument name -> its context word, as read
        t.extra["retval"] = -1      # the return value's word, if read
        return t
    return make


def matches(target: Target, ktypes, span) -> list:
    """(name, FUNC_PROTO) of each function the target names in the build
    machine's BTF, sorted by name (found once per target)."""
    if "matches" in target.extra:
        return target.extra["matches"]
    module = target.extra["module"]
    try:
        # a module's functions from its split BTF (/sys/kernel/btf/MODULE), as bpftrace reads them
        b = ktypes.use_module(module) if module else ktypes.btf
    except B.BTFError as err:
        what = f"the arguments of {module}:{target.target} are typed from the module's BTF" if module \
            else "kfunc arguments are typed from the kernel's BTF"
        raise error(f"{what}: {err}", span) from None
    where = f"module {module}'s BTF" if module else "kernel BTF"
    first = b.first if module else 1        # a module's own functions follow vmlinux's types
    if not target.glob:
        fid = b.find(B.FUNC, target.target)
        if fid is None or fid < first:
            raise error(f"the build machine's {where} has no function {target.target}", target.spec.span)
        target.extra["matches"] = [(target.target, b[b[fid].type])]
        return target.extra["matches"]
    found = sorted((t.name, b[t.type]) for t in b.types[first:]
                   if t.kind == B.FUNC and fnmatch.fnmatchcase(t.name, target.target))
    if not found:
        raise error(f"no function in the build machine's {where} matches {target.target}", target.spec.span)
    target.extra["matches"] = found
    return found


def _value_type(ktypes, tid: int, what: str, span) -> T.Type:
    try:
        return ktypes.value_type(tid)
    except TypeError as err:
        raise error(f"{what}: {err}", span) from None


def arg(target: Target, name: str, ktypes, span) -> Var:
    """args.NAME: the context word of that argument in every match, one type."""
    found = matches(target, ktypes, span)
    b = ktypes.btf          # after matches(): a module's BTF, where the target is a module's
    first = None
    for func, proto in found:
        names = [n for n, _ in proto.members]
        if name not in names:
            note = f"its arguments are: {', '.join(names)}" if names else "it takes no arguments"
            raise error(f"function {func}{' (a match of ' + target.target + ')' if target.glob else ''} "
                        f"has no argument '{name}'", span, note)
        i = names.index(name)
        tname = b.type_name(proto.members[i][1])
        if first is None:
            first = (func, i, tname, proto.members[i][1])
        elif (i, tname) != first[1:3]:
            raise error(f"argument '{name}' differs among the functions {target.target} matches: "
                        f"{first[2]} (argument {first[1]}) in {first[0]}, {tname} (argument {i}) in {func}; "
                        "a wildcard's program reads one place", span)
    func, i, tname, tid = first
    typ = _value_type(ktypes, tid, f"argument '{name}' of {func} ({tname})", span)
    target.extra["args"][name] = i
    return Var(f"args_{name}", typ, V.CTX_WORD, i, doc=f"{func}'s argument {name}")


def retval(target: Target, ktypes, span) -> Var:
    """retval of a kretfunc: the word after the arguments, one type in every match."""
    found = matches(target, ktypes, span)
    b = ktypes.btf
    first = None
    for func, proto in found:
        if not proto.type:
            raise error(f"function {func} returns void: there is no retval", span)
        key = (len(proto.members), b.type_name(proto.type))
        if first is None:
            first = (func, key, proto.type)
        elif key != first[1]:
            raise error(f"retval differs among the functions {target.target} matches: {first[0]} takes "
                        f"{first[1][0]} arguments and returns {first[1][1]}, {func} {key[0]} and {key[1]}; "
                        "a wildcard's program reads one place", span)
    func, (nargs, tname), tid = first
    typ = _value_type(ktypes, tid, f"the return value of {func} ({tname})", span)
    target.extra["retval"] = nargs
    return Var("retval", typ, V.CTX_WORD, nargs, doc=f"{func}'s return value", invariant=True)


def c_data(t: Target, p):
    places = ",".join(f"{name}@{i}" for name, i in sorted(t.extra["args"].items(), key=lambda x: x[1]))
    return "plyc_kfunc_data", [
        ("target", c_str(t.target)), ("module", c_str(t.extra["module"])),
        ("retprobe", str(int(t.provider is KRETFUNC))), ("args", c_str(places)),
        ("ret_slot", str(t.extra["retval"])),
        # `probe` in a wildcard (0.27's fentry:vmlinux:f): each function attached with a cookie naming it
        ("names", str(int("PLYC_TP_NAMES" in p.probe.bpf_defines and t.glob)))]


def trampoline(t: Target):
    """The function whose trampoline an exact kfunc's program joins (a
    wildcard's functions are known on the device only)."""
    return None if t.glob else f"{t.extra.get('module') or 'vmlinux'}:{t.target}"


def _provider(ret: bool) -> Provider:
    name = "kretfunc" if ret else "kfunc"
    return Provider(
        name=name, aliases=("fexit",) if ret else ("fentry",), fields=fields, make=make_kind(ret), spell=spell, pid_filtered=True,
        c_provider=f"plyc_provider_{name}", c_data=c_data, example="vfs_read",
        section=lambda t: "fexit" if ret else "fentry", ctx_decl="__u64 *ctx",
        variables=(Var("data", ARGS, V.CTX, doc="the function's arguments: args.name"),),
        names_matches=True, trampoline=trampoline, arg=arg, retval=retval if ret else None,
        doc="kernel function return (fexit)" if ret else "kernel function entry (fentry)")


KFUNC = _provider(False)
KRETFUNC = _provider(True)
