"""Constant folding of integer expressions, as the generated C computes
them: 64-bit two's complement, the result read in the expression's type.
Codegen prints a folded value instead of the expression; the constant
checks (plyc/ir/constants.py) refuse what C leaves undefined."""
from __future__ import annotations

from . import nodes as ir

# Operators folded when both operands are constants, as unsigned 64-bit
# arithmetic (the result is then read in the expression's type).
FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
        "<<": lambda a, b: a << b if b < 64 else None}


def fold(e):
    """The value of a constant integer expression, or None."""
    if isinstance(e, ir.Binary) and e.op in FOLD and not e.left.type.is_bytes:
        a, b = fold(e.left), fold(e.right)
        if isinstance(e.left, ir.IntConst):
            a = e.left.value
        if isinstance(e.right, ir.IntConst):
            b = e.right.value
        if a is None or b is None or not (0 <= b < 64 or e.op != "<<"):
            return None
        v = FOLD[e.op](a % (1 << 64), b % (1 << 64))
        if v is None:
            return None
        v %= 1 << 64
        return v - (1 << 64) if e.type.signed and v >= 1 << 63 else v
    if isinstance(e, ir.Unary) and e.op == "-":
        a = e.operand.value if isinstance(e.operand, ir.IntConst) else fold(e.operand)
        if a is None:
            return None
        v = (-a) % (1 << 64)
        return v - (1 << 64) if e.type.signed and v >= 1 << 63 else v
    return None



def value(e):
    """e's value if it is a constant integer expression, else None."""
    if isinstance(e, ir.IntConst):
        return e.value
    return fold(e)
