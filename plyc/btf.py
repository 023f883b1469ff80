"""A reader for kernel BTF (the format of /sys/kernel/btf/vmlinux): enough to
type casts to kernel types, member access and function prototypes at
compile time. Offsets are never taken from here: generated code reads
members with CO-RE, so the device's kernel decides them."""
from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass
from typing import Optional

MAGIC = 0xEB9F

INT, PTR, ARRAY, STRUCT, UNION, ENUM, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, FUNC_PROTO, \
    VAR, DATASEC, FLOAT, DECL_TAG, TYPE_TAG, ENUM64 = range(1, 20)

MODIFIERS = (TYPEDEF, VOLATILE, CONST, RESTRICT, TYPE_TAG)


class BTFError(Exception):
    pass


@dataclass
class Member:
    name: str
    type: int
    bit_offset: int
    bitfield_size: int


@dataclass
class BType:
    id: int
    kind: int
    name: str
    size: int = 0            # INT, STRUCT, UNION, ENUM, FLOAT
    type: int = 0            # PTR, TYPEDEF, modifiers, FUNC, ARRAY elem
    nelems: int = 0          # ARRAY
    signed: bool = False     # INT, ENUM
    members: tuple = ()      # STRUCT/UNION: Member; FUNC_PROTO: (name, type)


class BTF:
    def __init__(self, data: bytes, path: str = "<btf>"):
        self.path = path
        if len(data) < 24:
            raise BTFError(f"{path}: not BTF (too short)")
        magic, version, flags, hdr_len = struct.unpack_from("<HBBI", data, 0)
        endian = "<"
        if magic != MAGIC:
            if struct.unpack_from(">H", data, 0)[0] == MAGIC:
                endian = ">"
                magic, version, flags, hdr_len = struct.unpack_from(">HBBI", data, 0)
            else:
                raise BTFError(f"{path}: not BTF (bad magic)")
        self.e = endian
        type_off, type_len, str_off, str_len = struct.unpack_from(endian + "IIII", data, 8)
        base = hdr_len
        self.strings = data[base + str_off: base + str_off + str_len]
        self.types: list[Optional[BType]] = [BType(0, 0, "void")]
        self._parse(data[base + type_off: base + type_off + type_len])
        self._by_name: Optional[dict] = None

    def _str(self, off: int) -> str:
        end = self.strings.find(b"\0", off)
        return self.strings[off:end].decode("ascii", "replace")

    def _parse(self, buf: bytes):
        e = self.e
        pos, n = 0, len(buf)
        u32 = struct.Struct(e + "I")
        hdr = struct.Struct(e + "III")
        while pos < n:
            name_off, info, size_type = hdr.unpack_from(buf, pos)
            pos += 12
            kind = (info >> 24) & 0x1F
            vlen = info & 0xFFFF
            kflag = info >> 31
            t = BType(len(self.types), kind, self._str(name_off) if name_off else "")
            if kind == INT:
                enc = u32.unpack_from(buf, pos)[0]
                pos += 4
                t.size, t.signed = size_type, bool((enc >> 24) & 1)
            elif kind in (PTR, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, TYPE_TAG):
                t.type = size_type
            elif kind == ARRAY:
                t.type, _, t.nelems = struct.unpack_from(e + "III", buf, pos)
                pos += 12
            elif kind in (STRUCT, UNION):
                t.size = size_type
                mems = []
                for _ in range(vlen):
                    m_name, m_type, m_off = hdr.unpack_from(buf, pos)
                    pos += 12
                    if kflag:
                        mems.append(Member(self._str(m_name) if m_name else "", m_type, m_off & 0xFFFFFF, m_off >> 24))
                    else:
                        mems.append(Member(self._str(m_name) if m_name else "", m_type, m_off, 0))
                t.members = tuple(mems)
            elif kind == ENUM:
                t.size, t.signed = size_type, bool(kflag)
                pos += 8 * vlen
            elif kind == ENUM64:
                t.size, t.signed = size_type, bool(kflag)
                pos += 12 * vlen
            elif kind == FWD:
                pass
            elif kind == FUNC_PROTO:
                t.type = size_type
                params = []
                for _ in range(vlen):
                    p_name, p_type = struct.unpack_from(e + "II", buf, pos)
                    pos += 8
                    params.append((self._str(p_name) if p_name else "", p_type))
                t.members = tuple(params)
            elif kind == VAR:
                t.type = size_type
                pos += 4
            elif kind == DATASEC:
                t.size = size_type
                pos += 12 * vlen
            elif kind == FLOAT:
                t.size = size_type
            elif kind == DECL_TAG:
                t.type = size_type
                pos += 4
            else:
                raise BTFError(f"{self.path}: unknown BTF kind {kind}")
            self.types.append(t)

    # --- lookups ------------------------------------------------------------

    def _index(self) -> dict:
        if self._by_name is None:
            idx: dict = {}
            for t in self.types[1:]:
                if t.name:
                    idx.setdefault((t.kind, t.name), t.id)
            self._by_name = idx
        return self._by_name

    def find(self, kind: int, name: str) -> Optional[int]:
        return self._index().get((kind, name))

    def __getitem__(self, tid: int) -> BType:
        return self.types[tid]

    def strip(self, tid: int) -> int:
        """Through typedefs and qualifiers to the underlying type."""
        while self.types[tid].kind in MODIFIERS:
            tid = self.types[tid].type
        return tid

    def size(self, tid: int, ptr_size: int = 8) -> int:
        t = self.types[self.strip(tid)]
        if t.kind == PTR:
            return ptr_size
        if t.kind == ARRAY:
            return t.nelems * self.size(t.type, ptr_size)
        return t.size

    def find_member(self, tid: int, name: str) -> Optional[list]:
        """The path of members (through anonymous structs/unions) to `name`."""
        t = self.types[self.strip(tid)]
        if t.kind not in (STRUCT, UNION):
            return None
        for m in t.members:
            if m.name == name:
                return [m]
        for m in t.members:
            if not m.name:
                sub = self.find_member(m.type, name)
                if sub is not None:
                    return [m] + sub
        return None

    def type_name(self, tid: int) -> str:
        t = self.types[tid]
        if t.kind == PTR:
            return self.type_name(t.type) + " *"
        if t.kind in (CONST, VOLATILE, RESTRICT, TYPE_TAG):
            return self.type_name(t.type)
        if t.kind == STRUCT:
            return f"struct {t.name or '(anon)'}"
        if t.kind == UNION:
            return f"union {t.name or '(anon)'}"
        if t.kind in (ENUM, ENUM64):
            return f"enum {t.name or '(anon)'}"
        if t.kind == ARRAY:
            return f"{self.type_name(t.type)}[{t.nelems}]"
        if t.kind == FWD:
            return f"struct {t.name}"
        return t.name or "void"


@functools.lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> BTF:
    with open(path, "rb") as f:
        return BTF(f.read(), path)


def load(path: Optional[str] = None) -> BTF:
    """The build's kernel BTF: `path`, $PLYC_BTF, or the running kernel's."""
    path = path or os.environ.get("PLYC_BTF") or "/sys/kernel/btf/vmlinux"
    try:
        return _load(path, os.stat(path).st_mtime)
    except FileNotFoundError:
        raise BTFError(f"no kernel BTF at {path}: give the target kernel's BTF with --btf FILE") from None
    except PermissionError:
        raise BTFError(f"cannot read {path}: permission denied") from None
