"""Questions asked of a bpftrace tree and one way to remake it: every node
in it (walk), a literal expression's folded value (literal, const_value), a
node's copy with its children remade (rebuilt)."""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Optional

from . import ast as A
from . import literals


def walk(node):
    """Every bpftrace node in the tree, depth first."""
    yield node
    if isinstance(node, list):
        for x in node:
            yield from walk(x)
        return
    if not isinstance(node, A.Node):
        return
    for name in node.__dataclass_fields__:
        value = getattr(node, name)
        if isinstance(value, (A.Node, list)):
            yield from walk(value)


def rebuilt(node: A.Node, fn, **changes) -> A.Node:
    """A copy of node, each child (a node or a list of them) made by fn,
    and changes (other fields) made too."""
    kids = {f.name: fn(getattr(node, f.name)) for f in fields(node)
            if isinstance(getattr(node, f.name), (A.Node, list))}
    return replace(node, **kids, **changes)


def literal(e) -> Optional[literals.Lit]:
    """e folded as bpftrace 0.27 folds literal expressions (literals.py), or
    None: no literal expression, or one 0.27 refuses (the lowering says
    why, where it is)."""
    try:
        return literals.fold(e)
    except literals.Refused:
        return None


def const_value(e) -> Optional[int]:
    """The value of an integer literal expression (not a bool's), or None."""
    lit = literal(e)
    return None if lit is None or lit.is_bool else lit.value
