"""Casts bpftrace reads beyond C's. A cast to a bare name, `(bio *)arg0`:
bpftrace's parser takes `(NAME *)` and `(NAME **)` as a type (its
workaround for typedefs) and the name is then
found as C finds it in the kernel's types: a typedef, else `struct NAME`
(0.27 accepts `(task_struct *)curtask`). Here the name becomes the struct or
union it stands for, so the cast is an ordinary cast to a kernel type; a name
that is none of those is left as written, for the usual "unknown type".

And bpftrace's array casts (its docs, "Array casts"): an integer array
cast to the integer of its size, `(uint32)pton("127.0.0.1")`, its bytes
read as one integer, and an integer cast to an array of its size,
`(int8[8])x`, its bytes as the elements, and back, each in the target's
byte order as bpftrace's (the device's) does."""
from __future__ import annotations

from dataclasses import replace

from ... import arch as ARCH
from ... import bounds
from ... import btf as BTF
from ... import builtins as B
from ... import types as T
from ...btf import BTFError
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...sema import TypeRef
from . import ast as A
from . import smalltypes


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


def _element(typer, ref: TypeRef, span) -> T.Type:
    elem = B.cast_type(ref)
    if elem is None or not elem.is_int or elem.is_pointer:
        typer.err(f"an array cast's elements must be integers, not {ref}", span)
    if tuple(ref.words) in (("bool",), ("_Bool",)):
        return replace(elem, denotes="bool")        # printed true and false
    return elem


def _bool_elements(items: list, elem: T.Type, span) -> list:
    """bool[] elements: each byte true when it is not 0, as 0.27 prints them."""
    if elem.denotes != "bool":
        return items
    zero = ir.IntConst(0, type=T.Int(1, False), span=span)
    return [ir.Cast(ir.Binary("!=", i, zero, type=T.S32, span=span), type=elem, span=span) for i in items]


def string_to_array(typer, x: ir.BytesConst, elem: T.Type, n: int, span) -> ir.TupleMake:
    """(int8[])"hello" of a string literal: its bytes and NUL (0.27's
    string[6]) as the elements, folded now. A string held elsewhere is
    refused: plyc sizes strings otherwise than 0.27, whose size sets the count."""
    data = x.value.split(b"\0")[0] + b"\0"
    if (len(data) % elem.size) != 0:
        typer.err("Cannot determine array size: the element size is incompatible with the cast integer size", span)
    if n < 0:
        n = len(data) // elem.size
    if n * elem.size != len(data):
        shown = "bool" if elem.denotes == "bool" else spelled(elem)
        typer.err(f'Cannot cast from "string[{len(data)}]" to "{shown}[{n}]"', span)
    order = "big" if ARCH.get(typer.st.arch).big_endian else "little"
    items = [ir.IntConst(int.from_bytes(data[i * elem.size:(i + 1) * elem.size], order, signed=elem.signed),
                         type=T.Int(elem.size, elem.signed), span=span) for i in range(n)]
    return ir.TupleMake(_bool_elements(items, elem, span), type=T.Array([elem] * n), span=span)


def _shifts(typer, n: int, size: int) -> list:
    """The bit offset of each of n elements of `size` bytes in the integer
    they make, in the target's byte order."""
    order = range(n - 1, -1, -1) if ARCH.get(typer.st.arch).big_endian else range(n)
    return [8 * size * i for i in order]


def int_to_array(typer, x: ir.Expr, ref: TypeRef, n: int, span) -> ir.TupleMake:
    """(intN[M])x: x's bytes as M integers of N bits (M * N / 8 of x's bytes:
    an integer literal takes the size the cast gives it, as in 0.27)."""
    elem = _element(typer, ref, span)
    if isinstance(x, ir.BytesConst) and x.type.kind == "str":
        return string_to_array(typer, x, elem, n, span)
    if not x.type.is_int or x.type.is_pointer:
        typer.err(f"can't cast {x.type} to an array: bpftrace casts an integer or a string literal to an array "
                  "of its size", span, "plyc sizes a string held elsewhere otherwise than 0.27"
                  if x.type.kind == "str" else None)
    if n < 0:                       # (int8[])x: as many as x's size holds
        n = x.type.size // elem.size
    if n < 1 or (n * elem.size != x.type.size and not isinstance(x, ir.IntConst)) or n * elem.size > 8:
        typer.err(f"can't cast {x.type} to {ref}[{n}]: an integer casts to an array of its size "
                  f"({x.type.size} bytes)", span)
    whole = ir.Cast(x, type=T.U64, span=span)
    items = [ir.Cast(ir.Binary(">>", whole, ir.IntConst(shift, type=T.U64, span=span), type=T.U64, span=span),
                     type=T.Int(elem.size, elem.signed), span=span) for shift in _shifts(typer, n, elem.size)]
    return ir.TupleMake(_bool_elements(items, elem, span), type=T.Array([elem] * n), span=span)


def list_to_int(typer, x: ir.Expr, ref: TypeRef, span) -> ir.Expr:
    """(uintN)a of an integer array value (an array cast's, a kernel
    array held by value) of N/8 bytes: its elements' bytes as one integer."""
    dst = B.cast_type(ref)
    items = x.type.items
    if dst is None or not dst.is_int or ref.pointers or dst.denotes == "bool" or \
            not all(t.is_int and not t.is_pointer for t in items):
        typer.err(f"can't cast {x.type} to {ref}", span)
    size = sum(t.size for t in items)
    if size != dst.size or len({t.size for t in items}) != 1:
        typer.err(f"can't cast {x.type} to {ref}: an array casts to the integer of its size ({size} bytes)", span)
    out = None
    for i, shift in enumerate(_shifts(typer, len(items), items[0].size)):
        part = ir.Cast(ir.TupleGet(x, i, type=items[i], span=span), type=T.Int(items[i].size, False), span=span)
        part = ir.Binary("<<", ir.Cast(part, type=T.U64, span=span), ir.IntConst(shift, type=T.U64, span=span),
                         type=T.U64, span=span)
        out = part if out is None else ir.Binary("|", out, part, type=T.U64, span=span)
    return ir.Cast(out, type=T.Int(dst.size, dst.signed), span=span)


def spelled(t: T.Type) -> str:
    """t as bpftrace 0.27 names a type in its errors: uint64, int8,
    string[64], uint8 *, (int8,string[2]), int32[2], kstack."""
    if t.kind == "int" and t.is_pointer:
        return f"{_int_name(t.pointee.strip())} *"
    if t.kind == "int":
        return {"bool": "bool", "sym": "ksym_t"}.get(t.denotes) or f"{'' if t.signed else 'u'}int{t.size * 8}"
    if t.kind == "str":
        return f"string[{t.size}]"
    if t.kind == "buf" and t.sized:
        return f"buffer[{t.size}]"      # 0.27's: its length word and bytes
    if t.kind in ("inet", "usym"):
        return f"inet[{t.size}]" if t.kind == "inet" else "usym_t"
    if t.kind == "stack":
        return "ustack" if t.user else "kstack"
    if t.kind == "tuple" and t.denotes == "array":
        return f"{spelled(t.items[0]) if t.items else 'void'}[{len(t.items)}]"
    if t.kind == "tuple" and t.names:
        return "record { " + ", ".join(f".{n} = {spelled(i)}" for n, i in zip(t.names, t.items)) + " }"
    if t.kind == "tuple" and t.denotes != "record":
        return "(" + ",".join(map(spelled, t.items)) + ")"
    return str(t)


def _int_name(name: str) -> str:
    """plyc's s8 ... u64 as 0.27's int8 ... uint64; other names as they are."""
    if len(name) > 1 and name[0] in "su" and name[1:] in ("8", "16", "32", "64"):
        return ("u" if name[0] == "u" else "") + "int" + name[1:]
    return name


def _value_name(x: ir.Expr) -> str:
    """x's type as 0.27 names the value cast: a literal by its own size
    (0.27's smallest integer, a string's bytes and NUL), a kernel struct
    held by value by its C name."""
    if isinstance(x, ir.IntConst) and not x.type.is_pointer and x.type.denotes != "bool":
        return spelled(smalltypes.literal(x.value))
    if isinstance(x, ir.BytesConst) and x.type.kind == "str":
        return f"string[{len(x.value.split(bytes(1))[0]) + 1}]"
    return spelled(x.type)


def text_cast(typer, x: ir.Expr, tn: A.TypeName, span):
    """(string[N])x, (buffer[N])x as 0.27 takes them: a string made room
    for N bytes (a literal needs N at least its length and NUL, as 0.27;
    a variable's string is cut to N, where 0.27 refuses an N below the
    size it gave the variable); anything else refused in 0.27's words,
    the value named as 0.27 names it (an integer or a pointer is an address
    whose string str() reads, whose bytes buf() reads). `[]` has no size:
    0.27 names its target "string" and "buffer[4][0]" and refuses it."""
    n = tn.array_len
    if n > bounds.STRSIZE[1]:
        typer.err(f"{tn.base}[{n}] is larger than a string can be: at most {bounds.STRSIZE[1]} bytes", span)
        return x
    frm = _value_name(x)
    if tn.base == "string" and x.type.kind == "str" and n >= 0:
        # (plyc sizes a variable's string on its own: one it holds is cut to N)
        have = len(x.value) + 1 if isinstance(x, ir.BytesConst) else 1
        if n >= have:
            return ir.Call(I.STR, [x], type=T.Str(n), span=span)
        frm = f"string[{have}]"
    want = ("buffer[4][%d]" % max(n, 0)) if tn.base == "buffer" else f"string[{n}]" if n >= 0 else "string"
    notes = [f"a {tn.base} cast names its size: ({tn.base}[N])"] if n < 0 else []
    if x.type.is_int and (x.type.is_pointer or not x.type.denotes):
        notes.append("read a string with str(p, n), bytes with buf(p, n)")
    if isinstance(x, ir.TupleMake) and x.struct:
        typer.err(f'Cannot cast from C type "{x.struct}" to "{want}"', span,
                  "cast one of its members (->x)" if not notes else "; ".join(notes))
    typer.err(f'Cannot cast from "{frm}" to "{want}"', span, "; ".join(notes) or None)
    return x
