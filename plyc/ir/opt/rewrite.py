"""Rewriting the expressions of IR statements in place, innermost first."""
from __future__ import annotations

from typing import Callable

from .. import nodes as ir


def expr(e: ir.Expr, fn: Callable) -> ir.Expr:
    """e with fn applied to each of its subexpressions, then to itself
    (fn returns the node to put in its place)."""
    _fields(e, fn)
    return fn(e)


def own_exprs(s: ir.Stmt, fn: Callable) -> None:
    """Rewrite the expressions of s itself (not of the statements in it)."""
    _fields(s, fn)


def sub_stmts(s: ir.Stmt) -> list:
    """The statements directly inside s."""
    return [v for v in ir.children(s) if isinstance(v, ir.Stmt)]


def all_exprs(s: ir.Stmt, fn: Callable) -> None:
    """Rewrite every expression in s and in the statements inside it."""
    own_exprs(s, fn)
    for sub in sub_stmts(s):
        all_exprs(sub, fn)


def _fields(node: ir.Node, fn: Callable) -> None:
    """Rewrite the expressions node holds directly (alone or in a list)."""
    for name in node.__dataclass_fields__:
        value = getattr(node, name)
        if isinstance(value, ir.Expr):
            setattr(node, name, expr(value, fn))
        elif isinstance(value, list) and any(isinstance(v, ir.Expr) for v in value):
            setattr(node, name, [expr(v, fn) if isinstance(v, ir.Expr) else v for v in value])
