"""Questions asked of a bpftrace tree and one way to remake it: every node
in it (walk), a constant expression's value (const_value), a node's copy
with its children remade (rebuilt)."""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Optional

from ...ir import fold
from . import ast as A


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


def _number(e) -> Optional[int]:
    return e.value if isinstance(e, A.Int) else None


def const_value(e) -> Optional[int]:
    """The value of a constant integer expression, or None (plyc/ir/fold.py
    computes it, by bpftrace's rules)."""
    return fold.evaluate(e, fold.BPFTRACE, _number, A.Unary, A.Binary)
