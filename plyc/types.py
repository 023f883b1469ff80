"""The core's value types (every front end types its language into them),
as the typing rules, the BPF code and the runtime see them. Scalars are 64-bit in BPF code; `size` is what a value
occupies in a map key or event record, and `fmt` is how it prints."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

DEFAULT_STRSIZE = 128      # ply's string size


@dataclass(frozen=True)
class Type:
    kind: str                 # int | str | buf | inet | usym | stack | tuple | dataloc | void | ctx | agg
    size: int = 8
    signed: bool = False
    fmt: str = "dec"          # int: dec | hex | time | walltime | sym; stack: its mode (STACK_MODES)
    pointee: Optional[str] = None   # int values that are pointers: what they point to ("char")
    user: bool = False        # pointer into user memory; a stack: the user stack
    width: int = 0            # a stack: at most this many frames (0: PLYC_STACK_DEPTH);
                              # bpftrace's strftime value: its format's number. (Print
                              # widths are the output style's: plyc/sema/widths.py.)
    btf: int = 0              # kernel type (BTF id): a pointer's target, a struct, an array
    items: tuple = ()         # tuple: its members' types (tuple_layout() places them)

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_pointer(self) -> bool:
        return self.kind == "int" and self.pointee is not None

    @property
    def is_bytes(self) -> bool:
        """Held in a char array: strings, raw buffers, inet addresses, user
        symbols and tuples (whose members the code generator places by
        tuple_layout)."""
        return self.kind in ("str", "buf", "inet", "usym", "tuple")

    def ctype(self) -> str:
        """C type of one value of this type in a BPF record field."""
        if self.kind == "int" or self.kind == "stack":
            bits = self.size * 8
            return f"__{'s' if self.signed else 'u'}{bits}"
        raise ValueError(self.kind)

    def scalar_ctype(self) -> str:
        """C type of this value while computing (64-bit)."""
        return "__s64" if self.signed else "__u64"

    def rt_kind(self) -> str:
        """The runtime's enum plyc_kind name."""
        if self.kind == "int":
            return {"dec": "PLYC_K_INT", "hex": "PLYC_K_HEX", "time": "PLYC_K_TIME",
                    "walltime": "PLYC_K_WALLTIME", "sym": "PLYC_K_SYM",
                    # bpftrace's values the tracer prints as text (runtime-c/values/btvalues.c)
                    "username": "PLYC_K_USERNAME", "mac": "PLYC_K_MAC",
                    "strftime": "PLYC_K_STRFTIME", "bool": "PLYC_K_BOOL",
                    "enum": "PLYC_K_ENUM"}[self.fmt]
        if self.kind == "stack" and self.user:
            return "PLYC_K_USTACK"
        if self.kind == "buf" and self.fmt == "sized":
            return "PLYC_K_BUF"
        return {"str": "PLYC_K_STR", "buf": "PLYC_K_MEM", "inet": "PLYC_K_INET", "usym": "PLYC_K_USYM",
                "stack": "PLYC_K_STACK", "tuple": "PLYC_K_TUPLE"}[self.kind]

    def rt_width(self) -> int:
        """struct plyc_type's width: a stack's frame limit | its mode << 8."""
        if self.kind == "stack":
            return self.width | STACK_MODES.get(self.fmt, 0) << 8
        return self.width

    def __str__(self) -> str:
        if self.kind == "int":
            if self.pointee:
                return f"{self.pointee} *"
            name = f"{'s' if self.signed else 'u'}{self.size * 8}"
            if self.fmt == "bool":
                return "bool"
            if self.fmt == "strftime":
                return f"{name} (strftime's format #{self.width + 1})"
            return name if self.fmt == "dec" else f"{name} ({self.fmt})"
        if self.kind == "str":
            return f"char[{self.size}]"
        if self.kind == "buf" and self.fmt == "sized":
            return f"buffer[{self.size - BUF_LEN_SIZE}]"
        if self.kind == "buf":
            return f"u8[{self.size}]"
        if self.kind == "stack":
            args = ([self.fmt] if self.fmt in STACK_MODES and self.fmt != "bpftrace" else []) + \
                ([str(self.width)] if self.width else [])
            return ("ustack" if self.user else "stack") + (f"({', '.join(args)})" if args else "")
        if self.kind == "tuple":
            return "(" + ", ".join(map(str, self.items)) + ("," if len(self.items) == 1 else "") + ")"
        return self.kind


def Int(size: int = 8, signed: bool = True, fmt: str = "dec", width: int = 0) -> Type:
    return Type("int", size, signed, fmt, width=width)


S64 = Int(8, True)
U64 = Int(8, False)
S32 = Int(4, True)
U32 = Int(4, False)
# Signed, as ply's: `time - t < 0` means what it says.
TIME = Int(8, True, "time")
WALLTIME = Int(8, True, "walltime")
SYM = Int(8, False, "sym")
VOID = Type("void", 0)
STACK = Type("stack", 8, True)
# bpftrace's stack modes (kstack(perf), ustack(raw, 3)), as the runtime
# numbers them (struct plyc_type's mode); ply's stacks are "dec", mode 0.
STACK_MODES = {"bpftrace": 0, "perf": 1, "raw": 2}


def Stack(user: bool = False, mode: str = "bpftrace", limit: int = 0) -> Type:
    """A stack id (kernel: the s64 of bpf_get_stackid; user: the pid in the
    high 32 bits, the id in the low 32, as bpftrace keys a user stack).
    bpftrace's mode is the default "dec": kstack() is STACK, bare kstack."""
    return Type("stack", 8, True, "dec" if mode == "bpftrace" else mode, user=user, width=limit)


def Str(size: int = DEFAULT_STRSIZE) -> Type:
    return Type("str", size)


def literal_str(data: bytes) -> Type:
    """ply gives a string literal a size rounded up to 8, so `@["dist"]`
    prints padded like other keys."""
    return Type("str", max(8, (len(data) + 1 + 7) // 8 * 8))


def Buf(size: int) -> Type:
    return Type("buf", size)


# bpftrace's buf(): a length (u32), then up to `capacity` bytes; the
# tracer prints the first `length` (PLYC_K_BUF). fmt "sized" tells it from a
# plain buffer, whose bytes are all its value.
BUF_LEN_SIZE = 4


def SizedBuf(capacity: int) -> Type:
    return Type("buf", BUF_LEN_SIZE + capacity, fmt="sized")


# An IP address as bpftrace's ntop() makes it: the family (AF_INET or
# AF_INET6, a u64) then 16 bytes of address in network order (4 for IPv4);
# the tracer prints it with inet_ntop (PLYC_K_INET).
INET_SIZE = 24
INET = Type("inet", INET_SIZE)

# bpftrace's usym(addr): the address, then the pid whose memory it is in
# (both u64); the tracer names it from that process's mappings (PLYC_K_USYM).
USYM_SIZE = 16
USYM = Type("usym", USYM_SIZE)


def tuple_align(t: Type) -> int:
    """A member's alignment in a tuple, bpftrace's rule (its SizedType's
    GetInTupleAlignment): strings and buffers 1, a tuple its largest
    member's, integers 1, 2, 4 or 8 by size (3 and 4 bytes: 4)."""
    if t.kind in ("str", "buf"):
        return 1
    if t.kind == "tuple":
        return max([tuple_align(i) for i in t.items] + [1])
    return t.size if t.size <= 2 else 4 if t.size <= 4 else 8


def tuple_layout(items) -> tuple:
    """Offsets of a tuple's members and its size: each member at the next
    multiple of its alignment, the size rounded up to the largest one, as a
    C struct (and bpftrace's tuples) lay them out."""
    off, offsets = 0, []
    for t in items:
        a = tuple_align(t)
        off = (off + a - 1) // a * a
        offsets.append(off)
        off += t.size
    a = max([tuple_align(t) for t in items] + [1])
    return offsets, (off + a - 1) // a * a


def Tuple(items) -> Type:
    items = tuple(items)
    return Type("tuple", tuple_layout(items)[1], items=items)


def Ptr(pointee: str, user: bool = False, size: int = 8) -> Type:
    return Type("int", size, False, "hex", pointee, user)


def arith(op: str, a: Type, b: Type) -> Type:
    """The type of `a op b` for integers: 64-bit, unsigned if either side is,
    and a duration stays a duration under + - (time - time is a latency)."""
    signed = a.signed and b.signed
    fmt = "dec"
    if op in "+-" and "time" in (a.fmt, b.fmt) or op in "+-" and "walltime" in (a.fmt, b.fmt):
        fmt = "time"
        if op == "+" and "walltime" in (a.fmt, b.fmt):
            fmt = "walltime"
    elif op in "*/" and a.fmt == "time" and b.fmt == "dec":
        fmt = "time"
    return Int(8, signed, fmt)


def unify(a: Type, b: Type) -> Optional[Type]:
    """A type that holds values of both a and b (map keys and values written
    from several places), or None when they don't mix."""
    if a == b:
        return a
    if a.kind == "int" and b.kind == "int":
        if "strftime" in (a.fmt, b.fmt) and (a.fmt, a.width) != (b.fmt, b.width):
            return None     # a strftime value's width is its format's number
        if a.fmt == b.fmt == "enum" and a.width != b.width:
            return None     # two enums (the width: which)
        fmt = a.fmt if a.fmt == b.fmt else "dec"
        if a.fmt != b.fmt and "dec" in (a.fmt, b.fmt):
            fmt = b.fmt if a.fmt == "dec" else a.fmt
        return Type("int", max(a.size, b.size), a.signed and b.signed, fmt,
                    a.pointee if a.pointee == b.pointee else None, a.user and b.user,
                    max(a.width, b.width))
    if a.kind == b.kind and a.kind in ("str", "buf") and a.fmt == b.fmt:
        return replace(a, size=max(a.size, b.size))
    if a.kind == b.kind == "tuple" and len(a.items) == len(b.items):
        items = [unify(x, y) for x, y in zip(a.items, b.items)]
        return None if None in items else Tuple(items)
    return None
