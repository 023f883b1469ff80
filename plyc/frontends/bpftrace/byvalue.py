"""A kernel struct or union held by value in a variable or a map
(`$n = $d->d_name`): bpftrace 0.27 copies the whole object and reads
members from the copy; plyc has no value kind for such a copy yet (its
CO-RE reads are of scalars and arrays), so it says so where the value is
stored, and how to write the same read through the pointer."""
from __future__ import annotations

from ...ir import nodes as ir


def refuse_stored(typer, x: ir.Expr, where: str, span):
    if x.type.kind != "struct":
        return
    shown = (x.type.pointee or "struct").strip()
    typer.err(f"a kernel {shown} held by value in {where} is not supported by plyc yet", span,
              "read its members where it is, through the pointer: $d->d_name.name rather than "
              "$n = $d->d_name; $n.name")
