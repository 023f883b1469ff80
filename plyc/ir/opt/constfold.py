"""Constant folding as a pass: an integer expression whose value is known
now (plyc/ir/fold.py, which computes it as the generated C would) becomes
an IntConst of its type, so the code generator prints a number."""
from __future__ import annotations

from .. import nodes as ir
from ..fold import fold
from . import rewrite


def folded(e: ir.Expr) -> ir.Expr:
    v = fold(e)
    return e if v is None else ir.IntConst(v, type=e.type, span=e.span)


def run(program: ir.Program) -> None:
    for p in program.probes:
        rewrite.all_exprs(p.body, folded)
