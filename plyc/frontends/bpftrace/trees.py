"""Questions asked of a bpftrace tree and one way to remake it: every node
in it (walk), a constant expression's value (const_value), a node's copy
with its children remade (rebuilt)."""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Optional

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


def const_value(e) -> Optional[int]:
    """The value of a constant integer expression, or None."""
    if isinstance(e, A.Int):
        return e.value
    if isinstance(e, A.Unary) and e.op in ("-", "~", "!"):
        v = const_value(e.operand)
        return None if v is None else {"-": -v, "~": ~v, "!": int(not v)}[e.op]
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "<<", ">>", "&", "|", "^"):
        a, b = const_value(e.left), const_value(e.right)
        if a is None or b is None or (e.op in ("<<", ">>") and not 0 <= b < 64):
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "<<": a << b, ">>": a >> b,
                "&": a & b, "|": a | b, "^": a ^ b}[e.op]
    return None
