"""Constant folding: plyc's one evaluator of constant integer expressions.

The IR's (fold, value) computes as the generated C does: 64-bit two's
complement, the result read in the expression's type; codegen prints a
folded value instead of the expression, and the constant checks
(plyc/ir/constants.py) refuse what C leaves undefined. The front ends ask
it too (evaluate) of their own trees, for the numbers a script writes where
a constant must be (a tuple's index, an array's size, a loop's bounds),
with their language's Rules: which operators make a constant, and whether
the value is exact or wraps to a width. A shift by a count outside 0 to 63
is no constant under any rules (C leaves it undefined); / and % are folded
by none (their zero divisor and their signs are each language's:
bpftrace/division.py, bpftrace/signs.py). bpftrace 0.27's literal
expressions are folded by its own rules, not these: bpftrace/literals.py."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

from . import nodes as ir

def _cdiv(a: int, b: int) -> int:
    """C's `/`: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "/": _cdiv, "%": lambda a, b: a - b * _cdiv(a, b),
          "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
          "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b}
UNARY = {"-": lambda a: -a, "+": lambda a: a, "~": lambda a: ~a, "!": lambda a: int(not a)}


@dataclass(frozen=True)
class Rules:
    """How a language computes a constant expression."""
    binary: frozenset               # the operators that fold (others: not a constant)
    unary: frozenset
    width: Optional[int] = None     # bits the value wraps to; None: exact (Python's integers)
    signed: bool = True             # a wrapped value (and a >>'s left side) read as signed


# The generated C's, for the IR: 64-bit, read in the expression's type.
C_OPS = frozenset("+ - * & | ^ <<".split())
C_SIGNED = Rules(C_OPS, frozenset("-"), 64, True)
C_UNSIGNED = Rules(C_OPS, frozenset("-"), 64, False)
# Sizes and counts written in a ply script or an argdist specifier: numbers
# and + - * of them, exact.
COUNTS = Rules(frozenset("+-*"), frozenset("-"))


def wrap(v: int, bits: int, signed: bool) -> int:
    """v in a C integer type of `bits` bits and that sign (two's complement)."""
    v %= 1 << bits
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def read(v: int, rules: Rules) -> int:
    """v as the rules hold it: wrapped to their width, in their sign."""
    return v if rules.width is None else wrap(v, rules.width, rules.signed)


def binary(op: str, a: int, b: int, rules: Rules) -> Optional[int]:
    """`a op b` under the rules, or None when it is no constant."""
    if op not in rules.binary or op in ("<<", ">>") and not 0 <= b < 64 or op in "/%" and b == 0:
        return None
    return read(BINARY[op](read(a, rules), read(b, rules)), rules)


def unary(op: str, a: int, rules: Rules) -> Optional[int]:
    if op not in rules.unary:
        return None
    return read(UNARY[op](read(a, rules)), rules)


RulesOf = Union[Rules, Callable]


def evaluate(e, rules: RulesOf, leaf: Callable, unary_node: type, binary_node: type) -> Optional[int]:
    """The value of a constant expression of any tree (the IR's, a front
    end's syntax tree) whose operators are nodes of unary_node (.op,
    .operand) and binary_node (.op, .left, .right); leaf(e) is a number
    node's value, None for another leaf. `rules` may be a function of the
    operator's node (None: that one is no constant)."""
    v = leaf(e)
    if v is not None:
        return v
    if not isinstance(e, (unary_node, binary_node)):
        return None
    r = rules(e) if callable(rules) else rules
    if r is None:
        return None
    if isinstance(e, unary_node):
        if e.op not in r.unary:
            return None
        a = evaluate(e.operand, rules, leaf, unary_node, binary_node)
        return None if a is None else unary(e.op, a, r)
    if e.op not in r.binary:
        return None
    a = evaluate(e.left, rules, leaf, unary_node, binary_node)
    b = evaluate(e.right, rules, leaf, unary_node, binary_node) if a is not None else None
    return None if b is None else binary(e.op, a, b, r)


def _ir_rules(e) -> Optional[Rules]:
    if isinstance(e, ir.Binary) and e.left.type.is_bytes:
        return None
    return C_SIGNED if e.type.signed else C_UNSIGNED


def _ir_leaf(e) -> Optional[int]:
    return e.value if isinstance(e, ir.IntConst) else None


def fold(e):
    """The value of a constant integer expression (an operator's), or None."""
    if not isinstance(e, (ir.Unary, ir.Binary)):
        return None
    return evaluate(e, _ir_rules, _ir_leaf, ir.Unary, ir.Binary)


def value(e):
    """e's value if it is a constant integer expression, else None."""
    if isinstance(e, ir.IntConst):
        return e.value
    return fold(e)
