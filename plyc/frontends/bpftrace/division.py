"""Division and modulo by a run-time zero, as current bpftrace computes
them: the result is 1 (bpftrace also warns at run time; plyc does not).
BPF's own instructions give 0 for `x / 0` and x for `x % 0` (bpftrace 0.17's
answers), plyc's signed helpers 0 for both. A constant zero divisor is an
error where it is written (plyc/ir/constants.py)."""
from __future__ import annotations

from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...ir.fold import value


def guarded(node: ir.Binary) -> ir.Expr:
    """node (a typed / or %) as bpftrace computes it, where its divisor
    may be zero at run time."""
    if node.op not in ("/", "%") or value(node.right) is not None:
        return node
    func = I.DIV if node.op == "/" else I.MOD
    return ir.Call(func, [node.left, node.right], type=node.type, span=node.span)
