"""bpftrace 0.27's signs of integer arithmetic and comparisons, which are
not C's (nor 0.17's, which were): an operand of a signed type (a literal
that is not negative counts as neither) makes the operation signed, the
unsigned side read as an int64 (0.27 warns when that is a uint64); a
subtraction is always signed (`(uint32)1 - (uint32)2 < 0` is true); both
sides unsigned otherwise keep it unsigned; `-x` and `~x` keep x's type. `/`, `%`
and `>>` of a signed operand divide and shift its 64 bits as unsigned (0.17
and 0.27 both: `-10 / 3` of a variable is 6148914691236517202, `-8 >> 1`
9223372036854775804), the result typed signed; two literals too (0.17:
`-7 / 2` is 9223372036854775804), where 0.27 has folded them before
(literals.py: -3)."""
from __future__ import annotations

from ... import types as T
from ...ir import nodes as ir
from ...ir.fold import value

ARITH = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
COMPARE = ("==", "!=", "<", "<=", ">", ">=")


def _const(x: ir.Expr):
    v = value(x)
    return v if isinstance(v, int) else None


def _signed(x: ir.Expr) -> bool:
    """Of a signed type; a literal (or a constant expression) that is not
    negative is of neither (a cast one, `(int32)5`, is of its cast's)."""
    return x.type.signed and not x.type.flexible and not (isinstance(x, ir.IntConst) and x.value >= 0)


def _as_int64(x: ir.Expr) -> ir.Expr:
    """x read as an int64; a literal of no sign needs no cast, one past
    INT64_MAX (a uint64) is read as 0.27 reads it (`9223372036854775808 <<
    $s` of an int32 `$s` of 0 is INT64_MIN)."""
    v = _const(x)
    if x.type.signed or v is not None and v < 1 << 63:
        return x
    keep = x.type.denotes if x.type.denotes in ("time", "walltime") else ""
    return ir.Cast(x, type=T.Int(8, True, keep), span=x.span)


def operands(op: str, left: ir.Expr, right: ir.Expr) -> tuple:
    """left and right as 0.27 computes `left op right` with them."""
    if op not in ARITH + COMPARE:
        return left, right
    lt, rt = left.type, right.type
    if not (lt.is_int and rt.is_int) or lt.is_pointer or rt.is_pointer or lt.denotes == "bool" and rt.denotes == "bool":
        return left, right
    if op == "-" or _signed(left) or _signed(right):
        return _as_int64(left), _as_int64(right)
    return left, right


def unary(node: ir.Unary) -> ir.Expr:
    """`-x` and `~x` keep x's type, wrapped to its width, as 0.17 and 0.27
    compute them: `-(uint32)1 < 0` is false, `-(uint8)200` is 56,
    `-(int8)-128` is -128. A literal's `-` and a duration's are plyc's
    (a negative s64)."""
    x = node.operand
    t = x.type
    if node.op not in "-~" or isinstance(x, ir.IntConst) or t.is_pointer or \
            t.denotes in ("time", "walltime", "bool"):
        return node
    node.type = T.Int(8, t.signed)
    return node if t.size == 8 else ir.Cast(node, type=T.Int(t.size, t.signed), span=node.span)


def logical(op: str, left: ir.Expr, right: ir.Expr) -> bool:
    """Whether 0.27 computes `left op right` on the unsigned 64 bits of
    signed operands (then typed signed)."""
    return op in ("/", "%", ">>") and left.type.is_int and right.type.is_int and \
        (_signed(left) or _signed(right))


def as_uint64(x: ir.Expr) -> ir.Expr:
    v = _const(x)
    if v is not None and v >= 0:
        return x
    return ir.Cast(x, type=T.U64, span=x.span)


def shift(node: ir.Expr) -> ir.Expr:
    """`a << b` and `a >> b` of a literal `a` of no sign and an unsigned
    `b` are unsigned, as 0.27 computes them, where C's rule would take the
    literal's int64: `(104 >> $u) >= ~(uint64)1` of a uint32 `$u` is false
    (numfuzz seed 211)."""
    if not isinstance(node, ir.Binary) or node.op not in ("<<", ">>"):
        return node
    left, right = node.left, node.right
    v = _const(left)
    if v is not None and v >= 0 and left.type.flexible and right.type.is_int and not right.type.signed \
            and not right.type.is_pointer and node.type.is_int and not node.type.is_pointer:
        node.type = T.Int(8, False)
    return node

