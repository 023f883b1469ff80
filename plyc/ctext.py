"""A kernel type's C definition from its BTF, as `bpftrace -lv 'struct X'`
(0.27) prints it: libbpf's BTF-to-C layout (members one a line, tab
indented; anonymous structs, unions and enums written where they are used;
`T name: N;` bit-fields; `long: 64;` where the layout has a hole the
members' own alignment would not make; ` __attribute__((packed))` on a
struct whose members are not naturally aligned). Our own printer over
plyc/btf.py (`plyc list -v 'struct X'`, docs/usage.md)."""
from __future__ import annotations

from . import btf as B

QUALIFIERS = {B.CONST: "const", B.VOLATILE: "volatile", B.RESTRICT: "restrict"}
# the types a padding member is written with, widest first (long: the pointer's width)
PADS = (("int", 32), ("short", 16), ("char", 8))
LONG_NAMES = ("long", "long int", "long unsigned int", "unsigned long", "long signed int",
              "signed long", "long long", "long long int", "long long unsigned int")


MAX_DEPTH = 64         # far past any kernel's nesting; a loop in a damaged file stops here
KINDS = {"struct": (B.STRUCT,), "union": (B.UNION,), "enum": (B.ENUM, B.ENUM64)}


def is_type_pattern(pattern: str) -> bool:
    """`struct task*`, `union *`, `enum cpu_usage_stat`: a listing of types,
    not of probes (bpftrace -l's rule: the pattern starts with the word)."""
    return pattern.split(" ", 1)[0] in KINDS and " " in pattern


def type_names(b: B.BTF, glob: str, printer: "Printer" = None) -> list:
    """(`KIND NAME`, type id) of the BTF's own named types of the pattern's
    kind whose `KIND NAME` matches it, in byte order, each name once; with
    a printer (-v), each type of a name its own, named as the printer
    writes it (NAME___2 the second), as 0.27's -lv lists them."""
    import fnmatch
    kw = glob.split(" ", 1)[0]
    found: dict = {}
    for kind in KINDS[kw]:
        for name in b.names_of(kind):
            first = b.find(kind, name)
            ids = [first]
            if printer is not None:
                ids = [t for t in printer._dups().get(("tag", name), [first]) if b[t].kind == kind] or ids
            for tid in ids:
                full = f"{kw} {printer.name(tid) if printer is not None else name}"
                if full not in found and fnmatch.fnmatchcase(full, glob):
                    found[full] = tid
    return sorted(found.items(), key=lambda x: x[0].encode())


class Printer:
    """One BTF's definitions. A name two types share is written NAME___N
    for the N-th of them (N > 1) in the BTF's order, as a dump of the whole
    BTF names them apart."""

    def __init__(self, b: B.BTF):
        self.b = b
        self._dup_ids = None
        self.ptr_size = self._pointer_size()

    def _pointer_size(self) -> int:
        for name in LONG_NAMES:
            tid = self.b.find(B.INT, name)
            if tid is not None:
                return self.b[tid].size
        return 8

    # --- names ---------------------------------------------------------

    def name(self, tid: int) -> str:
        """A struct, union, enum or typedef's name, told apart from the
        others of the same name (tags and typedefs counted apart, as
        libbpf's dump counts them)."""
        t = self.b[tid]
        ids = self._dups().get(("ident" if t.kind == B.TYPEDEF else "tag", t.name))
        if not ids or tid not in ids:
            return t.name
        n = ids.index(tid) + 1
        return t.name if n == 1 else f"{t.name}___{n}"

    def _dups(self) -> dict:
        """(name space, name) -> the ids of the types sharing it, read
        from the records' headers once (nothing decoded)."""
        if self._dup_ids is None:
            import struct
            seen: dict = {}
            for b in ([self.b.base] if self.b.base is not None else []) + [self.b]:
                hdr = struct.Struct(b.e + "II").unpack_from
                for local in range(1, len(b._offsets)):
                    name_off, info = hdr(b._type_data, b._offsets[local])
                    kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
                    if not name_off or kind not in (B.STRUCT, B.UNION, B.ENUM, B.ENUM64, B.TYPEDEF):
                        continue
                    if kind in (B.ENUM, B.ENUM64) and not vlen:
                        continue        # a forward-declared enum keeps its name
                    key = ("ident" if kind == B.TYPEDEF else "tag", b._str(name_off))
                    seen.setdefault(key, []).append(local - 1 + b.first)
                # enumerators share the typedefs' name space: (enum id, value name)
                for tid, _, _ in b._enums:
                    for _, vname in b.enumerators_of(tid):
                        seen.setdefault(("ident", vname), []).append((tid, vname))
            self._dup_ids = {k: v for k, v in seen.items() if len(v) > 1}
        return self._dup_ids

    # --- layout ----------------------------------------------------------

    def align(self, tid: int) -> int:
        t = self.b[tid]
        if t.kind in (B.INT, B.ENUM, B.ENUM64, B.FLOAT):
            return min(self.ptr_size, t.size) or 1
        if t.kind == B.PTR:
            return self.ptr_size
        if t.kind in B.MODIFIERS:
            return self.align(t.type)
        if t.kind == B.ARRAY:
            return self.align(t.type)
        if t.kind in (B.STRUCT, B.UNION):
            most = 1
            for m in t.members:
                a = self.align(m.type)
                most = max(most, a)
                if not m.bitfield_size and m.bit_offset % (8 * a):
                    return 1            # a member off its alignment: packed
            return 1 if t.size % most else most
        return 1

    def packed(self, tid: int) -> bool:
        t = self.b[tid]
        most = 1
        for m in t.members:
            a = self.align(m.type)
            if a and not m.bitfield_size and m.bit_offset % (8 * a):
                return True
            most = max(most, a)
        return t.size % most != 0

    def size(self, tid: int) -> int:
        t = self.b[tid]
        if t.kind in B.MODIFIERS:
            return self.size(t.type)
        if t.kind == B.PTR:
            return self.ptr_size
        if t.kind == B.ARRAY:
            return t.nelems * self.size(t.type)
        return t.size if t.kind in (B.INT, B.STRUCT, B.UNION, B.ENUM, B.ENUM64, B.FLOAT) else 0

    def padding(self, out: list, at: int, to: int, to_align: int, in_bitfield: bool, depth: int) -> None:
        """`TYPE: BITS;` members from bit `at` to bit `to` where the next
        member's own alignment would not get there: first up to the widest
        boundary that does not pass `to` (marked where the compiler would
        not go there itself), then whole pads, then the smallest pad that
        holds the rest."""
        if at >= to:
            return
        tab = "\t" * depth
        pads = (("long", self.ptr_size * 8),) + PADS
        for pad_name, pad_bits in pads:
            boundary = -(-at // pad_bits) * pad_bits
            if boundary <= to:
                break
        if at < boundary <= to:
            if in_bitfield or (boundary == to and -(-at // (to_align * 8)) * to_align * 8 != boundary) or \
                    (boundary != to and to - boundary <= boundary - at):
                out.append(f"{tab}{pad_name}: {boundary - at if in_bitfield else 0};")
            at = boundary
        while at != to:
            bits = min(to - at, pad_bits)
            if bits == pad_bits:
                out.append(f"{tab}{pad_name}: {pad_bits};")
                at += bits
                continue
            for small_name, small_bits in reversed(pads):
                if small_bits >= bits:
                    out.append(f"{tab}{small_name}: {bits};")
                    at += bits
                    break

    # --- definitions -------------------------------------------------------

    def definition(self, tid: int) -> str:
        """`struct X {\\n\\t...\\n}`: the text before the closing `;`."""
        t = self.b[tid]
        try:
            return self._enum(tid, 0) if t.kind in (B.ENUM, B.ENUM64) else self._struct(tid, 0)
        except RecursionError:
            # a struct that holds itself (its alignment asked of itself): a damaged or crafted file
            raise B.BTFError(f"{self.b.label}: a type contains itself: not a kernel's BTF") from None

    def _struct(self, tid: int, depth: int) -> str:
        if depth > MAX_DEPTH:
            # anonymous types in a cycle: no kernel's BTF, a damaged or crafted file
            raise B.BTFError(f"{self.b.label}: anonymous types nested more than {MAX_DEPTH} deep: not a kernel's BTF")
        t = self.b[tid]
        is_struct = t.kind == B.STRUCT
        kw = "struct" if is_struct else "union"
        name = self.name(tid)
        lines = [f"{kw}{' ' if name else ''}{name} {{"]
        at, prev_bitfield = 0, False
        tab = "\t" * (depth + 1)
        packed = is_struct and self.packed(tid)
        for m in t.members:
            align = 1 if packed else self.align(m.type)
            self.padding(lines, at, m.bit_offset, align, prev_bitfield and m.bitfield_size != 0, depth + 1)
            decl = self.decl(m.type, m.name, depth + 1)
            if m.bitfield_size:
                decl += f": {m.bitfield_size}"
                at = m.bit_offset + m.bitfield_size
                prev_bitfield = True
            else:
                at = m.bit_offset + max(0, self.size(m.type)) * 8
                prev_bitfield = False
            lines.append(f"{tab}{decl};")
        if is_struct:
            self.padding(lines, at, t.size * 8, self.align(tid), False, depth + 1)
        if len(lines) == 1 and not t.size:
            text = lines[0] + "}"
        else:
            text = "\n".join(lines) + "\n" + "\t" * depth + "}"
        return text + (" __attribute__((packed))" if packed else "")

    def _enum(self, tid: int, depth: int) -> str:
        t = self.b[tid]
        name = self.name(tid)
        head = f"enum{' ' if name else ''}{name}"
        values = self.b.enumerators_of(tid)
        if not values:
            return head
        tab = "\t" * (depth + 1)
        wide = t.kind == B.ENUM64
        suffix = ("LL" if t.signed else "ULL") if wide else ""
        lines = [head + " {"]
        dups = self._dups()
        for value, vname in values:
            ids = dups.get(("ident", vname))
            if ids and (tid, vname) in ids and ids.index((tid, vname)):
                vname = f"{vname}___{ids.index((tid, vname)) + 1}"
            if not t.signed:
                value &= (1 << (64 if wide else 32)) - 1
            lines.append(f"{tab}{vname} = {value}{suffix},")
        text = "\n".join(lines) + "\n" + "\t" * depth + "}"
        if t.size == 1:
            text += " __attribute__((mode(byte)))"
        elif t.size == 8 and self.ptr_size == 8:
            # an enum64 of 32-bit values only is 8 bytes by the attribute
            if not wide or all(not ((v & (1 << 64) - 1) >> 32) for v, _ in values):
                text += " __attribute__((mode(word)))"
        return text

    # --- declarations --------------------------------------------------------

    def decl(self, tid: int, name: str, depth: int) -> str:
        """`TYPE name` as C declares it: pointers, arrays, function
        pointers around the name; an anonymous struct, union or enum
        written out in place at `depth`."""
        chain = []          # outermost first, down to the base (0: void)
        while True:
            chain.append(tid)
            t = self.b[tid] if tid else None
            if t is None or t.kind not in (B.PTR, B.CONST, B.VOLATILE, B.RESTRICT, B.TYPE_TAG,
                                           B.FUNC_PROTO, B.ARRAY):
                break
            tid = t.type
            if len(chain) > MAX_DEPTH:
                raise B.BTFError(f"{self.b.label}: a type's pointers, arrays or qualifiers loop: not a kernel's BTF")
        return self._chain(chain, name, depth)

    def _leading_qualifiers(self, chain: list) -> str:
        """The qualifiers right around the base type, written before it
        (`const char`): taken off the chain."""
        out = ""
        while chain and chain[-1] and self.b[chain[-1]].kind in QUALIFIERS:
            out += QUALIFIERS[self.b[chain.pop()].kind] + " "
        return out

    def _drop_qualifiers(self, chain: list) -> None:
        while chain and chain[-1] and self.b[chain[-1]].kind in B.MODIFIERS and self.b[chain[-1]].kind != B.TYPEDEF:
            chain.pop()

    def _chain(self, chain: list, name: str, depth: int) -> str:
        out = ""
        after_star = True       # a lone pointer in parentheses: (*name), no space
        while chain:
            tid = chain.pop()
            t = self.b[tid] if tid else None
            kind = t.kind if t is not None else 0
            if t is None:
                out += self._leading_qualifiers(chain) + "void"
            elif kind in (B.INT, B.FLOAT):
                out += self._leading_qualifiers(chain) + t.name
            elif kind in (B.STRUCT, B.UNION):
                out += self._leading_qualifiers(chain)
                out += self._struct(tid, depth) if not t.name else \
                    f"{'struct' if kind == B.STRUCT else 'union'} {self.name(tid)}"
            elif kind in (B.ENUM, B.ENUM64):
                out += self._leading_qualifiers(chain)
                out += self._enum(tid, depth) if not t.name else f"enum {self.name(tid)}"
            elif kind == B.FWD:
                out += self._leading_qualifiers(chain)
                # a forward declaration's kind flag: a union's
                out += f"{'union' if self._fwd_union(tid) else 'struct'} {t.name}"
            elif kind == B.TYPEDEF:
                out += self._leading_qualifiers(chain) + self.name(tid)
            elif kind == B.PTR:
                out += "*" if after_star else " *"
            elif kind in QUALIFIERS:
                out += " " + QUALIFIERS[kind]
            elif kind == B.TYPE_TAG:
                out += self._leading_qualifiers(chain) + f' __attribute__((btf_type_tag("{t.name}")))'
            elif kind == B.ARRAY:
                self._drop_qualifiers(chain)
                if not chain:
                    return out + self._name(name, after_star) + f"[{t.nelems}]"
                nested = self.b[chain[-1]].kind == B.ARRAY if chain[-1] else False
                if name and not after_star:
                    out += " "
                inner = self._chain(chain, name, depth)
                return out + (inner if nested else f"({inner})") + f"[{t.nelems}]"
            elif kind == B.FUNC_PROTO:
                self._drop_qualifiers(chain)
                if chain:
                    out += " (" + self._chain(chain, name, depth) + ")"
                else:
                    out += self._name(name, after_star)
                return out + self._params(t, depth)
            after_star = kind == B.PTR
        return out + self._name(name, after_star)

    @staticmethod
    def _name(name: str, after_star: bool) -> str:
        return (" " if name and not after_star else "") + name

    def _params(self, proto, depth: int) -> str:
        params = proto.members
        if not params or (len(params) == 1 and params[0][1] == 0):
            return "(void)"         # no parameters (clang's BTF: one of type void)
        out = []
        for i, (pname, ptype) in enumerate(params):
            if i == len(params) - 1 and ptype == 0:
                out.append("...")
                break
            out.append(self.decl(ptype, pname, depth))
        return "(" + ", ".join(out) + ")"

    def _fwd_union(self, tid: int) -> bool:
        import struct
        b = self.b
        if tid < b.first:
            return Printer(b.base)._fwd_union(tid)
        info = struct.unpack_from(b.e + "I", b._type_data, b._offsets[tid - b.first + 1] + 4)[0]
        return bool(info >> 31)
