"""Current bpftrace's typed scratch variables: `let $x: uint8;`,
`let $x: string[16] = "a";`, `let $x: typeof($y) = v;`. The variable keeps
its declared type for the rest of the probe: every value assigned to it is
converted to that type, a constant that does not fit and a value of another
kind (a string for an integer) are errors, as bpftrace 0.27 refuses them
("Type mismatch for $x")."""
from __future__ import annotations

from typing import Optional

from ... import types as T
from ...ir import nodes as ir
from . import ast as A
from . import typeof
from .trees import const_value


def declare(typer, s: A.Let) -> T.Type:
    """The declared type of `let $x: TYPE`, remembered for the probe."""
    tn = s.type
    if tn.base == "typeof":
        typ = typeof.of(typer, tn)
        if typ.kind in ("void", "ctx", "agg"):
            typer.err(f"typeof() of a value of type {typ} can't type a variable", tn.span)
    elif tn.words in (("string",),):
        if tn.pointers:
            typer.err("a string can't be a pointer", tn.span)
        typ = T.Str(tn.array_len) if tn.array_len is not None else typer.read_str(typer.st.strsize)
        if typ.size < 1:
            typer.err("a string needs a size of at least 1", tn.span)
    else:
        if tn.array_len is not None:
            typer.err("only a string can have a size here: string[N]", tn.span)
        typ = typer.expr(A.Cast(tn, A.Int(0, "0", span=tn.span), span=tn.span)).type
    typer.declared[(typer.probe.index, s.var.name)] = (typ, tn)
    if typ.kind == "str":
        typer.probe.locals.setdefault(s.var.name, typ)      # its size, whatever is stored
    return typ


def declared(typer, name: str) -> Optional[tuple]:
    return typer.declared.get((typer.probe.index, name))


def fits(value: int, typ: T.Type) -> bool:
    bits = typ.size * 8
    if typ.denotes == "bool":
        return value in (0, 1)
    if typ.signed:
        return -(1 << (bits - 1)) <= value < 1 << (bits - 1)
    return 0 <= value < 1 << bits


def convert(typer, name: str, decl: tuple, value, span) -> ir.Expr:
    """value, assigned to the declared $name, in its type."""
    typ, tn = decl
    c = const_value(value)
    if c is not None and typ.is_int and not typ.is_pointer and not fits(c, typ):
        typer.err(f"type mismatch for ${name}: {c} does not fit in its type, {typ}", span)
    x = typer.expr(value)
    if typ.kind == "str":
        if x.type.kind != "str":
            typer.err(f"type mismatch for ${name}: a {x.type} assigned to a {typ}", span)
        if isinstance(value, A.Str):        # a literal: its own length, not ply's rounding
            if len(value.value) + 1 > typ.size:
                typer.err(f"type mismatch for ${name}: a string of {len(value.value) + 1} bytes "
                          f"does not fit in its {typ}", span)
            return ir.BytesConst(value.value, type=typ, span=span)
        if x.type.size > typ.size:
            typer.err(f"type mismatch for ${name}: a {x.type} does not fit in its {typ}", span)
        return x
    if typ.kind != "int" or not x.type.is_int:
        if T.unify(typ, x.type) != typ:
            typer.err(f"type mismatch for ${name}: a {x.type} assigned to a {typ}", span)
        return x
    if typ.denotes == "bool":
        zero = ir.IntConst(0, type=T.S64, span=span)
        x = ir.Binary("!=", x, zero, type=T.S32, span=span)
    return ir.Cast(x, type=typ, span=span)
