"""`plyc list [PATTERN]`: the probes this machine (or a kernel's BTF, --btf)
has, as `bpftrace -l` lists them, in its pattern syntax (docs/usage.md,
"Listing probes"). Each provider lists its own (plyc/providers/listing.py)."""
from __future__ import annotations

import fnmatch
import sys


def driver_languages() -> tuple:
    from .. import driver
    return driver.LANGUAGES


def add(sub):
    p = sub.add_parser("list", help="list probes, as bpftrace -l does (e.g. 'tracepoint:syscalls:*open*')",
                       description="List this machine's probes (or a kernel BTF's) as `bpftrace -l` does; "
                       "-v lists each tracepoint's fields and function's arguments, as `bpftrace -lv`.")
    p.add_argument("pattern", nargs="?", default="",
                   help="a probe or glob in bpftrace's syntax (PROVIDER:...); a word without ':' "
                   "is matched against every probe's last parts; 'struct NAME' (union, enum): the "
                   "kernel's types, -v their C definitions; a script file: the probes it attaches")
    p.add_argument("--details", "--lv", dest="details", action="store_true",
                   help="also each tracepoint's fields and each function's arguments (bpftrace -lv); "
                   "plyc's -v before `list` is the same")
    p.add_argument("--btf", metavar="FILE", help="list a kernel's functions, raw tracepoints, "
                   "iterators and types from its BTF instead of this machine's")
    p.add_argument("-e", metavar="TEXT", help="list the probes this program attaches, globs expanded "
                   "(bpftrace -l -e); a script file given as the pattern is listed so too")
    p.add_argument("--lang", choices=driver_languages(),
                   help="the script's language (default: bpftrace for a .bt file, else ply)")
    p.set_defaults(func=run)


def _providers(token: str) -> list:
    """The listable providers a pattern's first part names: a name, an
    alias (bpftrace's short names too: f, rt, U, ...) or a glob of them."""
    from .. import providers
    from ..frontends.bpftrace.probes import BY_NAME
    from ..listing import ListError
    from ..providers.base import is_glob
    from ..providers.listing import LISTERS, PER_BINARY
    if is_glob(token):
        names = [p for p in providers.REGISTRY if p.name in LISTERS and
                 any(fnmatch.fnmatchcase(n, token) for n in (p.name, *p.aliases))]
        # a glob names no binary: user probes are listed by one that does (uprobe:PATH)
        kept = [p for p in names if p.name not in PER_BINARY]
        if names and not kept:
            raise ListError(f"{', '.join(p.name for p in names)} probes are listed per binary: "
                            f"{names[0].name}:PATH[:...]")
        return kept
    probe_type = BY_NAME.get(token)
    prov = providers.lookup(probe_type.name if probe_type else token)
    if prov is None:
        raise ListError(f"unknown probe type '{token}'")
    if prov.name not in LISTERS:
        raise ListError(f"{prov.name} probes are not listed: they attach to no kernel or user object")
    return [prov]


def types(pattern: str, src, verbose: bool):
    """`struct task*`, `union *`, `enum cpu_usage_stat`: the kernel's (and
    its loaded modules') named types of the kind whose name matches, as
    bpftrace 0.27 lists them; -v: each one's C definition, `vmlinux: `
    (or its module) before it and an empty line after it."""
    from ..ctext import Printer, type_names
    from ..listing import Listed
    glob = " ".join(pattern.split())        # bpftrace's normalize_whitespace
    btfs = [("vmlinux", src.btf())] + src.module_btfs()
    found: dict = {}                        # `KIND NAME` -> (its BTF's name, its printer, id), the first
    for mod, b in btfs:
        p = Printer(b)
        for full, tid in type_names(b, glob, p if verbose else None):
            found.setdefault(full, (mod, p, tid))
    from ..btf import BTFError
    from ..listing import ListError
    for full in sorted(found, key=str.encode):
        mod, p, tid = found[full]
        if not verbose:
            yield Listed(full)
            continue
        try:
            text = p.definition(tid)
        except BTFError as err:
            raise ListError(str(err)) from None
        yield Listed(f"{mod}: {text};", ("",))


def listing(pattern: str, src, verbose: bool):
    """The Listed lines a pattern selects, providers in the table's order."""
    # imported here, not above: every plyc command imports this module for add()
    from .. import providers
    from ..frontends.bpftrace.probes import split_spec
    from ..ctext import is_type_pattern
    from ..listing import ListError
    from ..providers.base import is_glob
    from ..providers.listing import LISTERS
    if is_type_pattern(pattern.strip()):
        yield from types(pattern.strip(), src, verbose)
        return
    if ":" not in pattern:
        # bpftrace's `-l '*sleep*'`: a word is matched against every probe, past its provider
        glob = "*:" + (pattern or "*")
        for prov in providers.REGISTRY:
            lister = LISTERS.get(prov.name)
            if not lister or not lister[1]:
                continue
            try:
                yield from (x for x in lister[0](prov, [], src, verbose) if fnmatch.fnmatchcase(x.line, glob))
            except ListError as err:
                # one kind this machine can't list (no BTF, no tracefs): the others still are
                src.notes.append(f"{prov.name} probes not listed: {err}")
        return
    first, *parts = split_spec(pattern)
    for prov in _providers(first):
        yield from LISTERS[prov.name][0](prov, parts, src, verbose)


def program(args, src, verbose: bool):
    """`plyc list script.bt`, `plyc list -e 'PROGRAM'` (bpftrace's `-l
    script.bt`): each probe the script attaches, in its order, globs
    expanded on this machine as `plyc list PATTERN` expands them (the front
    end resolves the probes as `plyc check` does); BEGIN, END and the other
    probes of no kernel or user object are not listed, as 0.27 lists them."""
    from .. import driver
    from ..listing import Listed
    from ..providers.listing import LISTERS, PARTS
    from .common import read_script
    source, filename = read_script(args)
    prog = driver.lower(source, filename, driver.Options(btf=args.btf, lang=args.lang))
    for p in prog.probes:
        parts = PARTS.get(p.provider.name)
        if parts is None:
            continue
        parts = parts(p.target)
        if isinstance(parts, str):
            yield Listed(parts)
            continue
        found = False
        for x in LISTERS[p.provider.name][0](p.provider, parts, src, verbose):
            found = True
            yield x
        if not found:
            src.notes.append(f"{filename}:{p.spec.span.line}:{p.spec.span.col}: "
                             f"{p.spec.provider}:{p.spec.arg} matches nothing on this machine")


def is_script(pattern: str) -> bool:
    """A pattern that is a file: the script whose probes are listed
    (`plyc list trace.bt`; a probe pattern is never a file's name)."""
    import os
    return bool(pattern) and ":" not in pattern.split("/")[0] and os.path.isfile(pattern)


def run(args) -> int:
    from ..listing import ListError, Source
    pattern = args.pattern
    src = Source(args.btf)
    verbose = args.details or getattr(args, "verbose", False)
    out = sys.stdout
    if args.e is not None or is_script(pattern):
        args.script = pattern
        patterns, lister = [None], lambda _, src, verbose: program(args, src, verbose)
    elif pattern.endswith((".bt", ".ply")) and ":" not in pattern:
        print(f"plyc: error: cannot read {pattern}: no such script", file=sys.stderr)
        return 1
    else:
        # bpftrace's probe list, `-l 'kprobe:f,tracepoint:g:h'`: each in turn
        patterns = [one.strip() for one in (pattern.split(",") if pattern else [pattern])]
        lister = listing
    try:
        for one in patterns:
            for x in lister(one, src, verbose):
                out.write(x.line + "\n")
                for d in x.details:
                    out.write(d + "\n")
    except ListError as err:
        out.flush()
        print(f"plyc: error: {err}", file=sys.stderr)
        return 1
    finally:
        for note in dict.fromkeys(src.notes):
            print(f"plyc: note: {note}", file=sys.stderr)
    return 0
