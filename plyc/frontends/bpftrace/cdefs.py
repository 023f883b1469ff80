"""The script's own C definitions: `struct`, `union` and `enum` in the
preamble that stay active (bpftrace's tools keep theirs under `#ifndef
BPFTRACE_HAVE_BTF`, which plyc drops: preamble.py). pycparser parses them;
plyc lays them out as the target's C compiler would (plyc/layout.py, the
target's C ABI: arch.py), and the lowering reads members at
those offsets, not by CO-RE: the script says what the memory holds. As in
bpftrace 0.17, the script's definition of a name wins over the kernel's
BTF one (`struct file` defined in the script is the script's). Enumerators
are constants. Comments in a definition are blanked before pycparser
reads it (they keep their lines and columns); `__attribute__((packed))`
after a definition's closing brace lays it out with no padding, as C
compilers do, and `aligned(N)` (bare `aligned`: the target's biggest
alignment) raises its alignment and rounds its size up to it, in one
attribute or several; other attributes are refused by name. Bit-fields
(integer and enum types) are laid out by layout.py too, each Member
holding its width and first bit (structs.py reads them). A member's struct or
union type may be unnamed (`struct { int d; } c;`), and a member of such a
type may be anonymous: its members are the enclosing record's, at their
offsets (reading `.x`, offsetof(), printing by value, as 0.27 flattens
them). A member of a kernel
type held by value is refused as bpftrace refuses it (clang: "field has
incomplete type"): the script's definitions know kernel types only behind a
pointer.

A definition pycparser rejects is an error at the line and column it gives,
mapped back into the script (each definition is fed to it under a `#line`
of its own), or at the definition where pycparser gives none."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Optional

from ... import cparser
from ... import layout as L
from ...diag import Collector
from ...ir import fold
from ...ir.nodes import Span
from ...nesting import C_MESSAGE, c_too_deep
from . import ast as A

# Integer type names a definition may use, besides C's own: bpftrace's and
# the kernel's fixed-size ones. (size, signed); "ptr" is the target's
# pointer size (long, size_t).
TYPEDEFS = {
    **{f"{p}{n}": (n // 8, s) for n in (8, 16, 32, 64)
       for p, s in (("u", False), ("s", True), ("__u", False), ("__s", True),
                    ("uint", False), ("int", True))},
    **{f"uint{n}_t": (n // 8, False) for n in (8, 16, 32, 64)},
    **{f"int{n}_t": (n // 8, True) for n in (8, 16, 32, 64)},
    "size_t": ("ptr", False), "ssize_t": ("ptr", True), "uintptr_t": ("ptr", False),
    "pid_t": (4, True), "uid_t": (4, False), "gid_t": (4, False), "bool": (1, False),
    "umode_t": (2, False), "dev_t": (4, False), "loff_t": (8, True), "gfp_t": (4, False),
}


@dataclass
class Member:
    name: str
    offset: int
    size: int
    kind: str                  # int | ptr | array | struct
    signed: bool = False
    target: Optional[tuple] = None   # ptr: the pointee's words ("struct", "sock") or ("char",); struct,
                                     # a named enum's int: the same
    elem: Optional["Member"] = None  # array: the element (offset 0)
    count: int = 0                   # array: how many
    bits: int = 0                    # a bit-field's width (0: not one); offset is the byte of its first bit
    bit: int = 0                     # a bit-field: its first bit in that byte, in allocation order


@dataclass
class Record:
    """A struct or union the script defines."""
    words: tuple               # ("struct", "name")
    size: int
    align: int
    members: dict = field(default_factory=dict)
    span: Optional[Span] = None


COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
ATTRIBUTE = re.compile(r"__attribute__\s*\(\(((?:[^()]|\([^()]*\))*)\)\)")


def _blank(m) -> str:
    """A comment as spaces (its newlines kept); a literal as it is."""
    text = m.group()
    if text[0] in "\"'":
        return text
    return re.sub(r"[^\n]", " ", text)


ALIGNED = re.compile(r"aligned\s*(?:\(\s*(0[xX][0-9a-fA-F]+|\d+)\s*\))?$")


def strip(text: str) -> tuple:
    """(the definition with comments and its closing __attribute__s
    blanked, (whether it is packed, its aligned(N) or 0, None for a bare
    `aligned`), the span (start, end) of an attribute plyc does not know,
    or None)."""
    text = COMMENT.sub(_blank, text)
    packed, aligned, unknown = False, 0, None
    for m in ATTRIBUTE.finditer(text):
        words = [w.strip() for w in m.group(1).split(",")]
        closing = m.start() > text.rfind("}")     # the parser takes only attributes and ';' there
        for w in words:
            w = re.sub(r"^__(\w+)__", r"\1", w)
            a = ALIGNED.match(w) if closing else None
            if closing and w == "packed":
                packed = True
            elif a:
                n = int(a.group(1), 0) if a.group(1) else None
                if n is not None and (n < 1 or n & (n - 1)):
                    unknown = unknown or (m.start(), m.end())
                aligned = None if n is None or aligned is None else max(aligned, n)
            elif unknown is None:
                unknown = (m.start(), m.end())
        text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    return last_semicolons(text), (packed, aligned), unknown


ENUM_OPEN = re.compile(r"\benum(?:\s+[A-Za-z_]\w*)?\s*$")


def last_semicolons(text: str) -> str:
    """A struct's or union's last member given its `;` where the script left
    it out (`struct x { unsigned long x }`), as clang takes it with a
    warning, and so bpftrace; an enum's list has none. Put in a blank
    before the brace where there is one, so columns stay."""
    kinds, out = [], list(text)
    for i, c in enumerate(text):
        if c == "{":
            kinds.append("enum" if ENUM_OPEN.search(text, 0, i) else "record")
        elif c == "}" and kinds:
            if kinds.pop() != "record":
                continue
            j = i - 1
            while j >= 0 and text[j] in " \t\n":
                j -= 1
            if j < 0 or text[j] in ";{":
                continue
            blank = next((k for k in range(i - 1, j, -1) if text[k] in " \t"), None)
            if blank is not None:
                out[blank] = ";"
            else:
                out[i] = ";}"
    return "".join(out)


@dataclass
class Definitions:
    records: dict = field(default_factory=dict)     # words -> Record
    enums: dict = field(default_factory=dict)       # ("enum", name) -> size
    constants: dict = field(default_factory=dict)   # enumerator -> value
    enumerators: dict = field(default_factory=dict)  # ("enum", name) -> [(value, enumerator), ...]
    enum_of: dict = field(default_factory=dict)     # enumerator -> ("enum", name)

    def record(self, words: tuple) -> Optional[Record]:
        return self.records.get(tuple(words))


class DefinitionError(Exception):
    def __init__(self, message: str, coord=None):
        super().__init__(message)
        self.coord = coord


def _source(items: list) -> str:
    """The definitions as C: integer typedefs first, then each definition
    where it is in the script (`#line`, and its column's indent)."""
    out = [f"typedef {'signed' if s else 'unsigned'} {'long' if n == 'ptr' else _C_INT[n]} {name};"
           for name, (n, s) in TYPEDEFS.items()]
    for item in items:
        text = item.text.rstrip()
        out.append(f'# {item.span.line} "{_file(item.span.origin)}"')
        out.append(" " * (item.span.col - 1) + text + ("" if text.endswith(";") else ";"))
    return "\n".join(out) + "\n"


_C_INT = {1: "char", 2: "short", 4: "int", 8: "long long"}


C_TYPE_WORDS = frozenset("char short int long signed unsigned _Bool void float double struct union enum "
                         "const volatile".split())
MEMBER_START = re.compile(r"[{;]\s*(?:(?:const|volatile)\s+)*([A-Za-z_]\w*)")


def unknown_types(items: list, diag: Collector) -> bool:
    """Say which member's type is no name plyc knows (pycparser's own
    message for it varies by version, and names no place in version 3)."""
    found = False
    for item in items:
        if item.kind == "enum":
            continue
        for m in MEMBER_START.finditer(item.text):
            word = m.group(1)
            if word in C_TYPE_WORDS or word in TYPEDEFS:
                continue
            before = item.text[:m.start(1)]
            line = item.span.line + before.count("\n")
            col = (m.start(1) - before.rfind("\n")) if "\n" in before else item.span.col + m.start(1)
            diag.error(f"unknown type name '{word}'", Span(line, col, line, col + len(word), item.span.origin),
                       "types plyc knows in definitions besides C's: " + ", ".join(sorted(TYPEDEFS)))
            found = True
    return found


def parse(items: list, target: str, diag: Collector) -> Definitions:
    out = Definitions()
    packed, clean = {}, []
    for item in items:
        text, attrs, unknown = strip(item.text)
        if unknown is not None:
            diag.error("an __attribute__ other than packed or aligned(N) (N a power of two) after the closing "
                       "brace is not supported by plyc yet", _text_span(item, *unknown))
            return out
        clean.append(A.CText(item.kind, text, item.start, item.end, span=item.span))
        head = re.match(r"\s*(struct|union)\s+([A-Za-z_]\w*)", text)
        if attrs != (False, 0) and head:
            packed[(_file(item.span.origin), head.group(1), head.group(2))] = attrs
    items = clean
    if not items or unknown_types(items, diag):
        return out
    try:
        from pycparser import c_ast, c_parser
    except ImportError:
        diag.error("struct, union and enum definitions need pycparser (make setup installs it)", items[0].span)
        return out
    deep = False
    for item in items:
        where = c_too_deep(item.text)
        if where is not None:
            diag.error(C_MESSAGE, _text_span(item, *where))
            deep = True
    if deep:
        return out
    try:
        tree = cparser.parse(_source(items), "script")
    except c_parser.ParseError as err:
        diag.error(*_located(str(err), items))
        return out
    lay = _Layout(out, L.abi(target), c_ast)
    lay.packed = packed
    for ext in tree.ext:
        if isinstance(ext, c_ast.Typedef):
            continue
        try:
            lay.top(ext)
        except DefinitionError as err:
            span = _coord_span(err.coord, items) if err.coord is not None else None
            diag.error(str(err), span or _item_at(ext.coord, items))
    return out


def _text_span(item, start: int, end: int) -> Span:
    """The span of item.text[start:end] in the script."""
    before = item.text[:start]
    line = item.span.line + before.count("\n")
    col = start - before.rfind("\n") if "\n" in before else item.span.col + start
    return Span(line, col, line, col + (end - start), item.span.origin)


def _located(message: str, items: list) -> tuple:
    """pycparser's message at its line and column in the script."""
    head, _, detail = message.partition(": ")
    parts = head.split(":")
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        line, col = int(parts[1]), int(parts[2])
        span = Span(line, col, line, col + 1, _origin(parts[0], items))
    else:
        # no place given (pycparser 3 at some errors): the last definition
        # read, in the script's order, which is where it stopped
        span, detail = items[-1].span, message.partition(": ")[2] or message
    return f"this definition is not C that plyc can read ({detail.strip()})", span


def _coord_span(coord, items) -> Optional[Span]:
    if coord is None or coord.line is None:
        return None
    return Span(coord.line, coord.column or 1, coord.line, (coord.column or 1) + 1, _origin(coord.file, items))


def _item_at(coord, items) -> Span:
    for item in items:
        if coord is not None and item.span.line <= coord.line <= item.span.end_line and \
                coord.file == _file(item.span.origin):
            return item.span
    return items[0].span


def _file(origin) -> str:
    """The file name pycparser reads a definition under: the script's, or
    an imported file's (imports.py), so that its coordinates say which."""
    return "script" if origin is None else f"import{id(origin)}"


def _origin(name: str, items: list):
    return next((i.span.origin for i in items if _file(i.span.origin) == name), None)


# The largest struct, union or array a definition may make (C's int), so
# that sizes and offsets stay plain numbers in the generated C.
MAX_SIZE = (1 << 31) - 1


# An enumerator's value: exact (then held to 64 bits), plyc/ir/fold.py computing.
ENUMERATOR = fold.Rules(frozenset("+ - * << >> | & ^".split()), frozenset("-~+"))


class _Layout:
    def __init__(self, defs: Definitions, abi: L.ABI, c_ast):
        self.defs, self.abi, self.ptr, self.c = defs, abi, abi.ptr, c_ast
        self.packed: dict = {}          # (file, kind, name) of the definitions with attributes: (packed, aligned)
        self.top_words = None
        self.anonymous = 0              # unnamed member types so far

    def top(self, decl):
        t = decl.type
        if isinstance(t, (self.c.Struct, self.c.Union)):
            self.top_words = ("union" if isinstance(t, self.c.Union) else "struct", t.name or "")
            if not t.name:
                raise DefinitionError("a struct or union defined in the preamble needs a name", t.coord)
            self.record(t)
        elif isinstance(t, self.c.Enum):
            self.enum(t)
        else:
            raise DefinitionError("only struct, union and enum definitions can be in the preamble", decl.coord)

    def record(self, node) -> Record:
        words = ("union" if isinstance(node, self.c.Union) else "struct", node.name or "")
        if node.decls is None:
            rec = self.defs.records.get(words)
            if rec is None:
                raise DefinitionError(f"{' '.join(words)} is held by value before the script defines it: a "
                                      "member's type must be defined above it, and a kernel type can only be "
                                      "reached through a pointer, as in bpftrace (clang: field has incomplete "
                                      "type)", node.coord)
            return rec
        if not node.name:
            # a member's type with no name of its own (`struct { ... } a;`,
            # an anonymous member): kept under a name no script can write
            self.anonymous += 1
            words = (words[0], f"(anonymous {self.anonymous})")
        if words in self.defs.records:
            raise DefinitionError(f"{' '.join(words)} is defined twice", node.coord)
        rec = Record(words, 0, 1, span=None)
        # attributes: the top-level definition's own (not its members' types')
        attrs = (False, 0)
        if node.coord is not None and words == self.top_words:
            attrs = self.packed.get((node.coord.file, *words), attrs)
        pack, aligned = attrs[0], self.abi.biggest_align if attrs[1] is None else attrs[1]
        fields, placed = [], []
        for d in node.decls:
            if d.bitsize is not None:
                m, f = self.bitfield(d)
                placed.append((d, m))
                fields.append(f)
                continue
            if d.name is None and not isinstance(d.type, (self.c.Struct, self.c.Union)):
                raise DefinitionError("a member needs a name (only a struct or union member may be "
                                      "anonymous)", d.coord)
            if d.name is None and d.type.name:
                self.record(d.type)     # `struct t { ... };` inside: defines struct t, no member (C's)
                continue
            m, align = self.member(d.name or "", d.type)
            placed.append((d, m))
            fields.append(L.Field(m.size, align))
        lay = L.place(fields, self.abi, union=words[0] == "union", packed=pack, aligned=aligned)
        for (d, m), off, bit in zip(placed, lay.offsets, lay.bits):
            if m is None:
                continue                # an unnamed bit-field: padding
            m.offset, m.bit = off, bit % 8 if m.bits else 0
            # an anonymous struct's or union's members are the record's own,
            # at their place in it, as C (and 0.27, reading and printing) has them
            inner = self.defs.records[m.target].members.values() if d.name is None else [m]
            for x in inner:
                if x.name in rec.members:
                    raise DefinitionError(f"duplicate member '{x.name}'", d.coord)
                rec.members[x.name] = replace(x, offset=off + x.offset) if d.name is None else x
        rec.size, rec.align = lay.size, lay.align
        if rec.size > MAX_SIZE:
            raise DefinitionError(f"{' '.join(words)} is too large: {rec.size} bytes, at most {MAX_SIZE}",
                                  node.coord)
        self.defs.records[words] = rec
        return rec

    def enum(self, node) -> int:
        if node.values is not None:
            value, names = 0, []
            for en in node.values.enumerators:
                if en.value is not None:
                    value = self.constant(en.value)
                self.defs.constants[en.name] = value
                names.append((value, en.name))
                value += 1
            # an anonymous enum's enumerators print by name too (bpftrace 0.27),
            # under a name no script can write
            words = ("enum", node.name or f"(anonymous {len(self.defs.enumerators)})")
            self.defs.enums[words] = 4
            self.defs.enumerators[words] = names
            self.defs.enum_of.update((name, words) for _, name in names)
        elif ("enum", node.name) not in self.defs.enums:
            raise DefinitionError(f"enum {node.name} is used before it is defined", node.coord)
        return 4

    def const(self, e) -> int:
        c = self.c
        if isinstance(e, c.Constant) and e.type in ("int", "long int", "unsigned int", "long long int",
                                                    "unsigned long int", "unsigned long long int"):
            return int(e.value.rstrip("uUlL"), 0)
        if isinstance(e, c.ID) and e.name in self.defs.constants:
            return self.defs.constants[e.name]
        if isinstance(e, c.UnaryOp) and e.op in ENUMERATOR.unary:
            return fold.unary(e.op, self.const(e.expr), ENUMERATOR)
        if isinstance(e, c.BinaryOp) and e.op in ENUMERATOR.binary:
            a, b = self.const(e.left), self.const(e.right)
            if e.op in ("<<", ">>") and not 0 <= b < 64:
                raise DefinitionError(f"shift count {b} is out of range: it must be 0 to 63", e.coord)
            v = fold.binary(e.op, a, b, ENUMERATOR)
            if not -(1 << 63) <= v < 1 << 64:
                raise DefinitionError(f"the constant {v} does not fit in 64 bits", e.coord)
            return v
        raise DefinitionError("an enumerator's value must be a constant integer expression", e.coord)

    def constant(self, e) -> int:
        """A constant expression's value, which must fit in 64 bits."""
        v = self.const(e)
        if not -(1 << 63) <= v < 1 << 64:
            raise DefinitionError(f"the constant {v} does not fit in 64 bits", e.coord)
        return v

    def bitfield(self, d) -> tuple:
        """(Member, or None where unnamed, and its layout Field) of a
        bit-field: an integer or enum type, a width up to the type's."""
        what = f"bit-field '{d.name}'" if d.name else "an unnamed bit-field"
        if not isinstance(d.type, self.c.TypeDecl):
            raise DefinitionError(f"{what} must have an integer type", d.coord)
        m, align = self.member(d.name or "", d.type)
        if m.kind != "int":
            raise DefinitionError(f"{what} must have an integer type", d.coord)
        width = self.constant(d.bitsize)
        if not 0 <= width <= m.size * 8 or (width == 0 and d.name):
            raise DefinitionError(f"{what} has width {width}: from {0 if not d.name else 1} to "
                                  f"{m.size * 8} bits for its type", d.coord)
        placed = L.Field(m.size, align, bits=width, named=d.name is not None)
        return (replace(m, bits=width) if d.name else None), placed

    def member(self, name: str, t) -> tuple:
        """(Member at offset 0, its alignment) of declarator type t."""
        c = self.c
        if isinstance(t, c.PtrDecl):
            return Member(name, 0, self.ptr, "ptr", target=self.pointee(t.type)), self.ptr
        if isinstance(t, c.ArrayDecl):
            if t.dim is None:
                raise DefinitionError(f"array '{name}' needs a size", t.coord)
            n = self.constant(t.dim)
            if n < 0:
                raise DefinitionError(f"array '{name}' has a negative size ({n})", t.coord)
            elem, align = self.member(name, t.type)
            if elem.size * n > MAX_SIZE:
                raise DefinitionError(f"array '{name}' is too large: {elem.size * n} bytes, "
                                      f"at most {MAX_SIZE}", t.coord)
            return Member(name, 0, elem.size * n, "array", elem=elem, count=n), align
        if isinstance(t, c.FuncDecl):
            raise DefinitionError(f"member '{name}' is a function: a struct holds data (a pointer to one "
                                  f"is `int (*{name})(void)`)", t.coord)
        inner = t if isinstance(t, (c.Struct, c.Union)) else t.type     # an anonymous member's is bare
        if isinstance(inner, (c.Struct, c.Union)):
            rec = self.record(inner)
            return Member(name, 0, rec.size, "struct", target=rec.words), rec.align
        if isinstance(inner, c.Enum):
            self.enum(inner)
            words = ("enum", inner.name) if inner.name else None     # a named enum prints by name
            return Member(name, 0, 4, "int", signed=False, target=words), 4
        if not isinstance(inner, c.IdentifierType):
            raise DefinitionError(f"member '{name}' has a type plyc cannot lay out", t.coord)
        size, signed, align = self.integer(inner.names, t.coord)
        return Member(name, 0, size, "int", signed=signed), align

    def pointee(self, t) -> tuple:
        c = self.c
        if isinstance(t, c.PtrDecl):
            return ("void",)            # a pointer to a pointer: an address
        inner = t.type if isinstance(t, c.TypeDecl) else None
        if isinstance(inner, (c.Struct, c.Union)):
            return ("union" if isinstance(inner, c.Union) else "struct", inner.name)
        if isinstance(inner, c.IdentifierType) and inner.names[-1] == "char":
            return ("char",)
        return ("void",)

    def integer(self, names: list, coord) -> tuple:
        """(size, signed, alignment) of an integer type; plain char is
        signed, as bpftrace reads it."""
        words = [w for w in names if w not in ("const", "volatile")]
        if len(words) == 1 and words[0] in TYPEDEFS:
            n, s = TYPEDEFS[words[0]]
            sc = L.pointer(self.abi) if n == "ptr" else L.integer(self.abi, n, s)
            return sc.size, s, sc.align
        sc = L.scalar(self.abi, words)
        if sc is None or sc.kind != "int":
            raise DefinitionError(f"type '{' '.join(names)}' is not supported in a definition by plyc yet", coord)
        signed = sc.signed if words != ["char"] else True
        return sc.size, signed, sc.align
