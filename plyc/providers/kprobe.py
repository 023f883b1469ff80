"""kprobe / kretprobe — kernel function entry and return. The target is
resolved on the device when the tracer starts (globs, and the syscall
spellings of every kernel era: SyS_read, sys_read, __x64_sys_read); the
arguments are typed from the build kernel's BTF prototype where known."""
from __future__ import annotations

import re

from .. import arch as A
from .. import btf as B
from .. import types as T
from ..ir import variables as V
from .base import Fields, Provider, Target, Var, c_str, is_glob, spec_error

# A syscall named in any era's spelling, and the name of the syscall itself.
SYSCALL = re.compile(r"^(?:SyS_|sys_|__se_sys_|__do_sys_|__(?:x64|ia32|arm64|arm|s390x|riscv)_sys_)(\w+)$")

ARGS = tuple(Var(f"arg{i}", T.U64, V.KPROBE_ARG, i, invariant=True,
                 doc="argument, per the calling convention") for i in range(10))


def fields(spec) -> Fields:
    """`[module:]function[+offset]` or `0xADDR`."""
    module, _, arg = spec.arg.rpartition(":") if not spec.arg.startswith("0x") else ("", "", spec.arg)
    sym, plus, off = arg.partition("+")
    return Fields(function=sym, module=module, offset=off if plus else None)


def _with_offset(f: Fields) -> str:
    return f.function + (f"+{f.offset}" if f.offset is not None else "")


def spell(f: Fields) -> str:
    return ":".join(x for x in (f.module, _with_offset(f)) if x)


def make_kind(ret: bool):
    def make(spec, f: Fields) -> Target:
        # module:function (bpftrace's kprobe:kvm:f): only that module's symbols
        module, arg = f.module, _with_offset(f)
        if module.startswith("0x"):
            # an address is the whole spec (kprobe:0xADDR): nothing is a module before it
            raise spec_error(spec, f"'{module}:{arg}' is not a kernel symbol, glob, sym+offset or 0xADDR")
        if module and not re.fullmatch(r"[\w-]+", module):
            raise spec_error(spec, f"'{module}' is not a kernel module's name")
        if module and arg.startswith("0x"):
            raise spec_error(spec, "an address is not in a module: write kprobe:0xADDR")
        if not re.fullmatch(r"(0x[0-9a-fA-F]+|[A-Za-z0-9_.*?\[\]\-!^]+(\+(0x[0-9a-fA-F]+|\d+))?)", arg):
            raise spec_error(spec, f"'{arg}' is not a kernel symbol, glob, sym+offset or 0xADDR")
        if ret and ("+" in arg or arg.startswith("0x")):
            raise spec_error(spec, "a kretprobe takes a function name or glob, not an offset or address")
        sym, off = f.function, f.offset
        t = Target(KRETPROBE if ret else KPROBE, spec, sym, glob=is_glob(sym))
        t.extra["offset"] = int(off, 0) if off else 0
        t.extra["module"] = "" if module == "vmlinux" else module
        return t
    return make


def prototype(ktypes, target: Target):
    """The BTF prototype (FUNC_PROTO type) of the probed function, if known:
    for a syscall in any spelling, its typed implementation."""
    if target.glob or target.target.startswith("0x") or target.extra.get("offset") or \
            target.extra.get("module"):
        return None
    name = target.target
    m = SYSCALL.match(name)
    candidates = [f"__do_sys_{m.group(1)}", f"__se_sys_{m.group(1)}", f"sys_{m.group(1)}"] if m else [name]
    try:
        b = ktypes.btf
    except B.BTFError:
        return None
    for cand in candidates:
        fid = b.find(B.FUNC, cand)
        if fid is not None:
            proto = b[b[fid].type]
            # A wrapper taking struct pt_regs * says nothing about the syscall.
            if m and len(proto.members) == 1 and "pt_regs" in b.type_name(proto.members[0][1]):
                continue
            return proto
    return None


def typed(target: Target, name: str, ktypes):
    """arg0..argN and retval typed from the prototype (None: untyped)."""
    proto = prototype(ktypes, target)
    if proto is None:
        return None
    try:
        if name == "retval" and proto.type:
            return ktypes.value_type(proto.type)
        if name.startswith("arg") and name[3:].isdigit() and int(name[3:]) < len(proto.members):
            t = ktypes.value_type(proto.members[int(name[3:])][1])
            return t if t.kind == "int" else None
    except TypeError:
        return None
    return None


def fentry_plan(target: Target, ktypes, arch: str):
    """How this probe can run as fentry/fexit: the function it attaches to
    on the build kernel, its argument count and whether it is a syscall
    wrapper. None when it can't (globs, offsets, addresses, no BTF). The
    tracer uses the plan only if the device resolves the same function
    with the same prototype, else the kprobe."""
    if target.glob or target.target.startswith("0x") or target.extra.get("offset") or \
            target.extra.get("module"):
        return None
    try:
        b = ktypes.btf
    except B.BTFError:
        return None
    names = [target.target]
    m = SYSCALL.match(target.target)
    prefix = A.get(arch).syscall_prefix
    if m and prefix:
        names.insert(0, prefix + m.group(1))
    for name in names:
        fid = b.find(B.FUNC, name)
        if fid is not None:
            proto = b[b[fid].type]
            wrapped = bool(prefix) and name.startswith(prefix)
            return dict(func=name, nargs=len(proto.members), wrapped=wrapped, section=twin_section(target))
    # A syscall wrapper takes the user's registers alone on every
    # architecture: another's in the build kernel (a cross build's BTF is
    # the build machine's) stands for the target's.
    for other in sorted({a.syscall_prefix for a in A.ARCHES.values()} - {None, prefix}):
        fid = b.find(B.FUNC, other + m.group(1)) if m and prefix else None
        if fid is not None and len(b[b[fid].type].members) == 1:
            return dict(func=prefix + m.group(1), nargs=1, wrapped=True, section=twin_section(target))
    return None


def twin_section(target: Target) -> str:
    return "fexit" if target.provider is KRETPROBE else "fentry"


def fentry_ctx(p) -> str:
    """The context slots a probe's fentry/fexit twin reads, as a mask: the
    tracer has the device's verifier check those reads before it chooses
    the twin (5.10 refuses an argument that points to other than a struct)."""
    if not p.fentry:
        return "0x0ULL"
    slots = set()
    for name in p.probe.args_read:
        if name == "retval":
            slots.add(p.fentry["nargs"])
        else:
            # A syscall wrapper's arguments are read from its pt_regs, ctx[0].
            slots.add(0 if p.fentry["wrapped"] else int(name[3:]))
    return f"{sum(1 << s for s in slots):#x}ULL"


def c_data(t: Target, p):
    f = p.fentry
    return "plyc_kprobe_data", [
        ("target", c_str(t.target)), ("module", c_str(t.extra.get("module", ""))),
        ("offset", f"{t.extra.get('offset', 0)}ULL"),
        ("retprobe", str(int(t.provider is KRETPROBE))),
        # `probe` in a glob (bpftrace's): each function attached with a cookie naming it
        ("names", str(int("PLYC_TP_NAMES" in p.probe.bpf_defines))),
        ("fentry_prog", c_str(p.twin) if f else "NULL"),
        ("fentry_func", c_str(f["func"]) if f else "NULL"),
        ("fentry_nargs", str(f["nargs"] if f else 0)), ("fentry_ctx", fentry_ctx(p)),
        ("fentry_only", c_str(p.probe.needs_fentry) if p.probe.needs_fentry else "NULL"),
        ("group", str(t.extra.get("group", 0)))]


KPROBE = Provider(
    name="kprobe", aliases=("k",), fields=fields, make=make_kind(False), spell=spell, pid_filtered=True,
    c_provider="plyc_provider_kprobe", c_data=c_data, example="vfs_read",
    section=lambda t: "kprobe", ctx_decl="struct pt_regs *ctx",
    variables=ARGS + (Var("caller", T.SYM, V.IP, doc="where the probe hit, as sym+off", invariant=True),
                      Var("regs", T.Type("ctx", 8, pointee="regs"), V.CTX)),
    typed=typed, fentry=fentry_plan, name_last=True, names_matches=True, doc="kernel function entry")

KRETPROBE = Provider(
    name="kretprobe", aliases=("kr",), fields=fields, make=make_kind(True), spell=spell, pid_filtered=True,
    c_provider="plyc_provider_kretprobe", c_data=c_data, example="vfs_read",
    section=lambda t: "kretprobe", ctx_decl="struct pt_regs *ctx",
    variables=(Var("retval", T.S64, V.RET, doc="the return value", invariant=True),
               Var("regs", T.Type("ctx", 8, pointee="regs"), V.CTX)),
    typed=typed, fentry=fentry_plan, name_last=True, name_prefixed=True, names_matches=True,
    doc="kernel function return")
