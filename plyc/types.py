"""The core's value types (every front end types its language into them),
as the typing rules and the BPF code see them (codegen/printers.py names
their runtime kinds). Scalars are 64-bit in BPF code; `size` is what a value
occupies in a map key or event record. What a value is (a duration, a kernel
symbol's address, a stack id, ...) is part of its type; how a plain integer
prints (hex, padding) is the output style's (plyc/sema/looks.py)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from . import layout as L

DEFAULT_STRSIZE = 128      # ply's string size


@dataclass(frozen=True)
class Type:
    kind: str                 # int | str | buf | inet | usym | stack | tuple | dataloc | void | ctx | agg
    size: int = 8
    signed: bool = False
    # int: what the number is, when it is more than a number: time (ns, a
    # duration to ply) | walltime (ns since boot, a time of day) | sym (a kernel
    # code address) | username (a uid) | mac (6 bytes of a MAC address) |
    # strftime (ns, a time of day in bpftrace's strftime format number format_index) |
    # errno | signal (printed as bpftrace 0.27's text) | bool (true/false) |
    # cgroup_path (a cgroup id printed as its paths; format_index: its filter) |
    # enum (printed by its enumerator's name, enum_index's enum);
    # a tuple: array (a kernel array held by value, printed `[1,2]`) |
    # record (a kernel struct of no members, printed `{}`)
    denotes: str = ""
    pointee: Optional[str] = None   # int values that are pointers: what they point to ("char")
    user: bool = False        # pointer into user memory; a stack: the user stack
    btf: int = 0              # kernel type (BTF id): a pointer's target, a struct, an array
    items: tuple = ()         # tuple: its members' types (tuple_layout() places them)
    names: tuple = ()         # a tuple that is a record (bpftrace's `(a=1, b="x")`): its members' names
    frames: int = 0           # a stack: at most this many frames (0: PLYC_STACK_DEPTH)
    mode: str = ""            # a stack: bpftrace's mode ("", "perf", "raw": STACK_MODES)
    format_index: int = 0     # a strftime value: which of the program's formats
    enum_index: int = 0       # an enum value: which of the program's enums (Program.enums)
    sized: bool = False       # a buf: bpftrace's buf(), a u32 length then its bytes
    # a str read at bpftrace 0.27's max_strlen N under 1024: N + 1 bytes, so
    # that one of N bytes (its NUL the last) is taken as cut and printed
    # with the trailer (str_trunc_trailer), as 0.27 prints it
    cut: bool = False
    # An integer constant that is not negative: its sign is whatever the
    # other side's is where two types meet (promoted()). Not part of the
    # type's identity: a flexible s64 equals an s64.
    flexible: bool = field(default=False, compare=False)

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

    def __str__(self) -> str:
        if self.kind == "int":
            if self.pointee:
                return f"{self.pointee} *"
            name = f"{'s' if self.signed else 'u'}{self.size * 8}"
            if self.denotes == "bool":
                return "bool"
            if self.denotes == "strftime":
                return f"{name} (strftime's format #{self.format_index + 1})"
            return f"{name} ({self.denotes})" if self.denotes else name
        if self.kind == "str":
            return f"char[{self.size}]"
        if self.kind == "buf" and self.sized:
            return f"buffer[{self.size - BUF_LEN_SIZE}]"
        if self.kind == "buf":
            return f"u8[{self.size}]"
        if self.kind == "stack":
            args = ([self.mode] if self.mode else []) + ([str(self.frames)] if self.frames else [])
            return ("ustack" if self.user else "stack") + (f"({', '.join(args)})" if args else "")
        if self.kind == "tuple" and self.denotes == "array":
            return f"{self.items[0] if self.items else 'void'}[{len(self.items)}]"
        if self.kind == "tuple" and self.denotes == "record":
            return "record { }"
        if self.kind == "tuple" and self.names:
            return "record { " + ", ".join(f".{n} = {t}" for n, t in zip(self.names, self.items)) + " }"
        if self.kind == "tuple":
            return "(" + ", ".join(map(str, self.items)) + ("," if len(self.items) == 1 else "") + ")"
        return self.kind


def Int(size: int = 8, signed: bool = True, denotes: str = "") -> Type:
    return Type("int", size, signed, denotes)


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
# numbers them (struct plyc_type's mode); bpftrace's default and ply's: "".
STACK_MODES = {"": 0, "perf": 1, "raw": 2}


def Stack(user: bool = False, mode: str = "", frames: int = 0) -> Type:
    """A stack id (kernel: the s64 of bpf_get_stackid; user: the pid in the
    high 32 bits, the id in the low 32, as bpftrace keys a user stack).
    bpftrace's default mode is "": kstack() is STACK, bare kstack."""
    return Type("stack", 8, True, user=user, mode=mode, frames=frames)


def CgroupPath(filter_index: int) -> Type:
    """bpftrace's cgroup_path(id, filter): the id, which the tracer prints as
    its paths in the hierarchies the program's filter_index'th text picks."""
    return Type("int", 8, False, "cgroup_path", format_index=filter_index)


def Strftime(format_index: int) -> Type:
    """bpftrace's strftime(fmt, ns): ns, which the tracer prints in the
    program's format_index'th strftime format."""
    return Type("int", 8, False, "strftime", format_index=format_index)


def Str(size: int = DEFAULT_STRSIZE, cut: bool = False) -> Type:
    return Type("str", size, cut=cut)


def literal_str(data: bytes) -> Type:
    """ply gives a string literal a size rounded up to 8, so `@["dist"]`
    prints padded like other keys."""
    return Type("str", max(8, (len(data) + 1 + 7) // 8 * 8))


def Buf(size: int) -> Type:
    return Type("buf", size)


# bpftrace's buf(): a length (u32), then up to `capacity` bytes; the
# tracer prints the first `length` (PLYC_K_BUF). `sized` tells it from a
# plain buffer, whose bytes are all its value.
BUF_LEN_SIZE = 4


def SizedBuf(capacity: int) -> Type:
    return Type("buf", BUF_LEN_SIZE + capacity, sized=True)


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
    """Offsets of a tuple's members and its size: as a C struct (and
    bpftrace's tuples) lays them out, each member aligned by tuple_align."""
    lay = L.place([L.Field(t.size, tuple_align(t)) for t in items])
    return list(lay.offsets), lay.size


def record_type(t: Type) -> Type:
    """How a value is stored in a record (a map's key or value, an output
    event): strings and ints as they are, a __data_loc as its u32."""
    return U32 if t.kind == "dataloc" else t


def record_layout(types, start: int = 0) -> tuple:
    """C's natural offsets of a record's fields (arrays of any kind align
    as bytes) and its size, from `start` (an event's header: then aligned
    to at least 4)."""
    lay = L.place([L.Field(t.size, 1 if t.is_bytes else t.size) for t in types],
                  start=start, min_align=4 if start else 1)
    return list(lay.offsets), lay.size


def Tuple(items, names=()) -> Type:
    """A tuple, or with `names` (one a member) a record: laid out alike."""
    items = tuple(items)
    return Type("tuple", tuple_layout(items)[1], items=items, names=tuple(names))


def Array(items) -> Type:
    """A kernel array held by value (a struct's `int val[2]`): a tuple
    printed as bpftrace prints an array, `[1,2]`."""
    return replace(Tuple(items), denotes="array")


def EmptyRecord() -> Type:
    """A kernel struct with no members held by value: printed `{}`."""
    return replace(Tuple(()), denotes="record")


def matched(a: Type, b: Type) -> Optional[list]:
    """For each member of a, the index of the member of b it takes (two
    tuples: by place; two records: by name, as bpftrace 0.27 assigns
    `(b=1, a=2)` to a record `(a, b)`), or None when they don't match."""
    if a.kind != "tuple" or b.kind != "tuple" or len(a.items) != len(b.items) or a.denotes != b.denotes:
        return None
    if not a.names and not b.names:
        return list(range(len(a.items)))
    if sorted(a.names) != sorted(b.names) or not a.names or not b.names:
        return None
    return [b.names.index(n) for n in a.names]


def Ptr(pointee: str, user: bool = False, size: int = 8) -> Type:
    return Type("int", size, False, "", pointee, user)


def promoted(a: Type, b: Type) -> Type:
    """The integer type where values of integer types a and b meet (a map's
    keys or values, a variable assigned twice, a tuple's members, the arms
    of `?:`, the operands of arithmetic and comparisons): plyc's one rule,
    bpftrace 0.27's. Of one sign: the larger. Of both: the signed one when
    it is the larger, else the signed type twice the unsigned one's size
    (s32 with u32 is s64, s8 with u8 s16), which holds every value of both;
    s64 with u64, which no type holds, is s64 (bpftrace's choice: a u64 of
    2^63 or more reads as negative). A flexible side (a constant that is
    not negative) takes the other's sign. Only size and sign: unify()
    keeps what the numbers mean."""
    flexible = a.flexible and b.flexible
    if a.signed != b.signed and (a.flexible or b.flexible):
        signed = (a.signed and not a.flexible) or (b.signed and not b.flexible)
        return replace(Int(max(a.size, b.size), signed), flexible=flexible)
    if a.signed == b.signed:
        return replace(Int(max(a.size, b.size), a.signed), flexible=flexible)
    s, u = (a, b) if a.signed else (b, a)
    if s.size > u.size:
        return Int(s.size, True)
    return Int(min(8, 2 * u.size), True)


def holds(t: Type, value: int) -> bool:
    """Whether the integer type t holds value."""
    bits = t.size * 8
    return -(1 << (bits - 1)) <= value < 1 << (bits - 1) if t.signed else 0 <= value < 1 << bits


def arith(op: str, a: Type, b: Type) -> Type:
    """The type of `a op b` for integers: 64-bit, signed as promoted(a, b),
    and a duration stays a duration under + - (time - time is a latency)."""
    signed = promoted(a, b).signed
    denotes = ""
    if op in "+-" and "time" in (a.denotes, b.denotes) or op in "+-" and "walltime" in (a.denotes, b.denotes):
        denotes = "time"
        if op == "+" and "walltime" in (a.denotes, b.denotes):
            denotes = "walltime"
    elif op in "*/" and a.denotes == "time" and not b.denotes:
        denotes = "time"
    return Int(8, signed, denotes)


def unify(a: Type, b: Type) -> Optional[Type]:
    """A type that holds values of both a and b (map keys and values written
    from several places), or None when they don't mix."""
    if a == b and a.flexible == b.flexible:
        return a
    if a.kind == "int" and b.kind == "int":
        if any(d in (a.denotes, b.denotes) and a.denotes != b.denotes or a.format_index != b.format_index
               for d in ("strftime", "cgroup_path")):
            return None     # nor do two strftime formats, two cgroup_path filters
        # a plain number takes the other's meaning; two meanings make a number
        denotes = a.denotes if a.denotes == b.denotes or not b.denotes else b.denotes if not a.denotes else ""
        if "enum" in (a.denotes, b.denotes) and (a.denotes != b.denotes or a.enum_index != b.enum_index):
            # an enum's value meeting a number or another enum's is a
            # number, as bpftrace 0.27 types it (`@m = ONE; @m = 5`)
            denotes = ""
        p = promoted(a, b)
        return Type("int", p.size, p.signed, denotes,
                    a.pointee if a.pointee == b.pointee else None, a.user and b.user,
                    format_index=a.format_index,
                    enum_index=a.enum_index if a.denotes == "enum" else b.enum_index, flexible=p.flexible)
    if a.kind == b.kind and a.kind in ("str", "buf") and a.sized == b.sized:
        # still cut where the cut one is the larger (in a longer one its
        # last byte is no sign of a cut)
        return replace(a, size=max(a.size, b.size),
                       cut=(a.cut and a.size >= b.size) or (b.cut and b.size >= a.size))
    order = matched(a, b)
    if order is not None:
        items = [unify(x, b.items[j]) for x, j in zip(a.items, order)]
        return None if None in items else replace(Tuple(items, a.names), denotes=a.denotes)
    return None
