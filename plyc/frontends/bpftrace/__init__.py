"""bpftrace's language as a plyc front end: text -> bpftrace AST (parser.py,
lexer.py, probes.py, ast.py) -> core IR (lower.py: bpftrace's rules and
types; specs.py: its probe specs in plyc's providers' spelling).

The parser and the lowering are imported when first used: `plyc` lists
the front ends for its command line, and a cached `plyc run` or a ply
script never needs this one's modules (docs/performance.md)."""
from __future__ import annotations

import sys

from ..base import FrontEnd, Option, Settings

__all__ = ["FRONTEND", "parse"]

UNSAFE = Option("unsafe", "allow bpftrace's unsafe functions (system, signal, signal_thread, override, write_user) in the tracer")
# Which bpftrace's output the tracer prints (docs/bpftrace.md, "Against
# bpftrace 0.27"): today's by default, Debian 12's for those comparing with it.
OUTPUT = Option("bpftrace-output", "print as this bpftrace version does", choices=("0.27", "0.17"))
STYLES = {"0.27": "bpftrace", "0.17": "bpftrace017"}
# max_strlen's default: 0.27's 1024 (a string holds up to 1023 bytes and its
# NUL), 0.17's 64 (its BPFTRACE_STRLEN).
STRSIZES = {"0.27": 1024, "0.17": 64}


def parse(source: str, filename: str = "<script>"):
    from .parser import parse as parse_text
    return parse_text(source, filename)


def _lower(program, s: Settings):
    from .config import from_environment
    from .lower import lower
    # bpftrace's environment variables, read once a build: those it uses
    # are config items (config.py), the others said once
    env_items, warnings = from_environment(s.env)
    for warning in warnings:
        print(f"plyc: warning: {warning}", file=sys.stderr)
    # Strings are the version's max_strlen (0.27: 1024, 0.17: 64) or the
    # script's config block's, not --strsize: as bpftrace.
    version = s.options.get("bpftrace-output") or OUTPUT.choices[0]
    prog = lower(program, s.btf, s.target, strsize=STRSIZES[version], build_env=s.env,
                 unsafe=s.options.get("unsafe", False), include_dirs=s.include_dirs,
                 include_files=s.include_files, version=version, env_items=env_items)
    # the tracer prints as that bpftrace does (runtime-c/output/bpftrace.c):
    # the style reaches the runtime's output selection (output/select.c)
    prog.style = STYLES[version]
    return prog


FRONTEND = FrontEnd("bpftrace", (".bt",), parse, _lower, options=(UNSAFE, OUTPUT), c_headers=True)
