"""C types and constants for argdist's specifiers.

A specifier names C types (`struct timespec *req`, `gfp_t flags`) and
constants (`flags & GFP_ATOMIC`). Where they come from depends on the probe:

- user probes (a library or program, USDT): the target's C headers, as its
  C compiler sees them (the build machine's /usr/include for x86_64, the
  cross compiler's or the sysroot's for others), plus the -I headers. They
  are preprocessed by that compiler and parsed with pycparser; struct
  layouts are plyc/layout.py's for the target's ABI, so a member read is a
  read of user memory at a known offset.
- kernel probes and tracepoints: types from the kernel's BTF (the checker
  reads them, with CO-RE); constants from the -I headers (and the headers
  argdist itself includes for some words of the specifier) when kernel
  headers are at hand, from BTF enumerators, and GFP flags from the
  ___GFP_*_BIT enumerators newer kernels have. See docs/argdist.md."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from pycparser import c_ast, c_parser

from ... import children, cparser
from ... import kernel_headers
from ... import layout as L
from ...ir import fold
from ...layout import ABI
from ...safefile import private_folder
from .cparse import char_constant, int_constant


class CTypeError(Exception):
    """A type or constant that can't be resolved: message and an optional note."""

    def __init__(self, message: str, note: Optional[str] = None):
        super().__init__(message)
        self.note = note


@dataclass(frozen=True)
class CType:
    kind: str                 # int | float | void | ptr | array | record | func
    size: int = 0
    align: int = 1
    signed: bool = False
    name: str = ""            # as C writes it
    target: Optional["CType"] = None   # ptr: pointee; array: element
    count: int = 0            # array elements
    key: str = ""             # record: its key in the headers ("struct timespec")
    kernel: bool = False      # record: a kernel type (BTF), not laid out here
    user: bool = False        # ptr: declared __user (kernel probes)

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    def is_string(self) -> bool:
        """char * / char[] (argdist reads these as strings)."""
        return self.kind in ("ptr", "array") and self.target is not None and \
            self.target.kind == "int" and self.target.size == 1

    def __str__(self) -> str:
        if self.kind == "ptr":
            return f"{self.target} *"
        if self.kind == "array":
            return f"{self.target}[{self.count}]"
        return self.name or self.kind


def Int(size: int, signed: bool, name: str = "") -> CType:
    return CType("int", size, size, signed, name or f"{'s' if signed else 'u'}{size * 8}")


VOID = CType("void", 1, 1, False, "void")

# Integer types argdist's users write (bcc has them from kernel headers), the
# same everywhere; `None` sizes are the target's long.
FIXED = {
    "u8": (1, False), "u16": (2, False), "u32": (4, False), "u64": (8, False),
    "s8": (1, True), "s16": (2, True), "s32": (4, True), "s64": (8, True),
    "__u8": (1, False), "__u16": (2, False), "__u32": (4, False), "__u64": (8, False),
    "__s8": (1, True), "__s16": (2, True), "__s32": (4, True), "__s64": (8, True),
    "__be16": (2, False), "__be32": (4, False), "__be64": (8, False),
    "__le16": (2, False), "__le32": (4, False), "__le64": (8, False),
    "uint8_t": (1, False), "uint16_t": (2, False), "uint32_t": (4, False), "uint64_t": (8, False),
    "int8_t": (1, True), "int16_t": (2, True), "int32_t": (4, True), "int64_t": (8, True),
    "bool": (1, False), "size_t": (None, False), "ssize_t": (None, True),
    "uintptr_t": (None, False), "intptr_t": (None, True),
}
# Kernel typedefs, for kernel probes when BTF doesn't say (the kernel's own
# definitions, the same on every architecture plyc builds for).
KERNEL_TYPEDEFS = {
    "loff_t": (8, True), "gfp_t": (4, False), "umode_t": (2, False), "fmode_t": (4, False),
    "dev_t": (4, False), "sector_t": (8, False), "blkcnt_t": (8, False), "pid_t": (4, True),
    "uid_t": (4, False), "gid_t": (4, False), "clockid_t": (4, True), "key_t": (4, True),
    "mode_t": (4, False), "ino_t": (None, False), "off_t": (None, True), "time_t": (None, True),
    "slab_flags_t": (4, False), "vm_fault_t": (4, False), "irqreturn_t": (4, True),
}


def basic(names: tuple, abi: ABI) -> Optional[CType]:
    """C's own arithmetic types: ('unsigned', 'long', 'int') -> u64 on LP64."""
    sc = L.scalar(abi, names)
    if sc is None:
        return None
    if sc.kind == "void":
        return VOID
    return CType(sc.kind, sc.size, sc.align, sc.signed, " ".join(names))


def fixed(name: str, abi: ABI, table: dict = FIXED) -> Optional[CType]:
    if name not in table:
        return None
    size, signed = table[name]
    sc = L.integer(abi, size or abi.ptr, signed)
    return CType("int", sc.size, sc.align, signed, name)


# --- struct layouts ------------------------------------------------------------

@dataclass
class Member:
    name: Optional[str]       # None: an anonymous struct/union member
    offset: int               # bytes
    type: CType
    bits: int = 0             # bitfield width (0: not a bitfield)


@dataclass
class Layout:
    key: str
    size: int
    align: int
    members: list = field(default_factory=list)

    def find(self, name: str, headers: "Headers") -> Optional[tuple]:
        """(offset, Member) of `name`, through anonymous members."""
        for m in self.members:
            if m.name == name:
                return m.offset, m
        for m in self.members:
            if m.name is None and m.type.kind == "record":
                sub = headers.layout(m.type).find(name, headers)
                if sub is not None:
                    return m.offset + sub[0], sub[1]
        return None

    def names(self) -> list:
        return [m.name for m in self.members if m.name]


# Attributes pycparser can't read are blanked out of the preprocessed text;
# those that change a layout (packed, aligned, mode) leave a marker member
# or a typedef note behind (see _attributes()).
MARK_PACKED = "__plyc_attr_packed"
MARK_ALIGNED = "__plyc_attr_aligned_"
MARK_MPACKED = "__plyc_member_packed"
MARK_MALIGNED = "__plyc_member_aligned_"
MODES = {"QI": 1, "HI": 2, "SI": 4, "DI": 8, "TI": 16}


def _attributes(text: str) -> tuple:
    """The text without __attribute__((...)), with layout markers, and the
    typedef names given a __mode__."""
    out_marks: list = []          # (position, text to insert)
    modes: dict = {}
    chars = list(text)
    # Brace depth at every attribute, in one pass.
    spots = [m.start() for m in re.finditer(r"\b__attribute__\b", text)]
    if not spots:
        return text, modes
    depth_at, depth, si = {}, 0, 0
    for i, c in enumerate(text):
        while si < len(spots) and spots[si] == i:
            depth_at[i] = depth
            si += 1
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if si >= len(spots):
            break
    for start in spots:
        i = start + len("__attribute__")
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text) or text[i] != "(":
            continue
        d, j = 0, i
        while j < len(text):
            if text[j] == "(":
                d += 1
            elif text[j] == ")":
                d -= 1
                if d == 0:
                    break
            j += 1
        body = text[i:j + 1]
        for k in range(start, j + 1):
            if chars[k] != "\n":
                chars[k] = " "
        packed = re.search(r"\b__packed__\b|\bpacked\b", body)
        aligned = re.search(r"\b(?:__aligned__|aligned)\b\s*(?:\(\s*(\d+)\s*\))?", body)
        mode = re.search(r"\b__mode__\s*\(\s*_*(\w+?)_*\s*\)", body)
        before = text[:start].rstrip()
        if mode:
            name = re.search(r"(\w+)\s*$", before)
            if name:
                modes[name.group(1)] = mode.group(1)
        if not (packed or aligned):
            continue
        n = int(aligned.group(1)) if aligned and aligned.group(1) else 0     # 0: the target's biggest
        record_marks = (f" int {MARK_PACKED};" if packed else "") + (f" int {MARK_ALIGNED}{n};" if aligned else "")
        if before.endswith("}"):
            # After a record's body: mark the record, right after its '{'.
            d, k = 0, len(before) - 1
            while k >= 0:
                if text[k] == "}":
                    d += 1
                elif text[k] == "{":
                    d -= 1
                    if d == 0:
                        break
                k -= 1
            if k >= 0:
                mark = record_marks
                out_marks.append((k + 1, mark))
        elif re.search(r"\b(struct|union)\s*$", before) or re.search(r"\b(struct|union)\s+\w+\s*$", before):
            k = text.find("{", j)
            if k != -1:
                mark = record_marks
                out_marks.append((k + 1, mark))
        elif depth_at.get(start, 0) > 0:
            # A member's: mark the member, before its declaration.
            k = len(before) - 1
            d = 0
            while k >= 0:
                c = text[k]
                if c in ")]":
                    d += 1
                elif c in "([":
                    d -= 1
                elif d == 0 and c in ";{":
                    break
                k -= 1
            mark = (f" int {MARK_MPACKED};" if packed else "") + (f" int {MARK_MALIGNED}{n};" if aligned else "")
            out_marks.append((k + 1, mark))
    result = "".join(chars)
    for pos, mark in sorted(out_marks, reverse=True):
        result = result[:pos] + mark + result[pos:]
    return result, modes


class Headers:
    """C declarations parsed from preprocessed text: typedefs, records,
    enumerators; types resolved and records laid out for one ABI."""

    def __init__(self, abi: ABI, text: str = ""):
        self.abi = abi
        self.typedefs: dict = {}      # name -> pycparser type node
        self.records: dict = {}       # "struct x" -> pycparser Struct/Union with decls
        self.enumerators: dict = {}   # name -> value
        self.modes: dict = {}
        self._anon: dict = {}         # id(node) -> key
        self._layouts: dict = {}
        self._resolved: dict = {}
        if text:
            self.add(text)

    def add(self, text: str):
        text, modes = _attributes(text)
        self.modes.update(modes)
        try:
            unit = cparser.parse(PARSE_PREAMBLE + text, "<headers>")
        except c_parser.ParseError as err:
            raise CTypeError(f"the target's C headers can't be parsed: {err}") from None
        for ext in unit.ext:
            self._collect(ext)

    def _collect(self, node):
        if isinstance(node, c_ast.Typedef):
            self.typedefs.setdefault(node.name, node.type)
        for n in _nodes(node):
            if isinstance(n, (c_ast.Struct, c_ast.Union)) and n.decls is not None and n.name:
                self.records.setdefault(f"{_kw(n)} {n.name}", n)
            elif isinstance(n, c_ast.Enum) and n.values is not None:
                value = -1
                for e in n.values.enumerators:
                    try:
                        value = self.evaluate(e.value) if e.value is not None else value + 1
                    except (NotConstant, CTypeError):
                        break       # this one and the ones after it are unknown
                    self.enumerators.setdefault(e.name, value)

    # --- types ---------------------------------------------------------------

    def typedef(self, name: str) -> Optional[CType]:
        if name in self._resolved:
            return self._resolved[name]
        node = self.typedefs.get(name)
        if node is None:
            return None
        self._resolved[name] = None      # a typedef that refers to itself
        ct = self.resolve(node)
        if name in self.modes and ct.kind == "int":
            size = MODES.get(self.modes[name].upper(), self.abi.ptr if self.modes[name] in
                             ("word", "pointer") else ct.size)
            ct = replace(ct, size=size, align=L.integer(self.abi, size, ct.signed).align)
        ct = replace(ct, name=name) if ct.kind in ("int", "float") else ct
        self._resolved[name] = ct
        return ct

    def resolve(self, node, lookup: Optional[Callable] = None) -> CType:
        """The CType of a pycparser type node; `lookup` resolves names these
        headers don't define."""
        if isinstance(node, (c_ast.TypeDecl, c_ast.Typename)):
            return self.resolve(node.type, lookup)
        if isinstance(node, c_ast.Decl):
            return self.resolve(node.type, lookup)
        if isinstance(node, c_ast.IdentifierType):
            names = tuple(node.names)
            ct = basic(names, self.abi)
            if ct is None and len(names) == 1:
                ct = self.typedef(names[0]) or fixed(names[0], self.abi) or (lookup and lookup(names[0]))
            if ct is None:
                raise CTypeError(f"unknown type '{' '.join(names)}'")
            return ct
        if isinstance(node, c_ast.PtrDecl):
            return CType("ptr", self.abi.ptr, self.abi.ptr, False, "", self.resolve(node.type, lookup))
        if isinstance(node, c_ast.ArrayDecl):
            elem = self.resolve(node.type, lookup)
            n = self.evaluate(node.dim) if node.dim is not None else 0
            return CType("array", elem.size * n, elem.align, False, "", elem, n)
        if isinstance(node, (c_ast.Struct, c_ast.Union)):
            key = self._record_key(node)
            return CType("record", 0, 1, False, key, key=key)
        if isinstance(node, c_ast.Enum):
            if node.values is not None:
                self._collect(node)
            return Int(4, False, f"enum {node.name}" if node.name else "enum")
        if isinstance(node, c_ast.FuncDecl):
            return CType("func", 1, 1, False, "function")
        raise CTypeError(f"unsupported type ({type(node).__name__})")

    def _record_key(self, node) -> str:
        if node.name:
            key = f"{_kw(node)} {node.name}"
            if node.decls is not None:
                self.records.setdefault(key, node)
            return key
        key = self._anon.get(id(node))
        if key is None:
            key = f"{_kw(node)} (anonymous {len(self._anon) + 1})"
            self._anon[id(node)] = key
            self.records[key] = node
        return key

    def layout(self, ct: CType) -> Layout:
        key = ct.key
        if key in self._layouts:
            return self._layouts[key]
        node = self.records.get(key)
        if node is None:
            raise CTypeError(f"{key} is not defined in the target's C headers",
                             "user probes' types come from the C library's headers and the -I headers")
        packed, aligned = False, 0
        next_align, next_packed = 0, False
        fields, decls = [], []
        for d in node.decls or []:
            if d.name == MARK_PACKED:
                packed = True
                continue
            if d.name and d.name.startswith(MARK_ALIGNED):
                aligned = max(aligned, self._aligned(d.name[len(MARK_ALIGNED):]))
                continue
            if d.name == MARK_MPACKED:
                next_packed = True
                continue
            if d.name and d.name.startswith(MARK_MALIGNED):
                next_align = self._aligned(d.name[len(MARK_MALIGNED):])
                continue
            mt = self.resolve(d.type)
            if mt.kind == "record":
                sub = self.layout(mt)
                mt = replace(mt, size=sub.size, align=sub.align)
            elif mt.kind == "array" and _elem(mt).kind == "record":
                sub = self.layout(_elem(mt))
                mt = _sized_array(mt, sub)
            width = self.evaluate(d.bitsize) if d.bitsize is not None else None
            fields.append(L.Field(mt.size, mt.align, width, named=d.name is not None, packed=next_packed,
                                  aligned=next_align))
            decls.append((d.name, mt, width))
            next_align, next_packed = 0, False
        placed = L.place(fields, self.abi, isinstance(node, c_ast.Union), packed, aligned)
        # unnamed bit-fields are padding; an anonymous struct or union is a member
        members = [Member(name, off, mt, width or 0) for (name, mt, width), off in zip(decls, placed.offsets)
                   if name is not None or width is None]
        lay = Layout(key, placed.size, placed.align, members)
        self._layouts[key] = lay
        return lay

    def _aligned(self, n: str) -> int:
        """An aligned attribute's number; a bare one's (0) is the target's biggest."""
        return int(n) or self.abi.biggest_align

    def complete(self, ct: CType) -> CType:
        """A record's CType with its size and alignment."""
        if ct.kind == "record" and not ct.kernel:
            lay = self.layout(ct)
            return replace(ct, size=lay.size, align=lay.align)
        return ct

    # --- constants -------------------------------------------------------------

    def evaluate(self, node, ident: Optional[Callable] = None) -> int:
        return evaluate(node, self.abi, lambda n: self.enumerators.get(n) if ident is None else ident(n),
                        lambda t: self.complete(self.resolve(t)))


PARSE_PREAMBLE = ("typedef char *__builtin_va_list;\n"
                  "typedef struct { int __plyc_attr_aligned_16; char __b[16]; } __int128_t, __uint128_t;\n"
                  "typedef long double _Float128; typedef float _Float32; typedef double _Float64;\n"
                  "typedef double _Float32x; typedef long double _Float64x;\n")


def _elem(ct: CType) -> CType:
    while ct.kind == "array":
        ct = ct.target
    return ct


def _sized_array(ct: CType, lay: Layout) -> CType:
    if ct.kind != "array":
        return replace(ct, size=lay.size, align=lay.align)
    inner = _sized_array(ct.target, lay)
    return replace(ct, target=inner, size=inner.size * ct.count, align=inner.align)


def _kw(node) -> str:
    return "union" if isinstance(node, c_ast.Union) else "struct"


def _nodes(node):
    yield node
    for _, child in node.children():
        yield from _nodes(child)


# --- constant expressions ---------------------------------------------------------

class NotConstant(Exception):
    def __init__(self, message: str, name: Optional[str] = None):
        super().__init__(message)
        self.name = name


# C's arithmetic a macro's value may use besides shifts, comparisons and / %
# (their operands' types and C's rules are here; the arithmetic plyc/ir/fold.py's).
C_ARITH = ("+", "-", "*", "&", "|", "^")


def evaluate(node, abi: ABI, ident: Callable, sizeof: Callable) -> int:
    """The value of a C integer constant expression. Values carry a size and
    a sign as C's do, so `~0U` is 0xffffffff."""
    v, size, signed = _eval(node, abi, ident, sizeof)
    return v


def _norm(v: int, size: int, signed: bool) -> tuple:
    return fold.wrap(v, size * 8, signed), size, signed


def _eval(node, abi, ident, sizeof) -> tuple:
    if isinstance(node, c_ast.Constant):
        if node.type == "char":
            return char_constant(node.value), 4, True
        if node.type == "string" or node.type in ("float", "double"):
            raise NotConstant(f"{node.value} is not an integer")
        try:
            v, unsigned, longs = int_constant(node.value)
        except ValueError:
            raise NotConstant(f"{node.value} is not an integer") from None
        size = 8 if longs == 2 else abi.ptr if longs == 1 else 4
        if size == 4 and v >= 1 << 31 and not unsigned:
            if v < 1 << 32 and node.value[:2].lower() == "0x":
                unsigned = True
            else:
                size = 8
        if size < 8 and v >= 1 << (size * 8):
            size = 8
        if v >= 1 << 63:
            unsigned = True
        return _norm(v, size, not unsigned)
    if isinstance(node, c_ast.ID):
        v = ident(node.name)
        if v is None:
            raise NotConstant(f"'{node.name}' is not a constant", node.name)
        return _norm(v, 8, v < 1 << 63) if not isinstance(v, tuple) else v
    if isinstance(node, c_ast.UnaryOp):
        if node.op == "sizeof":
            target = node.expr
            if isinstance(target, c_ast.Typename):
                return sizeof(target).size, abi.ptr, False
            raise NotConstant("sizeof of an expression is not supported")
        v, size, signed = _eval(node.expr, abi, ident, sizeof)
        size, signed = max(size, 4), signed if size >= 4 else True
        if node.op == "-":
            return _norm(-v, size, signed)
        if node.op == "+":
            return v, size, signed
        if node.op == "~":
            return _norm(~v, size, signed)
        if node.op == "!":
            return int(not v), 4, True
        raise NotConstant(f"'{node.op}' in a constant")
    if isinstance(node, c_ast.BinaryOp):
        a, asz, asg = _eval(node.left, abi, ident, sizeof)
        b, bsz, bsg = _eval(node.right, abi, ident, sizeof)
        op = node.op
        if op in ("&&", "||"):
            return int(bool(a) and bool(b) if op == "&&" else bool(a) or bool(b)), 4, True
        if op in ("<<", ">>"):
            size, signed = max(asz, 4), asg if asz >= 4 else True
            if not 0 <= b < size * 8:
                # C leaves it undefined (and 1 << 10**12 would fill memory)
                raise NotConstant(f"shift count {b} out of range")
            return _norm(fold.BINARY[op](a, b), size, signed)
        size = max(asz, bsz, 4)
        signed = (asg or asz < 4) and (bsg or bsz < 4) if asz == bsz or max(asz, bsz) < 4 else \
            (asg if asz > bsz else bsg)
        ua, ub = (a if signed else a & ((1 << size * 8) - 1)), (b if signed else b & ((1 << size * 8) - 1))
        if op in ("==", "!=", "<", "<=", ">", ">="):
            res = {"==": ua == ub, "!=": ua != ub, "<": ua < ub, "<=": ua <= ub, ">": ua > ub,
                   ">=": ua >= ub}[op]
            return int(res), 4, True
        if op in ("/", "%"):
            if ub == 0:
                raise NotConstant("division by zero")
            q = abs(ua) // abs(ub) * (1 if (ua < 0) == (ub < 0) else -1)
            return _norm(q if op == "/" else ua - q * ub, size, signed)
        if op not in C_ARITH:
            raise NotConstant(f"'{op}' in a constant")
        return _norm(fold.BINARY[op](ua, ub), size, signed)
    if isinstance(node, c_ast.TernaryOp):
        c = _eval(node.cond, abi, ident, sizeof)[0]
        return _eval(node.iftrue if c else node.iffalse, abi, ident, sizeof)
    if isinstance(node, c_ast.Cast):
        v, size, signed = _eval(node.expr, abi, ident, sizeof)
        try:
            ct = sizeof(node.to_type)
        except CTypeError:
            return v, size, signed     # a type these headers don't know: as is
        if ct.kind == "int":
            return _norm(v, ct.size, ct.signed)
        if ct.kind == "ptr":
            return _norm(v, ct.size, False)
        return v, size, signed
    raise NotConstant(f"not a constant ({type(node).__name__})")


# --- preprocessing ---------------------------------------------------------------

# What pycparser can't read: GNU keywords (attributes are handled apart).
CPP_DEFINES = ["-D__extension__=", "-D__asm__(x)=", "-D__asm(x)=", "-D__restrict=", "-D__restrict__=",
               "-D__inline=", "-D__inline__=", "-D__volatile__=", "-D__const=const", "-D__signed__=signed",
               "-D_Noreturn=", "-D__builtin_offsetof(t,m)=0"]

# The user-space headers plyc reads for user probes (the -I headers too).
USER_HEADERS = (
    "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "unistd.h", "fcntl.h", "time.h",
    "sys/types.h", "sys/stat.h", "sys/time.h", "sys/uio.h", "sys/socket.h", "sys/un.h", "sys/mman.h",
    "sys/wait.h", "sys/resource.h", "sys/select.h", "sys/epoll.h", "sys/ioctl.h", "sys/utsname.h",
    "netinet/in.h", "arpa/inet.h", "netdb.h", "poll.h", "signal.h", "pthread.h", "semaphore.h",
    "sched.h", "dirent.h", "dlfcn.h", "errno.h", "pwd.h", "grp.h", "termios.h", "locale.h",
)

# argdist's own automatic includes: a kernel header for words of the
# specifier (with kernel headers at hand, plyc does the same).
AUTO_INCLUDES = (("linux/time.h", ("time",)), ("linux/fs.h", ("fs", "file")),
                 ("linux/blkdev.h", ("bio", "request")), ("linux/slab.h", ("alloc",)))

QUOTES = '<>"'


@dataclass
class Preprocessor:
    """A C compiler's preprocessor with the flags for one header set."""
    cc: list
    flags: list
    headers: list           # #include lines' targets: "<stdio.h>" or "\"/abs/path.h\""
    verbose: bool = False

    def source(self, extra: str = "") -> str:
        return "".join(f"#include {h}\n" for h in self.headers) + extra

    def run(self, extra: str = "", args: tuple = ()) -> str:
        with private_folder("plyc-argdist-") as tmp:
            src = Path(tmp) / "h.c"
            src.write_text(self.source(extra))
            cmd = [*self.cc, "-E", *self.flags, *args, str(src)]
            if self.verbose:
                print("+ " + " ".join(cmd), flush=True)
            proc = children.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip())
            raise CTypeError(re.sub(r"^.*?h\.c:\d+:\d+: ", "", first.strip()))
        return proc.stdout

    def macros(self) -> dict:
        out = {}
        for line in self.run(args=("-dM",)).splitlines():
            m = re.match(r"#define (\w+)(\([^)]*\))?\s?(.*)", line)
            if m:
                out[m.group(1)] = (m.group(2), m.group(3))
        return out

    def expand(self, names: list) -> dict:
        """The expansion of each object-like macro in `names`."""
        marks = "".join(f"\n__plyc_mark_{i} = {n} ;\n" for i, n in enumerate(names))
        text = self.run(marks, args=("-P",))
        out = {}
        for i, n in enumerate(names):
            m = re.search(rf"__plyc_mark_{i} = (.*?) ;\s*$", text, re.M | re.S)
            if m:
                out[n] = " ".join(m.group(1).split())
        return out


def header_problem(name: str) -> Optional[str]:
    """Why `name` cannot be written in an #include line, or None. The
    preprocessor reads a header name as it is, with no escapes: a quote, a
    `>`, a backslash or a control character (a newline would end the line and
    start another) cannot be expressed, so such a name is refused."""
    bad = sorted({c for c in name if c in '"<>\\' or ord(c) < 32 or ord(c) == 127})
    if not bad:
        return None
    shown = " ".join(repr(c) for c in bad)
    return f"a header's name or path with {shown} in it cannot be written in an #include line"


def quoted_header(path: str, name: str) -> str:
    problem = header_problem(path)
    if problem:
        raise CTypeError(f"-I {shown_name(name)}: {problem}" + (f" ({shown_name(path)})" if path != name else ""))
    return f'"{path}"'


def shown_name(name: str) -> str:
    """name in a message: printable, every other character escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def resolve_header(name: str, search: list) -> Optional[str]:
    """The #include target for an -I header: as argdist does, a path when
    it starts with '.' or '/', else a name on the include path; a name
    found relative to the current directory is taken as a path. A name or
    path the #include line cannot hold is an error (header_problem)."""
    problem = header_problem(name)
    if problem:
        raise CTypeError(f"-I {shown_name(name)}: {problem}")
    if name.startswith((".", "/")):
        p = os.path.abspath(name)
        return quoted_header(p, name) if os.path.exists(p) else None
    if os.path.exists(name):
        return quoted_header(os.path.abspath(name), name)
    for d in search:
        if (Path(d) / name).exists():
            return f"<{name}>"
    return None


def kernel_tree(explicit: Optional[str], target: str, native: bool, btf: Optional[str]) -> Optional[tuple]:
    """(source dir, build dir) of the kernel headers to use, or None: the
    --kernel-headers tree, else (a native build for this machine's kernel)
    /lib/modules/$(uname -r)/build as Debian's linux-headers installs it."""
    cand = explicit
    if cand is None and native and not btf:
        cand = f"/lib/modules/{os.uname().release}/build"
    if not cand or not os.path.isdir(cand):
        if explicit:
            raise CTypeError(f"--kernel-headers {explicit}: no such directory")
        return None
    build = os.path.realpath(cand)
    src = build
    if not os.path.isdir(os.path.join(build, "include", "linux")):
        # Debian splits a tree in two: linux-headers-V-ARCH includes -common.
        mk = Path(build, "Makefile")
        m = re.search(r"^include\s+(\S+)/Makefile", mk.read_text(errors="replace"), re.M) if mk.exists() else None
        if m and os.path.isdir(os.path.join(m.group(1), "include", "linux")):
            src = m.group(1)
        else:
            commons = sorted(Path(build).parent.glob(re.sub(r"-[^-]+$", "", Path(build).name) + "-common"))
            if commons:
                src = str(commons[0])
            elif explicit:
                raise CTypeError(f"--kernel-headers {explicit}: no include/linux in it")
            else:
                return None
    return src, build


def kernel_flags(tree: tuple, target: str, cc: list) -> list:
    """The compiler's own headers, then the kernel tree's (kernel_headers.py)."""
    proc = children.run([*cc, "-print-file-name=include"], capture_output=True, text=True)
    return ["-nostdinc", "-isystem", proc.stdout.strip(), *kernel_headers.flags(*tree, target)]


def include_dirs(cc: list, flags: list) -> list:
    """Where `cc` looks for <headers>."""
    proc = children.run([*cc, *flags, "-E", "-v", "-x", "c", "/dev/null", "-o", "/dev/null"],
                          capture_output=True, text=True)
    dirs, on = [], False
    for line in proc.stderr.splitlines():
        if line.startswith("#include <...>"):
            on = True
        elif line.startswith("End of search list"):
            break
        elif on:
            dirs.append(line.strip())
    return dirs + [f[2:] for f in flags if f.startswith("-I")]


# --- the two kinds of probes ----------------------------------------------------

class UserDomain:
    """Types and constants of user programs: the target's C headers."""
    user = True

    def __init__(self, abi: ABI, compiler: Callable, includes: list, verbose: bool = False):
        self.abi = abi
        self.compiler = compiler          # () -> (cc argv, flags), found when first needed
        self.includes = includes          # -I headers as given
        self.verbose = verbose
        self._headers: Optional[Headers] = None
        self._light = Headers(abi)
        self._pp: Optional[Preprocessor] = None
        self._macros: Optional[dict] = None
        self._consts: dict = {}

    def preprocessor(self) -> Preprocessor:
        if self._pp is None:
            cc, flags = self.compiler()
            search = include_dirs(cc, flags)
            headers = [f"<{h}>" for h in USER_HEADERS if any((Path(d) / h).exists() for d in search)]
            for name in self.includes:
                found = resolve_header(name, search)
                if found is None:
                    raise CTypeError(f"-I {name}: no such header", "looked in the current directory and in "
                                     + ", ".join(search))
                headers.append(found)
            self._pp = Preprocessor(cc, ["-std=gnu11", *flags, *CPP_DEFINES], headers, self.verbose)
        return self._pp

    @property
    def headers(self) -> Headers:
        if self._headers is None:
            pp = self.preprocessor()
            try:
                self._headers = Headers(self.abi, pp.run(args=("-P",)))
            except CTypeError:
                # Some C library's header pycparser can't read: take the
                # headers one by one, leaving out the C library's that fail
                # (an -I header that fails is an error).
                h = Headers(self.abi)
                for i, inc in enumerate(pp.headers):
                    one = Preprocessor(pp.cc, pp.flags, [inc], self.verbose)
                    try:
                        h.add(one.run(args=("-P",)))
                    except CTypeError as err:
                        if i >= len(pp.headers) - len(self.includes):
                            raise CTypeError(f"-I {self.includes[i - len(pp.headers)]}: {err}") from None
                self._headers = h
        return self._headers

    def named(self, name: str) -> Optional[CType]:
        """A type name: fixed-width names first (no headers needed), then the
        headers', then the kernel's usual typedefs (argdist compiles user
        probes with kernel headers too: `gfp_t`, `loff_t`)."""
        return fixed(name, self.abi) or self.headers.typedef(name) or fixed(name, self.abi, KERNEL_TYPEDEFS)

    def resolve(self, node) -> CType:
        # Fixed-size names need no headers; the rest are read when first named.
        return self._light.resolve(node, self.named)

    def layout(self, ct: CType) -> Layout:
        return self.headers.layout(ct)

    def constant(self, name: str) -> int:
        if name in self._consts:
            return self._consts[name]
        value = None
        if self._macros is None:
            self._macros = self.preprocessor().macros()
        if name in self._macros:
            value = self._macro_value(name)
        elif name in self.headers.enumerators:
            value = self.headers.enumerators[name]
        if value is None:
            raise CTypeError(f"'{name}' is not a parameter or a constant of the target's C headers",
                             "constants come from " + ", ".join(self.includes + ["the C library's headers"])
                             + "; name another header with -I HEADER")
        self._consts[name] = value
        return value

    def _macro_value(self, name: str) -> int:
        args, _ = self._macros[name]
        if args is not None:
            raise CTypeError(f"'{name}' is a function-like macro")
        text = self.preprocessor().expand([name]).get(name, "")
        return eval_text(text, name, self.abi, lambda n: self.headers.enumerators.get(n),
                         lambda t: self.headers.complete(self.resolve(t)), self.headers.typedefs.keys())


def eval_text(text: str, name: str, abi: ABI, ident: Callable, sizeof: Callable, typenames) -> int:
    """The value of a macro's expansion."""
    from .cparse import CSyntaxError, cast_names, parse_expr
    try:
        parsed = parse_expr(text, set(typenames) | cast_names(text, set()) | set(FIXED))
    except CSyntaxError:
        raise CTypeError(f"'{name}' is a macro whose value is not a constant: {text}") from None
    try:
        return evaluate(parsed.node, abi, ident, sizeof)
    except (NotConstant, CTypeError) as err:
        raise CTypeError(f"'{name}' expands to '{text}', whose value plyc can't compute: {err}") from None


class KernelDomain:
    """Types and constants of the kernel: BTF, and kernel headers for macros."""
    user = False

    def __init__(self, abi: ABI, target: str, btf_path: Optional[str], compiler: Callable, includes: list,
                 tree: Callable, spec_text: str, verbose: bool = False):
        self.abi = abi
        self.target = target
        self.btf_path = btf_path
        self.compiler = compiler      # () -> (cc argv, flags)
        self.includes = includes
        self.tree = tree              # () -> (source dir, build dir) of kernel headers, or None
        self.spec_text = spec_text
        self.verbose = verbose
        self._pp: Optional[Preprocessor] = None
        self._pp_error: Optional[str] = None
        self._pp_done = False
        self._macros: Optional[dict] = None
        self._btf = None

    @property
    def btf(self):
        if self._btf is None:
            from ...btf import load
            self._btf = load(self.btf_path)
        return self._btf

    def named(self, name: str) -> Optional[CType]:
        """A type name: argdist's usual ones without reading BTF, else the
        kernel's typedef of that name."""
        ct = fixed(name, self.abi) or fixed(name, self.abi, KERNEL_TYPEDEFS)
        if ct is not None:
            return ct
        try:
            b = self.btf
        except Exception:
            return None
        from ... import btf as B
        tid = b.find(B.TYPEDEF, name)
        return self._from_btf(b, tid, name) if tid is not None else None

    def _from_btf(self, b, tid: int, name: str = "") -> Optional[CType]:
        from ... import btf as B
        t = b[b.strip(tid)]
        if t.kind == B.INT:
            return Int(t.size, t.signed, name or t.name)
        if t.kind in (B.ENUM, B.ENUM64):
            return Int(t.size, t.signed, name)
        if t.kind == B.PTR:
            inner = b[b.strip(t.type)]
            if inner.kind in (B.STRUCT, B.UNION) and inner.name:
                kw = "struct" if inner.kind == B.STRUCT else "union"
                rec = CType("record", 0, 1, False, f"{kw} {inner.name}", key=f"{kw} {inner.name}", kernel=True)
                return CType("ptr", self.abi.ptr, self.abi.ptr, False, "", rec)
            if inner.kind == B.INT and inner.size == 1:
                return CType("ptr", self.abi.ptr, self.abi.ptr, False, "", Int(1, inner.signed, "char"))
            return CType("ptr", self.abi.ptr, self.abi.ptr, False, "", VOID)
        if t.kind in (B.STRUCT, B.UNION) and t.name:
            kw = "struct" if t.kind == B.STRUCT else "union"
            return CType("record", t.size, 1, False, f"{kw} {t.name}", key=f"{kw} {t.name}", kernel=True)
        return None

    def resolve(self, node) -> CType:
        h = Headers(self.abi)
        ct = h.resolve(node, self.named)
        return _kernelize(ct)

    # --- constants ---------------------------------------------------------------

    def preprocessor(self) -> Optional[Preprocessor]:
        """The -I headers (and argdist's automatic ones), preprocessed against
        the kernel headers when there are some, else the target's UAPI
        headers (linux-libc-dev)."""
        if self._pp_done:
            return self._pp
        self._pp_done = True
        cc, base_flags = self.compiler()
        tree = self.tree()
        if tree is not None:
            flags = kernel_flags(tree, self.target, cc)
        else:
            flags = ["-std=gnu11", *base_flags]
        search = include_dirs(cc, flags)
        headers = []
        for name in self.includes:
            found = resolve_header(name, search)
            if found is None:
                self._pp_error = f"-I {name}: no such header (looked in the current directory and in " + \
                    ", ".join(search) + ")"
                continue
            headers.append(found)
        if tree is not None:
            for name, words in AUTO_INCLUDES:
                if any(w in self.spec_text for w in words) and resolve_header(name, search):
                    headers.append(f"<{name}>")
        if not headers:
            return None
        pp = Preprocessor(cc, [*flags, *CPP_DEFINES], headers, self.verbose)
        try:
            pp.run(args=("-dM",))
        except CTypeError as err:
            # Keep the headers that work on their own.
            good = []
            for h in headers:
                try:
                    Preprocessor(cc, pp.flags, [h]).run(args=("-dM",))
                    good.append(h)
                except CTypeError as e:
                    self._pp_error = f"-I {h.strip(QUOTES)}: {e}"
            if not good:
                self._pp_error = self._pp_error or str(err)
                return None
            pp = Preprocessor(cc, pp.flags, good, self.verbose)
        self._pp = pp
        return pp

    def enumerator(self, name: str) -> Optional[int]:
        try:
            found = self.btf.enumerator(name)
        except Exception:
            return None
        return None if found is None else found[0]

    def constant(self, name: str) -> int:
        pp = self.preprocessor()
        if pp is not None:
            if self._macros is None:
                self._macros = pp.macros()
            if name in self._macros:
                args, _ = self._macros[name]
                if args is not None:
                    raise CTypeError(f"'{name}' is a function-like macro")
                text = pp.expand([name]).get(name, "")
                return eval_text(text, name, self.abi, self._ident, self._sizeof, ())
        value = self.enumerator(name)
        if value is not None:
            return value
        value = gfp_flag(name, self.enumerator)
        if value is not None:
            return value
        raise CTypeError(f"'{name}' is not a parameter, a field or a constant plyc can find",
                         self._hint(name))

    def _ident(self, name: str) -> Optional[int]:
        v = self.enumerator(name)
        return v if v is not None else gfp_flag(name, self.enumerator)

    def _sizeof(self, node) -> CType:
        ct = self.resolve(node)
        if ct.kind == "record":
            from ... import btf as B
            b = self.btf
            kw, tag = ct.key.split(" ", 1)
            tid = b.find(B.STRUCT if kw == "struct" else B.UNION, tag)
            if tid is None:
                raise CTypeError(f"the kernel has no type '{ct.key}'")
            return replace(ct, size=b[tid].size)
        return ct

    def _hint(self, name: str) -> str:
        if self._pp_error:
            return self._pp_error
        if name.startswith(("GFP_", "__GFP_", "___GFP_")):
            return ("GFP flags are macros of the kernel's include/linux/gfp_types.h: plyc computes "
                    "those of them it knows from the kernel's ___GFP_*_BIT enumerators (kernels from "
                    "6.10 on); for this kernel give its headers with --kernel-headers DIR (Debian: "
                    "linux-headers-VERSION) and -I linux/gfp.h")
        uapi = find_uapi_define(name, *self.compiler())
        if uapi:
            return f"it is defined in the kernel's UAPI header {uapi}: add -I {uapi}"
        return GENERIC_HINT


GENERIC_HINT = ("kernel macros come from the headers named with -I HEADER, read with the kernel's headers "
                "(--kernel-headers DIR); enumerators come from the kernel's BTF")


def _kernelize(ct: CType) -> CType:
    """Records named in a kernel probe's signature are the kernel's (BTF)."""
    if ct.kind == "record" and not ct.kernel:
        return replace(ct, kernel=True)
    if ct.kind in ("ptr", "array") and ct.target is not None:
        return replace(ct, target=_kernelize(ct.target))
    return ct


def find_uapi_define(name: str, cc: list, flags: list) -> Optional[str]:
    """A UAPI header that #defines `name`, for a hint."""
    pat = re.compile(rb"^\s*#\s*define\s+" + re.escape(name.encode()) + rb"\b", re.M)
    for d in include_dirs(cc, flags):
        for sub in ("linux", "asm", "asm-generic"):
            base = Path(d) / sub
            if not base.is_dir():
                continue
            for p in sorted(base.glob("*.h")):
                try:
                    if pat.search(p.read_bytes()):
                        return f"{sub}/{p.name}"
                except OSError:
                    continue
    return None


# GFP flags from BTF. Kernels since 6.10 number the GFP bits in an enum
# (___GFP_<FLAG>_BIT) that BTF carries, so __GFP_<FLAG> and ___GFP_<FLAG>
# are 1 << that bit. The combinations below are include/linux/gfp_types.h's
# own, unchanged on every kernel that has those enumerators (GFP_ATOMIC lost
# __GFP_ATOMIC in 6.3); combinations that changed since (GFP_NOWAIT) or
# that depend on the kernel's configuration are left to kernel headers.
GFP_COMBINATIONS = {
    "__GFP_RECLAIM": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM"),
    "GFP_ATOMIC": ("HIGH", "KSWAPD_RECLAIM"),
    "GFP_KERNEL": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM", "IO", "FS"),
    "GFP_KERNEL_ACCOUNT": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM", "IO", "FS", "ACCOUNT"),
    "GFP_NOIO": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM"),
    "GFP_NOFS": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM", "IO"),
    "GFP_USER": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM", "IO", "FS", "HARDWALL"),
    "GFP_HIGHUSER": ("DIRECT_RECLAIM", "KSWAPD_RECLAIM", "IO", "FS", "HARDWALL", "HIGHMEM"),
    "GFP_DMA": ("DMA",),
    "GFP_DMA32": ("DMA32",),
}


def gfp_flag(name: str, enumerator: Callable) -> Optional[int]:
    if name in GFP_COMBINATIONS:
        flags = GFP_COMBINATIONS[name]
    else:
        m = re.fullmatch(r"_{2,3}GFP_(\w+)", name)
        if not m or m.group(1).endswith("_BIT"):
            return None
        flags = (m.group(1),)
    value = 0
    for f in flags:
        bit = enumerator(f"___GFP_{f}_BIT")
        if bit is None:
            return None
        value |= 1 << bit
    return value
