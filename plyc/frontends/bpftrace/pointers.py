"""Pointer arithmetic as bpftrace (and C) does it: `p + n` and `p - n`
move by n of what p points to, and keep p's type; `p - q` of two pointers
to the same type counts the elements between them (current bpftrace;
0.17 refuses it). `++`, `--`, `+=` and `-=` on a pointer are these too."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ... import arch as ARCH
from ... import btf as BTF
from ... import builtins as B
from ... import types as T
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...ir.fold import value
from . import ast as A
from . import structs


def pointee_size(ty, typ: T.Type, span) -> int:
    """The size of what typ points to: a kernel type's from BTF, the
    script's struct's, a base type's; a pointer's is the target's. void
    (and what has no size) counts bytes, as bpftrace's `void *`."""
    if typ.btf:
        return ty.kernel(lambda k: k.btf.size(typ.btf, _ptr(ty)), span) or 1
    name = typ.pointee.strip()
    if name.endswith("*"):
        return _ptr(ty)
    rec = structs.record_of(ty, typ)
    if rec is not None and structs.kernel_twin(ty, rec.words):
        return structs.twin_size(ty, rec.words, span)      # 0.27's size: the kernel's
    if rec is not None:
        return rec.size or 1
    words = tuple(w for w in name.split() if w not in ("const", "volatile"))
    if words in B.INT_WORDS:
        return B.INT_WORDS[words][0] or 1
    size = _kernel_named(ty, words, span)
    if size is None:
        ty.err(f"pointer arithmetic on '{typ}' needs the size of {name}, which plyc does not know", span,
               "cast the pointer to one of a known type first, e.g. (uint8 *)")
    return size


def _kernel_named(ty, words: tuple, span) -> Optional[int]:
    """The size of a kernel typedef or base type named by words (a BTF
    member's `pid_t *`), None when BTF has none."""
    name = " ".join(words)

    def find(k):
        for kind in (BTF.TYPEDEF, BTF.INT):
            tid = k.btf.find(kind, name)
            if tid is not None:
                return k.btf.size(tid, _ptr(ty))
        return None
    return ty.kernel(find, span)


def _ptr(ty) -> int:
    return ARCH.get(ty.st.arch).ptr


def arith(ty, e, left: ir.Expr, right: ir.Expr) -> ir.Expr:
    """`left op right` (op: + or -) where a side is a pointer."""
    lt, rt = left.type, right.type
    for side, typ in ((e.left, lt), (e.right, rt)):
        if not typ.is_int:
            ty.err(f"operator '{e.op}' needs integers or pointers, got {typ}", side.span)
    if lt.is_pointer and rt.is_pointer:
        if e.op == "+":
            ty.err(f"can't add two pointers ({lt} and {rt})", e.span)
        if (lt.pointee, lt.btf) != (rt.pointee, rt.btf):
            ty.err(f"can't subtract pointers to different types ({lt} and {rt})", e.span)
        diff = ir.Binary("-", left, right, type=T.S64, span=e.span)
        size = pointee_size(ty, lt, e.span)
        return diff if size == 1 else ir.Binary("/", diff, _const(size, e.span), type=T.S64, span=e.span)
    if rt.is_pointer and e.op == "-":
        ty.err(f"can't subtract a pointer ({rt}) from an integer", e.span)
    ptr, n = (left, right) if lt.is_pointer else (right, left)
    size = pointee_size(ty, ptr.type, e.span)
    if size != 1:
        n = ir.Binary("*", n, _const(size, e.span), type=T.Int(8, n.type.signed), span=e.span)
    # The pointer's type, user address space and kernel type kept: ($p + 1)->x reads.
    typ = replace(ptr.type, size=8)
    return ir.Binary(e.op, ptr, n, type=typ, span=e.span) if ptr is left else \
        ir.Binary("+", n, ptr, type=typ, span=e.span)


def _const(value: int, span) -> ir.IntConst:
    return ir.IntConst(value, type=T.S64, span=span)


def address_of(ty, e) -> ir.Call:
    """`&$x` (bpftrace 0.27, stable there: unstable_addr has no effect): a
    pointer to the variable's place on the BPF stack, read through with
    `*`. 0.27's grammar takes a variable or a map (`&@m`: the kernel's BPF
    map object, which plyc does not give)."""
    target = e.operand
    if isinstance(target, A.Map) and target.keys is None:
        ty.err("the address of a map (&@m: bpftrace's BPF map object in the kernel) is not supported by "
               "plyc yet", e.span)
    if not isinstance(target, A.Var):
        ty.err("'&' takes a scratch variable ($x) or a map (@m), as bpftrace 0.27's grammar has it", e.span)
    x = ty.expr(target)
    if not isinstance(x, ir.Local):
        ty.err(f"'&' of ${target.name}, a for loop's pair, is not supported by plyc yet", e.span)
    typ = x.type
    if typ.kind in ("str", "tuple") and not typ.btf and not typ.denotes:
        # a string's or tuple's place: the pointer carries the value's type,
        # which `*` reads back whole (a cast, (int8 *)&$s, reads its bytes)
        return ir.Call(I.ADDR, [x], type=replace(T.Ptr(str(typ)), items=(typ,)), span=e.span)
    if not typ.is_int or typ.btf or typ.size not in (1, 2, 4, 8):
        ty.err(f"the address of ${target.name}, a {typ}, is not supported by plyc yet (only of an integer, "
               "a pointer, a string or a tuple)", e.span)
    if typ.is_pointer:
        pointee = typ.pointee.strip() + " *"
    elif typ.denotes == "bool":
        pointee = "bool"
    else:
        pointee = f"__{'s' if typ.signed else 'u'}{typ.size * 8}"
    ptr = T.Ptr(pointee)
    if typ.denotes and not typ.is_pointer:
        # what the number means (a username's uid, an enum) read back by `*`
        ptr = replace(ptr, items=(typ,))
    return ir.Call(I.ADDR, [x], type=ptr, span=e.span)


def cast_operand(x: ir.Expr, literal: bool) -> ir.Expr:
    """x as 0.27 widens it to a pointer: a signed integer narrower than 64
    bits by its bits, not its sign: (uint8 *)-1 is 0xff (-1 an int8, a
    negative literal of the smallest signed type holding it), (int32 *)$s16
    of -2 is 0xfffe."""
    if not x.type.is_int or not x.type.signed or x.type.is_pointer:
        return x
    size = x.type.size
    v = value(x) if literal else None
    if isinstance(v, int) and v < 0:
        size = next(n for n in (1, 2, 4, 8) if v >= -(1 << (8 * n - 1)))
    return ir.Cast(x, type=T.Int(size, False), span=x.span) if size < 8 else x
