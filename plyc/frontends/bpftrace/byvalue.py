"""The last guard before a kernel struct is stored: a struct value is a
record of its members (kvalues.py, made where a member or an element is
read); a struct place that reaches a variable or a map by some other way
is refused here, naming it, instead of becoming C that does not compile."""
from __future__ import annotations

from ...ir import nodes as ir


def refuse_stored(typer, x: ir.Expr, where: str, span):
    if x.type.kind != "struct":
        return
    shown = (x.type.pointee or "struct").strip()
    typer.err(f"a kernel {shown} held by value in {where} is not supported by plyc yet", span,
              "read the members you need through the pointer (->x)")
