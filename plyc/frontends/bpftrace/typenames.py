"""Casts bpftrace reads beyond C's. A cast to a bare name, `(bio *)arg0`:
bpftrace's parser takes `(NAME *)` and `(NAME **)` as a type (its
workaround for typedefs) and the name is then
found as C finds it in the kernel's types: a typedef, else `struct NAME`
(0.27 accepts `(task_struct *)curtask`). Here the name becomes the struct or
union it stands for, so the cast is an ordinary cast to a kernel type; a name
that is none of those is left as written, for the usual "unknown type".

And an integer array cast to the integer of its size, `(uint32)pton("127.0.0.1")`
(bpftrace's docs, "Array casts"): its bytes read as one integer, in the
device's byte order as bpftrace's does."""
from __future__ import annotations

from dataclasses import replace

from ... import btf as BTF
from ... import builtins as B
from ... import types as T
from ...btf import BTFError
from ...ir import nodes as ir
from ...sema import TypeRef
from . import ast as A


def resolve(typer, tn: A.TypeName, ref: TypeRef) -> A.TypeName:
    """tn, its bare name spelt as the kernel struct or union it names."""
    words = tn.words
    if len(words) != 1 or not tn.pointers or tn.array_len is not None or B.cast_type(ref) is not None:
        return tn
    try:
        named = _kernel_name(typer.ktypes, words[0])
    except (BTFError, OSError, TypeError):
        return tn    # no kernel types to look in: the cast's own error says so
    return tn if named is None else replace(tn, base=named)


def _kernel_name(ktypes, name: str):
    btf = ktypes.btf
    tid = btf.find(BTF.TYPEDEF, name)
    if tid is not None:
        t = btf[btf.strip(tid)]
        if t.kind in (BTF.STRUCT, BTF.UNION) and t.name:
            return ("struct " if t.kind == BTF.STRUCT else "union ") + t.name
        return None
    for kw in ("struct", "union"):
        if ktypes.lookup((kw, name)) is not None:
            return f"{kw} {name}"
    return None


def array_to_int(typer, x: ir.Expr, ref: TypeRef, span) -> ir.Cast:
    """(uintN)x of an array value x of N/8 bytes."""
    dst = B.cast_type(ref)
    if dst is None or not dst.is_int or ref.pointers or dst.denotes == "bool":
        typer.err(f"can't cast {x.type} to {ref}", span)
    if x.type.sized or x.type.size != dst.size:
        typer.err(f"can't cast {x.type} to {ref}: an array casts to the integer of its size "
                  f"({x.type.size} bytes)", span)
    return ir.Cast(x, type=T.Int(dst.size, dst.signed), span=span)
