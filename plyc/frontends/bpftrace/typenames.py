"""A cast to a bare name, `(bio *)arg0`: bpftrace's parser takes `(NAME *)`
and `(NAME **)` as a type (its workaround for typedefs) and the name is then
found as C finds it in the kernel's types: a typedef, else `struct NAME`
(0.27 accepts `(task_struct *)curtask`). Here the name becomes the struct or
union it stands for, so the cast is an ordinary cast to a kernel type; a name
that is none of those is left as written, for the usual "unknown type"."""
from __future__ import annotations

from dataclasses import replace

from ... import btf as BTF
from ... import builtins as B
from ...btf import BTFError
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
