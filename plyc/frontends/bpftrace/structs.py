"""The lowering's side of the script's own struct, union and enum
definitions (cdefs.py lays them out): `(struct mystruct *)arg0` is a
pointer to a script type, `->`/`.` on it reads the member at the script's
offset (not CO-RE: the script says what the memory holds), `sizeof(struct
mystruct)` is the script's size, `(enum e)x` an integer of the enum's size.
Members: integers and pointers read whole, char arrays as strings, other
arrays as bytes (one element with a constant index: `$s->a[2]`), a struct
member by value on the way to one of its own (`$s->inner.x`) or as a value
(`print($s->inner)`, `*$s`): a record of its members (value()), which
bpftrace 0.27 prints `{ .x = 1, .in = { ... } }`."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ... import arch as ARCH
from ... import types as T
from ...ir import intrinsics as I
from ...btf import BTFError
from ...ir import nodes as ir
from ...sema import TypeRef
from . import ast as A
from .cdefs import Member, Record


READ = I.MEMBER      # an integer or pointer member: its bytes read into a variable of its size
BYTES = I.MEM         # arrays: the bytes at the address (read straight into place)


def _ptr(typer) -> int:
    return ARCH.get(typer.st.arch).ptr


def record_of(typer, typ: T.Type) -> Optional[Record]:
    """The script's struct a pointer type points to, if it is one."""
    if not typ.is_pointer or typ.btf or not typ.pointee:
        return None
    return typer.st.cdefs.record(tuple(typ.pointee.split()))


def cast(typer, e: A.Cast, operand) -> Optional[ir.Expr]:
    """(struct s *)x and (enum e)x for the script's types, else None."""
    words = tuple(w for w in e.type.words if w not in ("const", "volatile"))
    defs = typer.st.cdefs
    if words in defs.enums and not e.type.pointers:
        return ir.Cast(operand(), type=enum_type(typer, words, VALUE_WIDTH))
    rec = defs.record(words)
    if rec is None:
        return None
    if e.type.pointers != 1 or e.type.array_len is not None:
        typer.err(f"casts to '{e.type}' are not supported: cast to one pointer, ({' '.join(words)} *)",
                  e.type.span)
    x = operand()
    if not x.type.is_int:
        typer.err(f"can't cast {x.type} to {e.type}", e.span)
    return ir.Cast(x, type=T.Ptr(" ".join(words), x.type.user, _ptr(typer)))


def enum_type(typer, words: tuple, width: int = 0) -> T.Type:
    """A value of the script's enum, printed by its enumerators' names as
    bpftrace 0.27 prints it (the tracer's table), of the enum's width, or
    width's (VALUE_WIDTH: an enumerator or a cast, as 0.27 sizes them)."""
    tables = typer.st.enum_tables
    if words not in tables:
        tables[words] = len(tables)
    return T.Type("int", width or typer.st.cdefs.enums[words], False, "enum", enum_index=tables[words])


# bpftrace 0.27's enum values (an enumerator, a cast to an enum) are 64-bit:
# sizeof(A) is 8, where a struct member of the enum's type is read at its own width.
VALUE_WIDTH = 8


def kernel_twin(typer, words: tuple) -> bool:
    """Whether the kernel's BTF (the build machine's) has a struct or union
    of the script's struct's name. bpftrace 0.27 sizes such a struct as the
    kernel's (sizeof, pointer arithmetic) while it reads the script's
    members at the script's offsets (`->`, offsetof()). No BTF: no twin."""
    if words[:1] not in (("struct",), ("union",)) or len(words) != 2 or typer.ktypes is None:
        return False
    try:
        return typer.ktypes.lookup(words) is not None
    except (BTFError, OSError, TypeError, ValueError):
        return False


def twin_size(typer, words: tuple, span) -> int:
    """The kernel twin's size in the build machine's BTF (the script's
    struct holds the name in the program's C, so no CO-RE size)."""
    tid = typer.kernel(lambda k: k.lookup(words), span)
    return typer.kernel(lambda k: k.btf.size(tid, _ptr(typer)), span) or 1


def offsetof(typer, words: tuple, fields: list, span) -> Optional[ir.Expr]:
    """offsetof(struct T, a.b) of the script's struct: the script's offset
    (as 0.27's, the kernel's struct of that name or not)."""
    rec = typer.st.cdefs.record(words)
    if rec is None:
        return None
    off = 0
    for i, name in enumerate(fields):
        m = rec.members.get(name)
        if m is None:
            typer.err(f"{' '.join(rec.words)} has no member '{name}'", span, f"its members: {', '.join(rec.members)}")
        if m.bits:
            typer.err(f"offsetof() of bit-field '{name}': it has no byte offset of its own", span)
        off += m.offset
        if i + 1 < len(fields):
            rec = typer.st.cdefs.record(m.target) if m.kind == "struct" else None
            if rec is None:
                typer.err(f"'{name}' is not a struct or union: it has no member '{fields[i + 1]}'", span)
    return ir.IntConst(off, type=T.U64, span=span)


def sizeof(typer, tn: A.TypeName) -> Optional[ir.Expr]:
    words = tuple(w for w in tn.words if w not in ("const", "volatile"))
    defs = typer.st.cdefs
    if not tn.pointers and defs.record(words) and kernel_twin(typer, words):
        return ir.IntConst(twin_size(typer, words, tn.span), type=T.U64)
    size = defs.enums.get(words) or (defs.record(words).size if defs.record(words) else None)
    if size is None:
        return None
    if tn.pointers:
        size = _ptr(typer)
    return ir.IntConst(size, type=T.U64)


def _base(typer, obj) -> Optional[tuple]:
    """(address expression, Record) of the struct obj names: a pointer to a
    script struct, or a script struct member held by value."""
    if isinstance(obj, A.Field):
        inner = _base(typer, obj.obj)
        if inner is not None:
            m = _member(typer, inner[1], obj)
            if m.kind == "struct":
                return _addr(inner[0], m.offset, obj.span), typer.st.cdefs.record(m.target)
    x = typer.field_base(obj)
    rec = record_of(typer, x.type)
    return (x, rec) if rec is not None else None


def _member(typer, rec: Record, e: A.Field) -> Member:
    m = rec.members.get(e.name)
    if m is None:
        typer.err(f"{' '.join(rec.words)} has no member '{e.name}'", e.span,
                  f"its members: {', '.join(rec.members)}")
    return m


def _addr(base: ir.Expr, off: int, span) -> ir.Expr:
    typ = T.Ptr("void", base.type.user, base.type.size)
    if not off:
        return ir.Cast(base, type=typ, span=span)
    return ir.Binary("+", base, ir.IntConst(off, type=T.S64, span=span), type=typ, span=span)


def field(typer, e: A.Field) -> Optional[ir.Expr]:
    """obj->name / obj.name on a script struct, else None (CO-RE's turn)."""
    base = _base(typer, e.obj)
    if base is None:
        return None
    addr, rec = base
    m = _member(typer, rec, e)
    return _read(typer, _addr(addr, m.offset, e.span), m, e)


def _read(typer, addr: ir.Expr, m: Member, e) -> ir.Expr:
    user = addr.type.user
    if m.bits:
        return _bitfield(typer, addr, m, e.span)
    if m.kind == "int" and m.target in typer.st.cdefs.enums:
        return ir.Call(READ, [addr], type=enum_type(typer, m.target))
    if m.kind == "int":
        return ir.Call(READ, [addr], type=T.Int(m.size, m.signed))
    if m.kind == "ptr":
        return ir.Call(READ, [addr], type=_pointer(typer, m.target, user, e.span))
    if m.kind == "array":
        typ = T.Str(m.size) if m.elem.kind == "int" and m.elem.size == 1 and m.elem.signed else T.Buf(m.size)
        return ir.Call(BYTES, [addr], type=typ)
    return value(typer, addr, typer.st.cdefs.record(m.target), e.span)


def _bitfield(typer, addr: ir.Expr, m: Member, span) -> ir.Expr:
    """A bit-field: the fewest bytes (1, 2, 4 or 8) from the one its first
    bit is in that hold it, shifted and masked, sign-extended for a signed
    type; its bits counted in the target's allocation order (from the
    first byte's least significant bit on little-endian targets, its most
    significant on big-endian ones: layout.py). The value has the declared
    type (an enum's prints by name)."""
    need = m.bit + m.bits
    n = next((k for k in (1, 2, 4, 8) if k * 8 >= need), None)
    if n is None:
        typer.err(f"bit-field '{m.name}' spans more than 8 bytes (it starts at bit {m.bit} of a byte): "
                  "not supported by plyc", span)
    raw = ir.Cast(ir.Call(READ, [addr], type=T.Int(n, False)), type=T.U64, span=span)
    low = n * 8 - need if ARCH.get(typer.st.arch).big_endian else m.bit     # bits below the field
    # up to the top bit, then down (an arithmetic shift keeps a signed field's sign)
    up = ir.Binary("<<", raw, ir.IntConst(64 - low - m.bits, type=T.U64), type=T.U64, span=span)
    top = ir.Cast(up, type=T.S64 if m.signed else T.U64, span=span)
    down = ir.Binary(">>", top, ir.IntConst(64 - m.bits, type=T.U64), type=top.type, span=span)
    if m.target in typer.st.cdefs.enums:
        return ir.Cast(down, type=enum_type(typer, m.target), span=span)
    return ir.Cast(down, type=T.Int(m.size, m.signed), span=span)


def value(typer, addr: ir.Expr, rec: Record, span) -> ir.TupleMake:
    """The struct at addr as a value: a record of its members, each read at
    its offset (so its layout in the record is the tuple's, not C's)."""
    what = " ".join(rec.words)
    if rec.words[0] == "union":
        typer.err(f"a {what} held by value as a value is not supported by plyc: read one of its "
                  "members", span, "bpftrace 0.27 aborts printing a union (std::bad_alloc)")
    items = []
    for m in rec.members.values():
        if m.kind == "array" and not (m.elem.kind == "int" and m.elem.size == 1 and m.elem.signed):
            typer.err(f"a {what} as a value is not supported by plyc yet: its member '{m.name}' is "
                      "an array of other than char", span,
                      "bpftrace 0.27 prints it as a list, [1,2]; read its elements ($s->a[0])")
        items.append(_read(typer, _addr(addr, m.offset, span), m, _At(span)))
    return ir.TupleMake(items, type=T.Tuple([x.type for x in items], tuple(rec.members)), span=span)


class _At:
    """Where a member read inside a struct value is (its errors' place)."""
    def __init__(self, span):
        self.span = span


def _pointer(typer, target: tuple, user: bool, span) -> T.Type:
    size = _ptr(typer)
    if typer.st.cdefs.record(target) is not None or target in (("char",), ("void",)):
        return T.Ptr(" ".join(target), user, size)
    return replace(typer.kernel_cast(TypeRef(target, 1, span)), user=user)


def index(typer, e: A.Index) -> Optional[ir.Expr]:
    """`$s->arr[i]` (constant i) of a script struct's array: the element."""
    if not isinstance(e.obj, A.Field):
        return None
    base = _base(typer, e.obj.obj)
    if base is None:
        return None
    addr, rec = base
    m = _member(typer, rec, e.obj)
    if m.kind != "array":
        return None
    i = typer.const_int(e.index, "an index into a struct's array must be a constant")
    if not 0 <= i < m.count:
        typer.err(f"index {i} is out of '{m.name}' ({m.count} elements)", e.index.span)
    elem = m.elem
    return _read(typer, _addr(addr, m.offset + i * elem.size, e.span), elem, e)
