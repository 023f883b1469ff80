"""A probe whose body ends in an `if` without `else` (a predicate, mostly)
returns as soon as the condition fails instead: `if (!c) return; body`,
as libbpf-tools write it. The code after it is then the probe's own
block, so the lookups pass can serve it from the condition's lookup."""
from __future__ import annotations

from .. import nodes as ir
from ... import types as T


# A comparison's negation (integers and strings: no NaN to mind).
NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def negated(c: ir.Expr) -> ir.Expr:
    """The condition that holds where c fails."""
    if isinstance(c, ir.Unary) and c.op == "!":
        return c.operand
    if isinstance(c, ir.Binary) and c.op in NEGATED:
        return ir.Binary(NEGATED[c.op], c.left, c.right, type=c.type, span=c.span)
    return ir.Unary("!", c, type=T.S64, span=c.span)


def flattened(body: ir.Block) -> ir.Block:
    stmts = list(body.stmts)
    while stmts and isinstance(stmts[-1], ir.If) and stmts[-1].other is None \
            and not isinstance(stmts[-1].then, ir.Return):
        s = stmts.pop()
        stmts.append(ir.If(negated(s.cond), ir.Return(span=s.span), span=s.span))
        stmts += s.then.stmts if isinstance(s.then, ir.Block) else [s.then]
    return ir.Block(stmts, span=body.span)


def run(program: ir.Program) -> None:
    for p in program.probes:
        p.body = flattened(p.body)
