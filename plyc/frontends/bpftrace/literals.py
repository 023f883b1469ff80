"""bpftrace 0.27's folding of literal expressions, before anything is typed:
an expression whose operands are integer literals, bool literals or
expressions of them becomes one literal, computed with 0.27's own rules,
which are neither C's nor plyc's IR's (plyc/ir/fold.py).

0.27 holds an integer literal as a number of no sign up to 2^64 - 1 or a
negative int64, never wrapping: `9223372036854775807 + 1` is 2^63 (a uint64),
`0 - 1` is -1, `-1 * -1` is 1, and a result outside that range is an error
where the operator is ("unable to fold literals due to overflow or
underflow"): `~1 + 3`, `18446744073709551615 + 1`, `0 - 9223372036854775809`,
`4294967296 * 4294967296`, a division by 0, a shift by a count outside 0 to
63. Two literals of no sign compute unsigned (`~1 / 2`), a negative one
beside one of no sign signed, which must then be at most INT64_MAX, else it
is an error too (`18446744073709551615 > -1`, `-1 & ~0`: 0.27 holds both in
one C type first). `/` and `%` truncate as C's; `>>` of a negative one is
arithmetic (`-8 >> 1` is -4); `<<` drops the bits shifted out (`3 << 63` is
2^63, `-1 << 63` INT64_MIN). `~` of a literal is of no sign (`~1` is
18446744073709551614, `~-5` 4); `-` of one beyond 2^63 is "negative value
will underflow". A comparison, `!`, `&&` and `||` give a bool (`1 < 2`,
`!5`); two bools fold under 0.27's own rules for them (`true + true` is
true, `true - true` false, `true << false` false), a bool with an integer
only through `&&` and `||`; `c ? a : b` of three literals is its arm. A
cast is no literal (`(uint8)300 + 1` is 45, computed).

Where 0.27's folder computes through C++'s undefined behaviour and prints a
number that is not the result, plyc refuses with the same error rather than
print a wrong number: a product of mixed signs beyond INT64_MIN
(`-3074457345618258603 * 3`: 0.27 prints 9223372036854775807), a difference
with INT64_MIN on the right (`1 - -9223372036854775808`, `0 -
-9223372036854775808`: 0.27 wraps to a negative number), and `INT64_MIN / -1`
and `INT64_MIN % -1` (0.27 dies of SIGFPE)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import ast as A

FLOW = "unable to fold literals due to overflow or underflow"
UNDERFLOW = "negative value will underflow"

INT64_MIN, INT64_MAX, UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
           "&&": lambda a, b: bool(a) and bool(b), "||": lambda a, b: bool(a) or bool(b)}
ARITH = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
# Two bools, by 0.27's rules for them: arithmetic gives a bool too.
BOOLS = {"+": lambda a, b: a or b, "-": lambda a, b: a != b, "*": lambda a, b: a and b,
         "/": lambda a, b: a and b, "%": lambda a, b: False, "&": lambda a, b: a & b,
         "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a < b,
         ">>": lambda a, b: a > b}


@dataclass(frozen=True)
class Lit:
    """A literal as 0.27 holds it: an integer from INT64_MIN to UINT64_MAX
    (one that is not negative has no sign), or a bool (0 or 1)."""
    value: int
    is_bool: bool = False


class Refused(Exception):
    """0.27 refuses the literal expression at span, in its words."""

    def __init__(self, message: str, span):
        super().__init__(message)
        self.message, self.span = message, span


def bool_word(e: A.Ident) -> Optional[Lit]:
    """`true` and `false` (a script's own constant of that name aside: the
    caller knows)."""
    return Lit(int(e.name == "true"), True) if e.name in ("true", "false") else None


def fold(e, word: Callable = bool_word) -> Optional[Lit]:
    """e folded as 0.27 folds it: a Lit, None where it is no literal
    expression; Refused where 0.27 refuses it. word(ident) is a name's
    literal (true and false), or None."""
    if isinstance(e, A.Int):
        return Lit(e.value) if INT64_MIN <= e.value <= UINT64_MAX else None
    if isinstance(e, A.Ident):
        return word(e)
    if isinstance(e, A.Unary) and e.op in ("-", "~", "!"):
        x = fold(e.operand, word)
        return None if x is None else _unary(e, x)
    if isinstance(e, A.Binary) and (e.op in ARITH or e.op in COMPARE):
        a, b = fold(e.left, word), fold(e.right, word)     # both, as 0.27 visits both
        return None if a is None or b is None else _binary(e, a, b)
    if isinstance(e, A.Ternary):
        c, t, o = fold(e.cond, word), fold(e.then, word), fold(e.other, word)
        if c is None or t is None or o is None:
            return None
        return t if c.value else o
    return None     # a cast is computed as any value (`(bool)5` too, then `(bool)5 / false` is no error)


def _unary(e: A.Unary, x: Lit) -> Optional[Lit]:
    if e.op == "!":
        return Lit(int(not x.value), True)
    if x.is_bool:
        return None         # `-true`, `~true`: 0.27 refuses them when typing
    if e.op == "~":
        return Lit(~x.value & UINT64_MAX)     # of no sign: ~-5 is 4
    if x.value > 1 << 63:
        raise Refused(UNDERFLOW, e.span)
    return Lit(-x.value)


def _binary(e: A.Binary, a: Lit, b: Lit) -> Optional[Lit]:
    op = e.op
    if a.is_bool and b.is_bool:
        if op in ("/", "%") and not b.value:
            raise Refused(FLOW, e.span)
        f = COMPARE.get(op) or BOOLS[op]
        return Lit(int(bool(f(a.value, b.value))), True)
    if a.is_bool or b.is_bool:
        # a bool beside an integer folds through && and || only (a negative
        # integer is true); anything else is typed and computed
        return Lit(int(COMPARE[op](a.value, b.value)), True) if op in ("&&", "||") else None
    x, y = a.value, b.value
    if (x < 0) != (y < 0) and max(x, y) > INT64_MAX:
        raise Refused(FLOW, e.span)     # 0.27 holds both in an int64 first
    if op in COMPARE:
        return Lit(int(COMPARE[op](x, y)), True)
    v = _compute(op, x, y, signed=x < 0 or y < 0)
    if v is None:
        raise Refused(FLOW, e.span)
    return Lit(v)


def _compute(op: str, x: int, y: int, signed: bool) -> Optional[int]:
    """x op y, or None where the result is out of 0.27's range (or C's
    answer is undefined)."""
    low, high = (INT64_MIN, INT64_MAX) if signed else (0, UINT64_MAX)
    if op in ("+", "-", "*"):
        v = x + y if op == "+" else x - y if op == "-" else x * y
        if op == "*" and x < 0 and y < 0:
            high = UINT64_MAX       # two negatives multiply as their magnitudes, unsigned
        if op == "-" and not signed:
            low = INT64_MIN         # a smaller minus a larger: negative
        return v if low <= v <= high else None
    if op in ("/", "%"):
        if y == 0 or (x, y) == (INT64_MIN, -1):
            return None
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)    # C's truncation
        return q if op == "/" else x - y * q
    if op in ("<<", ">>"):
        if not 0 <= y < 64:
            return None
        if op == ">>":
            return x >> y       # a negative one: arithmetic
        v = (x << y) & UINT64_MAX
        return v - (1 << 64) if signed and v > INT64_MAX else v
    return x & y if op == "&" else x | y if op == "|" else x ^ y
