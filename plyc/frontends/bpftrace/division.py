"""Division and modulo by a run-time zero, as current bpftrace computes
them: the result is 1 (bpftrace also warns at run time; plyc does not).
BPF's own instructions give 0 for `x / 0` and x for `x % 0` (bpftrace 0.17's
answers), plyc's signed helpers 0 for both. A constant zero divisor is an
error where it is written (plyc/ir/constants.py)."""
from __future__ import annotations

from ... import builtins as B
from ...ir import nodes as ir
from ...ir.fold import value


def _emit(g, call: ir.Call) -> str:
    a, b = (g.scalar(x) for x in call.args)
    ct = call.type.scalar_ctype()
    t = g.tmp("div")
    if call.type.signed:
        op = f"plyc_sdiv({a}, {t})" if call.func.name == "/" else f"plyc_smod({a}, {t})"
    else:
        op = f"{g.operand(ct, a)} {call.func.name} {t}"
    # A statement expression: the divisor read once, where the operation is.
    return f"({ct})({{ {ct} {t} = {g.operand(ct, b)}; {t} ? {op} : 1; }})"


DIV = B.Func("/", (2, 2), None, _emit, "division, 1 when the divisor is 0 (bpftrace)")
MOD = B.Func("%", (2, 2), None, _emit, "modulo, 1 when the divisor is 0 (bpftrace)")


def guarded(node: ir.Binary) -> ir.Expr:
    """node (a typed / or %) as bpftrace computes it, where its divisor
    may be zero at run time."""
    if node.op not in ("/", "%") or value(node.right) is not None:
        return node
    func = DIV if node.op == "/" else MOD
    return ir.Call(func, [node.left, node.right], type=node.type, span=node.span)
