"""bpftrace 0.27's typeof(e): the type of an expression where a type goes,
in a cast `(typeof($x))v`, sizeof(typeof(@m)) and `let $x: typeof(e)`
(lets.py). `typeof(TYPE)` is TYPE itself (the parser gives it so). The
expression is typed, not run."""
from __future__ import annotations

from ... import types as T
from ...ir import nodes as ir
from . import aggreads, smalltypes
from . import ast as A


def of(typer, tn: A.TypeName) -> T.Type:
    """The type typeof(e) names: an integer's or a string's as 0.27 types it
    (smalltypes.py: `$x = 1; (typeof($x))300` is 44, `$s = "ab"` string[3]),
    other values' plyc's (a `let $y: typeof($t)` of a tuple holds what plyc
    assigns it, where 0.27's narrower members would need converting)."""
    t = smalltypes.stored(typer, smalltypes.of(typer, tn.of))
    return t if t.is_int or t.kind == "str" else typer.expr(tn.of).type


def cast(typer, e: A.Cast) -> ir.Expr:
    """(typeof(e))v: v converted to e's type, an integer or a pointer."""
    agg = aggreads.source(typer, e.type.of)
    if agg is not None:
        # 0.27: Cannot cast from "int8" to "sum_t"
        typer.err(f"Cannot cast to typeof({aggreads.spelled(e.type.of)}), an aggregation's "
                  f"'{aggreads.type_name(typer, agg)}'", e.type.span,
                  f"as bpftrace 0.27; cast to its value's type instead: (int64)")
    typ = of(typer, e.type)
    if not typ.is_int:
        typer.err(f"can't cast to typeof() of a value of type {typ}", e.type.span,
                  "a cast's type is an integer or a pointer")
    x = typer.expr(e.operand)
    if typ.denotes == "bool":       # as a cast to bool: 0 or 1, not the low byte
        x = ir.Binary("!=", x, ir.IntConst(0, type=T.S64, span=e.span), type=T.S32, span=e.span)
    return typer.convert(x, typ, e.span, f"typeof({typ})")


def sizeof(typer, tn: A.TypeName) -> ir.Expr:
    typ = smalltypes.visible(typer, smalltypes.of(typer, tn.of))
    if typ.kind in ("void", "ctx", "agg"):
        typer.err(f"sizeof(typeof()) of a value of type {typ}", tn.span)
    return ir.IntConst(typ.size, type=T.U64, span=tn.span)
