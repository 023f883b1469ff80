"""`plyc list [PATTERN]`: the probes this machine (or a kernel's BTF, --btf)
has, as `bpftrace -l` lists them, in its pattern syntax (docs/usage.md,
"Listing probes"). Each provider lists its own (plyc/providers/listing.py)."""
from __future__ import annotations

import fnmatch
import sys


def add(sub):
    p = sub.add_parser("list", help="list probes, as bpftrace -l does (e.g. 'tracepoint:syscalls:*open*')",
                       description="List this machine's probes (or a kernel BTF's) as `bpftrace -l` does; "
                       "-v lists each tracepoint's fields and function's arguments, as `bpftrace -lv`.")
    p.add_argument("pattern", nargs="?", default="",
                   help="a probe or glob in bpftrace's syntax (PROVIDER:...); a word without ':' "
                   "is matched against every probe's last parts")
    p.add_argument("--details", "--lv", dest="details", action="store_true",
                   help="also each tracepoint's fields and each function's arguments (bpftrace -lv); "
                   "plyc's -v before `list` is the same")
    p.add_argument("--btf", metavar="FILE", help="list a kernel's functions, raw tracepoints and "
                   "iterators from its BTF instead of this machine's")
    p.set_defaults(func=run)


def _providers(token: str) -> list:
    """The listable providers a pattern's first part names: a name, an
    alias (bpftrace's short names too: f, rt, U, ...) or a glob of them."""
    from .. import providers
    from ..frontends.bpftrace.probes import BY_NAME
    from ..listing import ListError
    from ..providers.base import is_glob
    from ..providers.listing import LISTERS
    if is_glob(token):
        names = [p for p in providers.REGISTRY if p.name in LISTERS and
                 any(fnmatch.fnmatchcase(n, token) for n in (p.name, *p.aliases))]
        return names
    probe_type = BY_NAME.get(token)
    prov = providers.lookup(probe_type.name if probe_type else token)
    if prov is None:
        raise ListError(f"unknown probe type '{token}'")
    if prov.name not in LISTERS:
        raise ListError(f"{prov.name} probes are not listed: they attach to no kernel or user object")
    return [prov]


def listing(pattern: str, src, verbose: bool):
    """The Listed lines a pattern selects, providers in the table's order."""
    # imported here, not above: every plyc command imports this module for add()
    from .. import providers
    from ..frontends.bpftrace.probes import split_spec
    from ..listing import ListError
    from ..providers.base import is_glob
    from ..providers.listing import LISTERS
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


def run(args) -> int:
    from ..listing import ListError, Source
    pattern = args.pattern
    src = Source(args.btf)
    verbose = args.details or getattr(args, "verbose", False)
    out = sys.stdout
    try:
        # bpftrace's probe list, `-l 'kprobe:f,tracepoint:g:h'`: each in turn
        for one in (pattern.split(",") if pattern else [pattern]):
            for x in listing(one.strip(), src, verbose):
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
