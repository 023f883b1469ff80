"""The ply front end: text -> ply AST (parser.py, grammar.lark) -> core IR
(lower.py: ply's rules and types)."""
from __future__ import annotations

from ..base import FrontEnd, Settings
from .lower import lower
from .parser import parse

__all__ = ["FRONTEND", "lower", "parse"]


def _lower(program, s: Settings):
    prog = lower(program, s.env, s.strsize, s.btf, s.target)
    prog.style = "ply"          # the tracer prints as ply does
    return prog


FRONTEND = FrontEnd("ply", (".ply",), parse, _lower)
