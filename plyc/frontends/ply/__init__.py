"""The ply front end: text -> ply AST (parser.py, grammar.lark) -> core IR
(lower.py: ply's rules and types).

The parser (lark) and the lowering are imported when first used, as the
bpftrace front end's (docs/performance.md)."""
from __future__ import annotations

from ..base import FrontEnd, Settings

__all__ = ["FRONTEND", "parse"]


def parse(source: str, filename: str):
    from .parser import parse as parse_text
    return parse_text(source, filename)


def _lower(program, s: Settings):
    from .lower import lower
    prog = lower(program, s.env, s.strsize, s.btf, s.target)
    prog.style = "ply"          # the tracer prints as ply does
    return prog


FRONTEND = FrontEnd("ply", (".ply",), parse, _lower)
