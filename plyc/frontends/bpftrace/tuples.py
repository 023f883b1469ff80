"""bpftrace's tuples as values: `(1, "a", comm)`, `$t.0`, a map's value
`@m[k] = (a, b)`, `print($t)`, tuples nested in tuples. A tuple is a value
of the IR's tuple type (types.Tuple: bpftrace's layout, each member at its
natural alignment, strings packed), built by ir.TupleMake and read by
ir.TupleGet; the code generator keeps it in a char array (codegen/tuples.py),
the tracer prints it as bpftrace does, `(1, abc)` and `[1,"abc"]`.
bpftrace 0.27's records, `(a=1, b="x")`, are tuples whose members have
names (types.Tuple's `names`): read by name, `$r.a`, printed
`{ .a = 1, .b = x }` and `{"a": 1, "b": "x"}`."""
from __future__ import annotations

from ... import types as T
from ...ir import nodes as ir
from . import ast as A
from .trees import const_value

# What a tuple can hold: what a map can store (no contexts, no void).
MEMBER_KINDS = ("int", "str", "buf", "inet", "usym", "stack", "tuple")


def make(typer, e: A.Tuple) -> ir.TupleMake:
    if not e.items:
        typer.err("an empty tuple '()' has no value", e.span)
    items = [typer.expr(i) for i in e.items]
    for x, i in zip(items, e.items):
        if x.type.kind not in MEMBER_KINDS:
            typer.err(f"a tuple can't hold a value of type {x.type}", i.span)
    return ir.TupleMake(items, type=T.Tuple([x.type for x in items], e.names or ()))


def get(typer, e: A.TupleIndex) -> ir.TupleGet:
    return member(typer, typer.expr(e.obj), e.index, e.span)


def member(typer, obj: ir.Expr, index: int, span) -> ir.TupleGet:
    """obj.index of a tuple value already lowered."""
    if obj.type.kind != "tuple":
        typer.err(f"'.{index}' reads a member of a tuple, not of a value of type {obj.type}", span)
    if obj.type.names or obj.type.denotes:      # bpftrace 0.27's words
        typer.err(f"Can not access index '{index}' on expression of type '{obj.type}'", span,
                  "an array's elements are read by [] ($a[0])" if obj.type.denotes == "array" else
                  "a record's members are read by name ($r.a)")
    n = len(obj.type.items)
    if not 0 <= index < n:
        typer.err(f"this tuple has {n} member{'s' if n != 1 else ''} (.0 to .{n - 1}), no .{index}", span)
    return ir.TupleGet(obj, index, type=obj.type.items[index])


def field(typer, obj: ir.Expr, name: str, span) -> ir.TupleGet:
    """obj.name of a record value already lowered."""
    if name not in obj.type.names:
        typer.err(f"Record does not contain a field named '{name}'", span,
                  f"its members: {', '.join(obj.type.names)}")
    i = obj.type.names.index(name)
    return ir.TupleGet(obj, i, type=obj.type.items[i])


def index(typer, obj: ir.Expr, e) -> ir.TupleGet:
    """`$t[0]` of a tuple: `$t.0`, for an integer literal alone (bpftrace 0.27's rule)."""
    if obj.type.names:      # bpftrace 0.27's words
        typer.err("The array index operator [] can only be used on arrays, pointers, and tuples, "
                  f"found {obj.type}", e.span, "a record's members are read by name ($r.a)")
    if obj.type.denotes == "array":     # a kernel array held by value ($a = $p->arr; $a[1])
        i = typer.const_int(e.index, "an index must be a constant integer")
        n = len(obj.type.items)
        if not 0 <= i < n:
            typer.err(f"index {i} is out of bounds for {obj.type}", e.index.span)
        return ir.TupleGet(obj, i, type=obj.type.items[i])
    # an integer literal, or literals 0.27 folds into one (`$t[1 + 1]`,
    # literals.py; its refusal said first); a cast (`$t[(uint8)0]`), a
    # variable or a bool is not
    typer.literal(e.index)
    i = const_value(e.index)
    if i is None:
        typer.err("Array-style access for tuples only valid for integer literals", e.span)
    return member(typer, obj, i, e.span)


def compare(typer, op: str, a: ir.Expr, b: ir.Expr, span) -> ir.Expr:
    """`a == b`, `a != b` of two tuples (records: members by name), as
    bpftrace 0.27 compares them: each member pair compared, joined by && (||)."""
    order = T.matched(a.type, b.type)
    if op not in ("==", "!=") or order is None:
        typer.err(f"operator '{op}' can't compare {a.type} with {b.type}", span,
                  "tuples and records compare with == and != to one of their shape" if order is None
                  else None)
    parts = []
    for i, j in enumerate(order):
        x = ir.TupleGet(a, i, type=a.type.items[i], span=span)
        y = ir.TupleGet(b, j, type=b.type.items[j], span=span)
        if x.type.kind == "tuple":
            parts.append(compare(typer, op, x, y, span))
        else:
            parts.append(typer.binary(op, x, y, span, span))
    join = "&&" if op == "==" else "||"
    node = parts[0]
    for p in parts[1:]:
        node = ir.Binary(join, node, p, type=T.S32, span=span)
    return node


def flatten_key(typer, keys: list, exprs: list) -> list:
    """`@m[$t]` with a tuple $t is `@m[$t.0, $t.1, ...]`: current bpftrace's
    keys are tuples, so both name the same entry (0.17 refuses a tuple key).
    A kernel array held by value stays one key, printed `@m[[3,0,0,0]]`."""
    if len(keys) != 1 or keys[0].type.kind != "tuple" or keys[0].type.names or keys[0].type.denotes:
        return keys
    t = keys[0]
    return [ir.TupleGet(t, i, type=it, span=exprs[0].span) for i, it in enumerate(t.type.items)]


def ternary(typer, e: A.Ternary):
    """`c ? (a, b) : (x, y)` of tuples and `c ? buf(..) : buf(..)` of
    buffers (the shared rule takes integers and strings only), or by that
    rule when the branches are neither. Of different sizes, the value is
    of the type holding both (types.unify), as 0.27 widens it: `nsecs ?
    ("hellolongstr", "a") : ("b", "hellolongstr")` holds two 13-byte strings."""
    cond = typer.cond(e.cond)
    a, b = typer.expr(e.then), typer.expr(e.other)
    if not {a.type.kind, b.type.kind} & {"tuple", "buf"}:
        return typer.ternary(cond, a, b, e.span)
    u = T.unify(a.type, b.type)
    if u is None or u.kind not in ("tuple", "buf") or (u.kind == "buf" and u.btf):
        typer.err(f"the branches of '?:' have different types: {a.type} and {b.type}", e.span)
    return ir.Ternary(cond, a, b, type=u)
