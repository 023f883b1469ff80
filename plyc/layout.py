"""C's struct and union layout, for every target plyc builds for: the one
engine the front ends' C definitions (bpftrace's script structs, argdist's
headers) and the core's own records (types.record_layout) place members by.

C leaves layout to the ABI; plyc's targets all follow the System V rules
(ARM's AAPCS and AAPCS64 are the same but for one point), which are GCC's
(stor-layout.c, PCC_BITFIELD_TYPE_MATTERS) and clang's:
- a member goes at the next multiple of its alignment (1 in a packed record
  or with the member's own `packed`; at least its `aligned(N)`), every
  member of a union at 0; the record aligns to its most aligned member and
  its own `aligned(N)`, its size rounded up to that;
- a bit-field goes at the next free bit unless it would then span more
  units of its type's alignment than its type does, when it starts at the
  next unit (packed: never moved); `:0` moves the next member to its type's
  alignment; a named bit-field aligns the record as its type would (packed:
  1); an unnamed one does not, except on ARM (arch.py's anon_bitfield_align),
  where `:0` does too.
Bits are counted in allocation order (from the least significant bit of the
first byte on little-endian targets, the most significant on big-endian).
tests/test_layout.py checks this against the target compilers (clang's
record layouts, gcc's sizeof/offsetof) for generated structs on every target.

The C types' own sizes and alignments per target (long, long double, ...)
are scalar()'s, from arch.py's ABI columns."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

from . import arch as ARCH


@dataclass(frozen=True)
class ABI:
    """What a target's C ABI says of layouts (arch.py's columns)."""
    name: str
    ptr: int                # pointer and long size (and alignment)
    llong_align: int        # alignment of long long and double
    ldouble: int            # size of long double
    ldouble_align: int
    biggest_align: int      # __BIGGEST_ALIGNMENT__: what a bare aligned attribute means
    char_signed: bool
    anon_bitfield_align: bool = False   # unnamed bit-fields align the record (ARM)


@lru_cache(maxsize=None)
def abi(target: str) -> ABI:
    a = ARCH.get(target)
    return ABI(a.name, a.ptr, a.llong_align, a.ldouble, a.ldouble_align, a.biggest_align, a.char_signed,
               a.anon_bitfield_align)


@dataclass(frozen=True)
class Scalar:
    kind: str               # int | float | void
    size: int
    align: int
    signed: bool = False


def scalar(a: ABI, names: Sequence[str]) -> Optional[Scalar]:
    """C's own arithmetic type the words name (`unsigned long int`,
    `long double`, plain `char` by the target's sign), None when they name
    none."""
    words = [w for w in names if w not in ("signed", "unsigned", "int")] or ["int"]
    if any(w not in ("char", "short", "long", "int", "float", "double", "void", "_Bool") for w in words):
        return None
    signed = "unsigned" not in names
    key = " ".join(sorted(words))
    if key == "void":
        return Scalar("void", 1, 1)
    if key == "char":
        return Scalar("int", 1, 1, signed if ("signed" in names or "unsigned" in names) else a.char_signed)
    if key == "_Bool":
        return Scalar("int", 1, 1, False)
    ints = {"short": 2, "int": 4, "long": a.ptr, "long long": 8}
    if key in ints:
        return integer(a, ints[key], signed)
    if key == "float":
        return Scalar("float", 4, 4, True)
    if key == "double":
        return Scalar("float", 8, a.llong_align, True)
    if key == "double long":
        return Scalar("float", a.ldouble, a.ldouble_align, True)
    return None


def integer(a: ABI, size: int, signed: bool) -> Scalar:
    """An integer type of `size` bytes (int64_t, a typedef's mode)."""
    return Scalar("int", size, size if size < 8 else a.llong_align, signed)


def pointer(a: ABI) -> Scalar:
    return Scalar("int", a.ptr, a.ptr, False)


@dataclass(frozen=True)
class Field:
    """A member as layout sees it: its type's size and alignment (an array:
    its element's alignment, all its bytes), and how it is declared."""
    size: int
    align: int
    bits: Optional[int] = None      # a bit-field's width
    named: bool = True              # False: an unnamed bit-field (`int :3;`)
    packed: bool = False            # the member's own __attribute__((packed))
    aligned: int = 0                # the member's own __attribute__((aligned(N)))


@dataclass(frozen=True)
class Layout:
    offsets: tuple          # each member's byte offset (a bit-field: the byte its first bit is in)
    bits: tuple             # each member's bit offset from the record's start, in allocation order
    size: int
    align: int


def round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _spans_too_many(pos: int, width: int, unit: int, type_bits: int) -> bool:
    """Whether a bit-field of `width` at bit `pos` spans more units of its
    type's alignment (`unit` bits) than its type (`type_bits`) does."""
    return (pos % unit + width + unit - 1) // unit > type_bits // unit


def place(fields: Sequence[Field], target: Optional[ABI] = None, union: bool = False, packed: bool = False,
          aligned: int = 0, start: int = 0, min_align: int = 1) -> Layout:
    """Where C puts each of a record's members, and the record's size and
    alignment. `start`: bytes before the first member (an event's header);
    `min_align`: the least alignment of the record."""
    anon_align = target is not None and target.anon_bitfield_align
    pos = start * 8                 # the next free bit
    end = pos                       # a union: its largest member's end
    rec_align = max(min_align, 1, aligned)
    offsets, bits = [], []
    for f in fields:
        loose = packed or f.packed
        if f.bits is None:
            a = max(1 if loose else f.align, f.aligned)
            at = 0 if union else round_up(round_up(pos, 8), a * 8)
            width = f.size * 8
            rec_align = max(rec_align, a)
        elif f.bits == 0:
            # the next member goes at the type's alignment (even packed)
            at = 0 if union else round_up(pos, f.align * 8)
            width = 0
            if anon_align:
                rec_align = max(rec_align, f.align)
        else:
            at = 0 if union else round_up(pos, max(f.aligned, 1) * 8) if f.aligned else pos
            if not loose and _spans_too_many(at, f.bits, f.align * 8, f.size * 8):
                at = round_up(at, f.align * 8)
            width = f.bits
            if f.named or anon_align:
                rec_align = max(rec_align, 1 if loose else f.align, f.aligned)
        offsets.append(at // 8)
        bits.append(at)
        if union:
            end = max(end, round_up(width, 8))
        else:
            pos = at + width
    used = round_up(end if union else pos, 8) // 8
    return Layout(tuple(offsets), tuple(bits), round_up(used, rec_align), rec_align)
