"""How each provider lists its probes for `plyc list` (a table: LISTERS),
in bpftrace 0.27's `-l` text so its users' greps work: `tracepoint:G:E`,
`kprobe:F` (`kprobe:MODULE:F` of a module), `fentry:vmlinux:F` for kfunc,
`rawtracepoint:vmlinux:E`, `software:NAME:`, `iter:OBJECT`, `uprobe:PATH:F`,
`usdt:PATH:PROVIDER:NAME`. A lister takes the pattern's parts after the
provider (globs; a part not given is `*`), the source (plyc/listing.py)
and -v, and gives Listed lines; -v adds a tracepoint's fields and a
function's arguments as `-lv` prints them (TYPE NAME, four spaces in)."""
from __future__ import annotations

import fnmatch

from .. import arch
from .. import btf as B
from .. import tracefs
from ..diag import did_you_mean
from ..elfsyms import Elf, ElfError, resolve, usdt_arg_types
from ..listing import Listed, ListError, Source, type_text
from . import interval, iterators, kfunc, kprobe, perfevent, profile, rawtracepoint, tracepoint, uprobe
from .base import is_glob
from .rawtracepoint import named_args

INDENT = "    "


def _parts(parts: list, n: int) -> list:
    """n globs: the parts given (an empty one is `*`), `*` for the rest; a
    part too many joins the last (a path's colons)."""
    given = [p or "*" for p in parts]
    if len(given) > n:
        given = given[:n - 1] + [":".join(given[n - 1:])]
    return given + ["*"] * (n - len(given))


def _match(name: str, glob: str) -> bool:
    return fnmatch.fnmatchcase(name, glob)


def _tracepoints(prov, parts, src: Source, verbose: bool):
    if len(parts) == 1 and "/" in parts[0]:
        parts = parts[0].split("/", 1)          # ply's group/event
    group, event = _parts(parts, 2)
    for g, e in src.tracepoints():
        if _match(g, group) and _match(e, event):
            yield Listed(f"tracepoint:{g}:{e}",
                         tuple(INDENT + d for d in src.tracepoint_fields(g, e)) if verbose else ())


def _proto_lines(b, proto, names=None, ret=False) -> tuple:
    out = [f"{INDENT}{type_text(b, t)} {names[i] if names else n}" for i, (n, t) in enumerate(proto.members)]
    if ret and proto.type:
        out.append(f"{INDENT}{type_text(b, proto.type)} retval")
    return tuple(out)


def _kprobes(prov, parts, src: Source, verbose: bool):
    module, func = _parts(parts, 2) if len(parts) > 1 else ("*", _parts(parts, 1)[0])
    b = None
    if verbose:
        try:
            b = src.btf()
        except ListError:
            b = None        # a kprobe's arguments are typed where BTF is; without it, listed bare
    for name, mod in sorted(src.kernel_functions().items()):
        if not _match(name, func) or not _match(mod or "vmlinux", module):
            continue
        details = ()
        if b is not None and not mod:
            fid = b.find(B.FUNC, name)
            if fid is not None:
                proto = b[b[fid].type]
                if prov is kprobe.KRETPROBE:
                    # 0.27's -lv of a kretprobe: its return value only
                    details = (f"{INDENT}{type_text(b, proto.type)} retval",) if proto.type else ()
                else:
                    details = _proto_lines(b, proto, [f"arg{i}" for i in range(len(proto.members))])
        yield Listed(f"{prov.name}:{mod}:{name}" if mod else f"{prov.name}:{name}", details)


def _kfuncs(prov, parts, src: Source, verbose: bool):
    module, func = _parts(parts, 2) if len(parts) > 1 else ("*", _parts(parts, 1)[0])
    kind = "fexit" if prov is kfunc.KRETFUNC else "fentry"
    traceable = src.traceable
    btfs = [("vmlinux", src.btf())] + src.module_btfs()
    for mod, b in btfs:
        if not _match(mod, module):
            continue
        for name in b.names_of(B.FUNC):
            # what the kernel lets a trampoline attach to: its traceable functions, where it says
            if not _match(name, func) or (traceable is not None and name not in traceable):
                continue
            details = ()
            if verbose:
                proto = b[b[b.find(B.FUNC, name)].type]
                details = _proto_lines(b, proto, ret=kind == "fexit")
            yield Listed(f"{kind}:{mod}:{name}", details)


def _rawtracepoints(prov, parts, src: Source, verbose: bool):
    module, event = _parts(parts, 2) if len(parts) > 1 else ("*", _parts(parts, 1)[0])
    if not _match("vmlinux", module):
        return
    b = src.btf()
    for name in b.names_of(B.TYPEDEF):
        if not name.startswith("btf_trace_") or not _match(name[len("btf_trace_"):], event):
            continue
        event_name = name[len("btf_trace_"):]
        details = ()
        if verbose:
            args = named_args(b, event_name) or []
            details = tuple(f"{INDENT}{type_text(b, t)} {n}" for n, t in args)
        yield Listed(f"rawtracepoint:vmlinux:{event_name}", details)


def _members(b, tid: int) -> list:
    """(name, type) of a struct's members, an anonymous union by its first
    named member (the iterator contexts' __bpf_md_ptr(T *, name))."""
    out = []
    for m in b[tid].members:
        if not m.name and b[b.strip(m.type)].kind in (B.UNION, B.STRUCT):
            named = [x for x in b[b.strip(m.type)].members if x.name]
            if named:
                out.append((named[0].name, named[0].type))
        elif m.name:
            out.append((m.name, m.type))
    return out


def _iterators(prov, parts, src: Source, verbose: bool):
    obj, = _parts(parts[:1], 1)
    b = src.btf()
    for name in sorted(iterators.OBJECTS):
        tid = b.find(B.STRUCT, f"bpf_iter__{name}")
        if tid is None or not _match(name, obj):
            continue
        details = tuple(f"{INDENT}{type_text(b, t)} {n}" for n, t in _members(b, tid)
                        if n != "meta") if verbose else ()
        yield Listed(f"iter:{name}", details)


def _perfevents(prov, parts, src: Source, verbose: bool):
    event, = _parts(parts[:1], 1)
    events = perfevent.SOFTWARE_EVENTS if prov is perfevent.SOFTWARE else perfevent.HARDWARE_EVENTS
    # each alias a line of its own, as bpftrace 0.27 lists them
    names = {n for name, (alias, _, _) in events.items() for n in (name, alias) if n}
    for name in sorted(names, key=lambda n: n + ":"):
        if _match(name, event):
            yield Listed(f"{prov.name}:{name}:")


# the units bpftrace 0.27 lists a timer by (`interval:s:`): they attach to
# nothing, the line says how one is written
TIMER_UNITS = ("hz", "ms", "s", "us")


def _timers(prov, parts, src: Source, verbose: bool):
    unit, = _parts(parts[:1], 1)
    for u in TIMER_UNITS:
        if _match(u, unit):
            yield Listed(f"{prov.name}:{u}:")


def _binary(path: str, what: str) -> tuple:
    """(the binary's path, its functions or USDT probes: what, the Elf
    method). A name without '/' is found as the tracer finds it on the
    device (a library by short name, else a program on $PATH), here."""
    if is_glob(path):
        raise ListError(f"'{path}': give the binary's path, not a glob (e.g. uprobe:/bin/bash:read*)")
    found = resolve(path, arch.get(arch.host_target() or "x86_64").triplet)
    if found is None:
        raise ListError(f"'{path}': no library of that name and no program on $PATH")
    try:
        return found, getattr(Elf(found), what)()
    except ElfError as err:
        raise ListError(str(err)) from None


def _uprobes(prov, parts, src: Source, verbose: bool):
    if not parts or not parts[0]:
        raise ListError(f"{prov.name} probes are listed per binary: {prov.name}:PATH[:FUNCTION]")
    func = _parts(parts[1:], 1)[0]
    path, names = _binary(parts[0], "functions")
    for name in sorted(names):
        if _match(name, func):
            yield Listed(f"{prov.name}:{path}:{name}")


def _usdt(prov, parts, src: Source, verbose: bool):
    if not parts or not parts[0]:
        raise ListError("usdt probes are listed per binary: usdt:PATH[:PROVIDER:NAME]")
    rest = parts[1:]
    provider, name = _parts(rest, 2) if len(rest) > 1 else ("*", _parts(rest, 1)[0])
    path, probes = _binary(parts[0], "usdt_args")
    for (p, n), spec in sorted(probes.items()):
        if _match(p, provider) and _match(n, name):
            # -v: each argument's type from its size in the note (bpftrace 0.27 lists none)
            details = tuple(f"{INDENT}{t} arg{i}" for i, t in enumerate(usdt_arg_types(spec))) if verbose else ()
            yield Listed(f"usdt:{path}:{p}:{n}", details)


# provider name: (its lister, whether a list of everything includes it;
# the return probes are the entry probes' functions again, and user probes
# need a binary)
LISTERS = {
    tracepoint.PROVIDER.name: (_tracepoints, True),
    kprobe.KPROBE.name: (_kprobes, True),
    kprobe.KRETPROBE.name: (_kprobes, False),
    kfunc.KFUNC.name: (_kfuncs, True),
    kfunc.KRETFUNC.name: (_kfuncs, False),
    rawtracepoint.PROVIDER.name: (_rawtracepoints, True),
    perfevent.SOFTWARE.name: (_perfevents, True),
    perfevent.HARDWARE.name: (_perfevents, True),
    iterators.PROVIDER.name: (_iterators, True),
    interval.PROVIDER.name: (_timers, False),
    profile.PROVIDER.name: (_timers, False),
    uprobe.UPROBE.name: (_uprobes, False),
    uprobe.URETPROBE.name: (_uprobes, False),
    uprobe.USDT.name: (_usdt, False),
}

# The providers whose probes are listed per binary (uprobe:PATH:...): a glob
# of providers (`*:*`) names none, so lists none of them.
PER_BINARY = (uprobe.UPROBE.name, uprobe.URETPROBE.name, uprobe.USDT.name)



# --- a script's probe as a listing (`plyc list script.bt`, bpftrace's
# `-l script.bt`): provider name -> its resolved Target -> the lister's
# parts (globs as the script wrote them), or a line printed as it is (a
# probe that names no kernel or user object: an address, a timer)

def _module_parts(t):
    module = t.extra.get("module", "")
    return [module, t.target] if module else [t.target]


def _user_parts(t):
    if not t.target or t.target.startswith("0x"):
        return f"{t.provider.name}:{t.extra['path']}:{t.target}"
    return [t.extra["path"], t.target]


def _event_as_written(t, events: dict) -> str:
    """An event's name as the script wrote it (`faults`: 0.27 lists the
    alias), where it is one of the table's names or aliases."""
    word = t.spec.arg.split(":")[0]
    known = {n for name, (alias, _, _) in events.items() for n in (name, alias) if n}
    return word if word in known else t.target


def _timer_line(t):
    # bpftrace 0.27 lists a timer by its unit (`interval:s:`), the rate left out
    unit = t.target.lstrip("0123456789") or ("hz" if t.provider.name == "profile" else "s")
    return f"{t.provider.name}:{unit}:"


PARTS = {
    tracepoint.PROVIDER.name: lambda t: t.target.split("/", 1),
    kprobe.KPROBE.name: lambda t: f"kprobe:{t.target}" if t.target.startswith("0x") else _module_parts(t),
    kprobe.KRETPROBE.name: _module_parts,
    kfunc.KFUNC.name: _module_parts,
    kfunc.KRETFUNC.name: _module_parts,
    rawtracepoint.PROVIDER.name: lambda t: [t.target],
    iterators.PROVIDER.name: lambda t: [t.target],
    perfevent.SOFTWARE.name: lambda t: [_event_as_written(t, perfevent.SOFTWARE_EVENTS)],
    perfevent.HARDWARE.name: lambda t: [_event_as_written(t, perfevent.HARDWARE_EVENTS)],
    uprobe.UPROBE.name: _user_parts,
    uprobe.URETPROBE.name: _user_parts,
    uprobe.USDT.name: lambda t: [t.extra["path"], t.extra["usdt_provider"] or "*", t.extra["usdt_name"]],
    interval.PROVIDER.name: _timer_line,
    profile.PROVIDER.name: _timer_line,
}


# --- whether the build machine has a probe's target (plyc check/build's
# warnings when the tracer is built for this machine, plyc/presence.py):
# provider name -> (Target, Source) -> why not, or None (it has it, or
# nothing here can say)

def _with(why: str, *notes: str) -> str:
    """why, and the notes that say something, in parentheses."""
    said = "; ".join(n for n in notes if n)
    return f"{why} ({said})" if said else why


def _tracepoint_missing(t, src: Source):
    group, event = t.target.split("/", 1)
    # tracefs not to be read here (not root: it is 0700): its TracefsError
    # says nothing here can tell, rather than that every event is missing
    tracefs.root()
    try:
        if tracefs.matching_events(group, event) if t.glob else tracefs.event_fields(group, event) is not None:
            return None
    except tracefs.TracefsError:
        pass
    if t.glob:
        return f"no tracepoint on this machine matches {group}:{event}"
    # the event in another group (tracepoint:syscalls:sched_switch): say where
    try:
        others = [f"{g}:{e}" for g, e in src.tracepoints() if e == event and g != group]
    except (ListError, tracefs.TracefsError, OSError):
        others = []
    try:
        near = "" if others else did_you_mean(event, tracefs.matching_events(group, "*"))
    except tracefs.TracefsError:
        near = ""
    return _with(f"this machine has no tracepoint {group}:{event}",
                 f"it has {', '.join(others[:3])}" if others else "", near)


def _kprobe_missing(t, src: Source):
    if t.target.startswith("0x"):
        return None
    module = t.extra.get("module", "")
    if t.glob:
        found = any(_match(n, t.target) and (not module or m == module) for n, m in src.kernel_functions().items())
    else:
        found = src.has_kernel_function(t.target, module)
    if found:
        return None
    where = f"module {module}" if module else "this machine's kernel"
    if t.glob:
        return f"no function in {where} matches {t.target}"
    names = (n for n, m in src.kernel_functions().items() if (m or "") == module)
    return _with(f"{where} has no function {t.target}", did_you_mean(t.target, names))


def _kfunc_missing(t, src: Source):
    if t.extra.get("module"):
        return None         # a module's functions: in its BTF, typed (and refused) by the build itself
    names = src.btf().names_of(B.FUNC)
    if any(_match(n, t.target) for n in names) if t.glob else src.btf().find(B.FUNC, t.target) is not None:
        return None
    if t.glob:
        return f"no function in this machine's kernel BTF matches {t.target}"
    return _with(f"this machine's kernel BTF has no function {t.target}", did_you_mean(t.target, names))


def _rawtracepoint_missing(t, src: Source):
    if src.btf().find(B.TYPEDEF, f"btf_trace_{t.target}") is not None:
        return None
    events = (n[len("btf_trace_"):] for n in src.btf().names_of(B.TYPEDEF) if n.startswith("btf_trace_"))
    return _with(f"this machine's kernel has no tracepoint {t.target}", f"no btf_trace_{t.target} in its BTF",
                 did_you_mean(t.target, events))


def _binary_missing(t, src: Source):
    path = t.extra["path"]
    if "/" not in path:
        return None         # a library's short name: found on the device
    try:
        elf = Elf(path)
        found = elf.usdt() if t.provider is uprobe.USDT else elf.functions()
    except ElfError as err:
        return f"{err} on this machine"
    if t.provider is uprobe.USDT:
        want = (t.extra["usdt_provider"] or "*", t.extra["usdt_name"])
        if any(_match(p, want[0]) and n == want[1] for p, n in found):
            return None
        return f"{path} has no USDT probe {':'.join(x for x in (t.extra['usdt_provider'], want[1]) if x)}"
    if t.target.startswith("0x") or not t.target:
        return None
    funcs = found
    name = t.target.split("@")[0]
    if any(_match(f, name) for f in funcs) if t.glob else name in funcs:
        return None
    if t.glob:
        return f"no function in {path} matches {t.target}"
    return _with(f"{path} has no function {name}", did_you_mean(name, funcs))


MISSING = {
    tracepoint.PROVIDER.name: _tracepoint_missing,
    kprobe.KPROBE.name: _kprobe_missing,
    kprobe.KRETPROBE.name: _kprobe_missing,
    kfunc.KFUNC.name: _kfunc_missing,
    kfunc.KRETFUNC.name: _kfunc_missing,
    rawtracepoint.PROVIDER.name: _rawtracepoint_missing,
    uprobe.UPROBE.name: _binary_missing,
    uprobe.URETPROBE.name: _binary_missing,
    uprobe.USDT.name: _binary_missing,
}
