"""Tuples in BPF C: a tuple value is a char array (8-aligned, as every
temporary) holding its members where types.tuple_layout places them, the
padding zeroed (tuples are compared as bytes when they are map keys). A
tuple stored where a wider one is kept (a map whose value was unified
from several stores: `("a", 1)` and `(comm, 1)`) is converted member by
member, since the offsets after a wider member move."""
from __future__ import annotations

from .. import types as T
from ..ir import nodes as ir


def at(ref: str, off: int, const: bool = False) -> str:
    return f"({'const ' if const else ''}char *){ref} + {off}" if off else f"({'const ' if const else ''}char *){ref}"


class TupleGen:
    """FuncGen's methods for tuple expressions (a mixin: it uses FuncGen's
    temporaries and line output)."""

    def tuple_bytes(self, e) -> str:
        """The name of an array holding the tuple (or tuple member) e."""
        if isinstance(e, ir.TupleMake):
            name = self.local_bytes(e.type.size)
            offsets, _ = T.tuple_layout(e.type.items)
            for item, off, typ in zip(e.items, offsets, e.type.items):
                self.put_member(name, off, typ, item)
            if not e.items:
                self.line(f"(void){name};")     # a kernel struct of no members: printed {}
            return name
        # a member that is itself an array: copied out of the tuple
        src, off = self.member_ref(e)
        name = self.local_bytes(e.type.size, zero=False)
        self.line(f"__builtin_memcpy({name}, {at(src, off, True)}, {e.type.size});")
        return name

    def member_ref(self, e: ir.TupleGet) -> tuple:
        """The array holding e's tuple, and e's offset in it."""
        src = self.bytes(e.obj)
        return src, T.tuple_layout(e.obj.type.items)[0][e.index]

    def sc_TupleGet(self, e: ir.TupleGet) -> str:
        src, off = self.member_ref(e)
        typ = e.type
        name = self.tmp("m")
        # tuple arrays are 8-aligned and members naturally aligned in them
        self.line(f"{typ.ctype()} {name} = *(const {typ.ctype()} *)({at(src, off, True)});")
        return self.cast(typ.scalar_ctype(), name)

    def put_member(self, dst: str, off: int, typ: T.Type, item):
        """Store the expression item as the member of type typ at off; a
        tuple made here (a kernel struct's member struct) member by member,
        in place (ir/opt/temps.py's tuple_items)."""
        if isinstance(item, ir.TupleMake) and item.type == typ:
            offsets, _ = T.tuple_layout(typ.items)
            for sub, o, t in zip(item.items, offsets, typ.items):
                self.put_member(dst, off + o, t, sub)
        elif typ.is_bytes and self.direct_read(item):
            self.read_bytes_into(at(dst, off), typ.size, item)
        elif typ.is_bytes:
            src = self.bytes_ref(item)
            self.convert_into(dst, off, typ, src, 0, item.type)
        else:
            self.line(f"*({typ.ctype()} *)({at(dst, off)}) = {self.stored(item)};")

    def convert_into(self, dst: str, doff: int, dt: T.Type, src: str, soff: int, st: T.Type):
        """Copy a value of type st at src+soff into dst+doff as type dt (the
        same kind, dt the wider: types.unify's result)."""
        if dt.kind == "tuple" and dt != st:
            doffs, _ = T.tuple_layout(dt.items)
            soffs, _ = T.tuple_layout(st.items)
            # a record's members by name (types.matched), a tuple's by place
            for d, do, j in zip(dt.items, doffs, T.matched(dt, st)):
                self.convert_into(dst, doff + do, d, src, soff + soffs[j], st.items[j])
        elif dt.is_bytes:
            self.line(f"__builtin_memcpy({at(dst, doff)}, {at(src, soff, True)}, {min(dt.size, st.size)});")
        else:
            self.line(f"*({dt.ctype()} *)({at(dst, doff)}) = *(const {st.ctype()} *)({at(src, soff, True)});")

    def bytes_as(self, e, typ: T.Type) -> str:
        """bytes_ref(e), converted to the tuple type typ when e's differs."""
        if typ.kind != "tuple" or e.type == typ:
            return self.bytes_ref(e)
        src = self.bytes(e)
        name = self.local_bytes(typ.size)
        self.convert_into(name, 0, typ, src, 0, e.type)
        return name

    @staticmethod
    def size_as(e, typ: T.Type) -> int:
        """The size of what bytes_as(e, typ) holds."""
        return typ.size if typ.kind == "tuple" and e.type != typ else e.type.size
