"""A reader for kernel BTF (the format of /sys/kernel/btf/vmlinux): enough to
type casts to kernel types, member access and function prototypes at
compile time. Offsets are never taken from here: generated code reads
members with CO-RE, so the device's kernel decides them."""
from __future__ import annotations

import functools
import os
import re
import stat
import struct
from dataclasses import dataclass
from typing import Optional

MAGIC = 0xEB9F

INT, PTR, ARRAY, STRUCT, UNION, ENUM, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, FUNC_PROTO, \
    VAR, DATASEC, FLOAT, DECL_TAG, TYPE_TAG, ENUM64 = range(1, 20)

MODIFIERS = (TYPEDEF, VOLATILE, CONST, RESTRICT, TYPE_TAG)


class BTFError(Exception):
    pass


# Names that reach generated C (kernel_types.definitions, casts): a struct,
# union, enum, typedef or function name, a member or parameter name must be
# a C identifier and not a keyword; an int or float's name is C's words
# for it ("long unsigned int"). Other kinds' names (DATASEC ".data..percpu",
# TYPE_TAG "address_space(1)", VAR, DECL_TAG) are never written into C.
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
BASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*( [A-Za-z_][A-Za-z0-9_]*)*\Z")
C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
    _Imaginary _Noreturn _Static_assert _Thread_local asm typeof __asm __asm__ __attribute
    __attribute__ __const __const__ __extension__ __inline __inline__ __label__ __restrict
    __restrict__ __signed __signed__ __typeof __typeof__ __volatile __volatile__ __auto_type
    __builtin_va_arg __builtin_offsetof __thread __int128 _Float128
""".split())
CHECKED_KINDS = (STRUCT, UNION, ENUM, ENUM64, FWD, TYPEDEF, FUNC)


def shown(name: str) -> str:
    """name for an error message: printable ASCII as is, other bytes \\xNN."""
    return "".join(c if " " <= c <= "~" else f"\\x{b:02x}"
                   for c in name for b in (c.encode("utf-8", "surrogateescape") if c != "\\" else b"\\"))


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
    is_bool: bool = False    # INT: C's _Bool (BTF_INT_BOOL)
    members: tuple = ()      # STRUCT/UNION: Member; FUNC_PROTO: (name, type)
    linkage: int = 0         # FUNC: 0 static, 1 global, 2 extern


class BTF:
    """One BTF: a kernel's (vmlinux), or a module's split BTF over it (`base`:
    its ids go on after the base's and its strings after the base's
    strings, so that one id space holds both, as the kernel numbers them)."""

    def __init__(self, data: bytes, path: str = "<btf>", label: Optional[str] = None,
                 base: Optional["BTF"] = None):
        self.path = path
        self.base = base
        self.first = len(base.types) if base is not None else 1     # the first id of this file's types
        self.str_base = len(base.strings) if base is not None else 0
        self.label = label or path     # how errors name it: "--btf FILE"
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
        self._enums: list = []       # (type id, offset, count) of each enum's values
        self._type_data = data[base + type_off: base + type_off + type_len]
        # Where each type's record starts; a type is decoded when first
        # asked for: a build uses a few hundred of a kernel's 100,000+.
        self._offsets = self._scan(self._type_data)
        self.types = _Types(self)
        self._by_name: Optional[dict] = None
        self._enumerators: Optional[dict] = None

    def _str(self, off: int) -> str:
        if self.base is not None:
            if off < self.str_base:
                return self.base._str(off)
            off -= self.str_base
        end = self.strings.find(b"\0", off)
        return self.strings[off:end].decode("ascii", "surrogateescape")

    def _scan(self, buf: bytes) -> list:
        """The offset of each type's record (index: type id; 0 is void),
        and where each enum's values are (for enumerator())."""
        offsets = [-1]
        u32 = struct.Struct(self.e + "I").unpack_from
        pos, n = 0, len(buf)
        while pos < n:
            info = u32(buf, pos + 4)[0]
            kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
            offsets.append(pos)
            pos += 12
            if kind in (STRUCT, UNION, DATASEC):
                pos += 12 * vlen
            elif kind == FUNC_PROTO:
                pos += 8 * vlen
            elif kind in (ENUM, ENUM64):
                self._enums.append((len(offsets) - 2 + self.first, pos, vlen))
                pos += (8 if kind == ENUM else 12) * vlen
            elif kind == ARRAY:
                pos += 12
            elif kind in (INT, VAR, DECL_TAG):
                pos += 4
            elif kind not in (PTR, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, TYPE_TAG, FWD, FLOAT):
                raise BTFError(f"{self.path}: unknown BTF kind {kind}")
        return offsets

    def _decode(self, tid: int) -> BType:
        """Type `tid` from its record."""
        if tid == 0:
            return BType(0, 0, "void")
        if tid < self.first:
            return self.base.types[tid]
        buf, e, pos = self._type_data, self.e, self._offsets[tid - self.first + 1]
        hdr = struct.Struct(e + "III")
        name_off, info, size_type = hdr.unpack_from(buf, pos)
        pos += 12
        kind = (info >> 24) & 0x1F
        vlen = info & 0xFFFF
        kflag = info >> 31
        t = BType(tid, kind, self._str(name_off) if name_off else "")
        if t.name:
            if kind in (INT, FLOAT):
                if not BASE_NAME.match(t.name):
                    self._bad("type name", t.name)
            elif kind in CHECKED_KINDS:
                self._ident("type name", t.name)
        if kind == INT:
            enc = struct.unpack_from(e + "I", buf, pos)[0]
            t.size, t.signed, t.is_bool = size_type, bool((enc >> 24) & 1), bool((enc >> 24) & 4)
        elif kind in (PTR, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, TYPE_TAG, VAR, DECL_TAG):
            t.type = size_type
            if kind == FUNC:
                t.linkage = vlen
        elif kind == ARRAY:
            t.type, _, t.nelems = struct.unpack_from(e + "III", buf, pos)
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
            for m in mems:
                if m.name:
                    self._ident(f"member name ({self.type_label(t)})", m.name)
        elif kind in (ENUM, ENUM64):
            # Enumerators are decoded when first asked for (enumerator()).
            t.size, t.signed = size_type, bool(kflag)
        elif kind == FUNC_PROTO:
            t.type = size_type
            params = []
            for _ in range(vlen):
                p_name, p_type = struct.unpack_from(e + "II", buf, pos)
                pos += 8
                params.append((self._str(p_name) if p_name else "", p_type))
                if p_name:
                    self._ident("parameter name", params[-1][0])
            t.members = tuple(params)
        elif kind in (DATASEC, FLOAT):
            t.size = size_type
        return t

    def _ident(self, what: str, name: str) -> None:
        if not IDENT.match(name) or name in C_KEYWORDS:
            self._bad(what, name)

    def _bad(self, what: str, name: str) -> None:
        """A name that would be written into generated C as it is, and is
        not C: refuse the file (kernels' BTF never has one; a crafted file
        could inject C through it)."""
        why = "is a C keyword" if IDENT.match(name) else "is not a C identifier"
        raise BTFError(f"{self.label}: {what} '{shown(name)}' {why}: not a kernel's BTF")

    @staticmethod
    def type_label(t: "BType") -> str:
        kw = "struct" if t.kind == STRUCT else "union"
        return f"of {kw} {t.name}" if t.name else f"of an anonymous {kw}"

    # --- lookups ------------------------------------------------------------

    def _index(self) -> dict:
        if self._by_name is None:
            # from the records' headers: no type decoded for it
            idx: dict = dict(self.base._index()) if self.base is not None else {}
            buf, hdr = self._type_data, struct.Struct(self.e + "II").unpack_from
            for local in range(1, len(self._offsets)):
                name_off, info = hdr(buf, self._offsets[local])
                if name_off:
                    idx.setdefault(((info >> 24) & 0x1F, self._str(name_off)), local - 1 + self.first)
            self._by_name = idx
        return self._by_name

    def find(self, kind: int, name: str) -> Optional[int]:
        return self._index().get((kind, name))

    def names_of(self, kind: int) -> list:
        """The names of this file's own types of a kind (a module's: not
        its base's), sorted; nothing decoded (`plyc list`)."""
        return sorted(n for (k, n), tid in self._index().items() if k == kind and tid >= self.first)

    def enumerator(self, name: str) -> Optional[tuple]:
        """(value, enum type id) of the enumeration constant `name`, or None."""
        if self._enumerators is None:
            idx: dict = {}
            for tid, pos, vlen in self._enums:
                t = self.types[tid]
                for i in range(vlen):
                    v_name, value = self._enumerator_at(t, pos, i)
                    idx.setdefault(self._str(v_name), (value, tid))
            self._enumerators = idx
        found = self.base.enumerator(name) if self.base is not None else None
        return found if found is not None else self._enumerators.get(name)

    def enumerators_of(self, tid: int) -> list:
        """[(value, name), ...] of enum type `tid`, in the BTF's order."""
        if tid < self.first:
            return self.base.enumerators_of(tid)
        t = self.types[tid]
        pos = self._offsets[tid - self.first + 1] + 12
        info = struct.unpack_from(self.e + "I", self._type_data, pos - 8)[0]
        out = []
        for i in range(info & 0xFFFF):
            v_name, value = self._enumerator_at(t, pos, i)
            out.append((value, self._str(v_name)))
        return out

    def _enumerator_at(self, t: BType, pos: int, i: int) -> tuple:
        """(name offset, value) of enum t's i-th enumerator, its list at pos:
        ENUM's 8-byte entries, ENUM64's 12 (the value in two halves)."""
        buf, e = self._type_data, self.e
        if t.kind == ENUM:
            return struct.unpack_from(e + ("Ii" if t.signed else "II"), buf, pos + 8 * i)
        v_name, lo, hi = struct.unpack_from(e + "III", buf, pos + 12 * i)
        value = hi << 32 | lo
        if t.signed and value >> 63:
            value -= 1 << 64
        return v_name, value

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


class _Types:
    """BTF.types: the types by id, each decoded on first use."""

    def __init__(self, btf: BTF):
        self._btf = btf
        self._done: list = [None] * (btf.first - 1 + len(btf._offsets))

    def __len__(self) -> int:
        return len(self._done)

    def __getitem__(self, tid):
        if isinstance(tid, slice):
            return [self[i] for i in range(*tid.indices(len(self)))]
        t = self._done[tid]
        if t is None:
            t = self._done[tid] = self._btf._decode(tid if tid >= 0 else len(self) + tid)
        return t

    def __iter__(self):
        return (self[i] for i in range(len(self)))


@functools.lru_cache(maxsize=4)
def _load(path: str, mtime: float, label: str) -> BTF:
    return BTF(raw_btf(path, label=label), path, label)


def load(path: Optional[str] = None) -> BTF:
    """The build's kernel BTF: `path` (--btf), $PLYC_BTF, or the running kernel's."""
    label = f"--btf {path}" if path else None
    path = path or os.environ.get("PLYC_BTF") or "/sys/kernel/btf/vmlinux"
    try:
        return _load(path, os.stat(path).st_mtime, label or path)
    except FileNotFoundError:
        raise BTFError(f"no kernel BTF at {path}: give the target kernel's BTF with --btf FILE") from None
    except PermissionError:
        raise BTFError(f"cannot read {path}: permission denied") from None


def modules(vmlinux: BTF) -> list:
    """The module BTF files beside a kernel's `vmlinux` BTF (/sys/kernel/btf/*:
    the modules loaded on the build machine), by name."""
    if os.path.basename(vmlinux.path) != "vmlinux":
        return []
    folder = os.path.dirname(vmlinux.path)
    try:
        names = sorted(n for n in os.listdir(folder) if n != "vmlinux")
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n))]


@functools.lru_cache(maxsize=8)
def _load_split(path: str, mtime: float, base: BTF) -> BTF:
    with open(path, "rb") as f:
        return BTF(f.read(), path, base=base)


def module(vmlinux: BTF, name: str) -> Optional[BTF]:
    """The split BTF of module `name` loaded on the build machine (beside a
    kernel's `vmlinux` BTF: /sys/kernel/btf/NAME), or None."""
    path = next((p for p in modules(vmlinux) if os.path.basename(p) == name), None)
    if path is None:
        return None
    try:
        return _load_split(path, os.stat(path).st_mtime, vmlinux)
    except OSError as err:
        raise BTFError(f"cannot read {path}: {err.strerror}") from None


def module_with(vmlinux: BTF, kinds: tuple, name: str) -> Optional[BTF]:
    """The split BTF (over `vmlinux`) of the first loaded module that defines
    a type `name` of one of `kinds` (bpftrace finds `struct scsi_cmnd` in
    /sys/kernel/btf/scsi_mod the same way), or None."""
    want = name.encode() + b"\0"
    for path in modules(vmlinux):
        try:
            with open(path, "rb") as f:
                if want not in f.read():
                    continue
            b = _load_split(path, os.stat(path).st_mtime, vmlinux)
        except (OSError, BTFError):
            continue
        if any(b.find(k, name) is not None and b.find(k, name) >= b.first for k in kinds):
            return b
    return None


# --- getting raw BTF out of what users have -----------------------------------

ELF_MAGIC = b"\x7fELF"
# The magic 0xeb9f in either byte order, then version 1 and flags 0 (bytes:
# not swapped): little- and big-endian BTF (s390x's, MIPS's).
BTF_MAGICS = (b"\x9f\xeb\x01\x00", b"\xeb\x9f\x01\x00")


def _elf_section(data: bytes, wanted: str) -> Optional[bytes]:
    """The contents of section `wanted` of an ELF image, or None."""
    cls64 = data[4] == 2
    e = "<" if data[5] == 1 else ">"
    if cls64:
        shoff, = struct.unpack_from(e + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(e + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)

    def header(i):
        off = shoff + i * shentsize
        if cls64:
            name, _, _, _, offset, size = struct.unpack_from(e + "IIQQQQ", data, off)
        else:
            name, _, _, _, offset, size = struct.unpack_from(e + "IIIIII", data, off)
        return name, offset, size

    _, str_off, _ = header(shstrndx)
    for i in range(shnum):
        name, offset, size = header(i)
        end = data.find(b"\0", str_off + name)
        if data[str_off + name:end].decode("ascii", "replace") == wanted:
            return data[offset:offset + size]
    return None


def _find_embedded(data: bytes) -> Optional[bytes]:
    """A BTF blob inside a kernel image: its magic, then a header whose
    lengths say where it ends."""
    for magic in BTF_MAGICS:
        pos = data.find(magic)
        while pos >= 0:
            e = "<" if magic == BTF_MAGICS[0] else ">"
            if pos + 24 <= len(data):
                hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from(e + "IIIII", data, pos + 4)
                end = pos + hdr_len + max(type_off + type_len, str_off + str_len)
                if hdr_len == 24 and type_off == 0 and str_off == type_len and end <= len(data) and type_len > 1000:
                    return data[pos:end]
            pos = data.find(magic, pos + 1)
    return None


def _decompress(data: bytes) -> Optional[bytes]:
    import gzip
    import lzma
    for magic, fn in ((b"\x1f\x8b\x08", gzip.decompress), (b"\xfd7zXZ\x00", lzma.decompress)):
        pos = data.find(magic)
        if pos >= 0:
            try:
                return fn(data[pos:])
            except (OSError, EOFError, lzma.LZMAError):
                try:   # trailing bytes after the stream
                    return lzma.LZMADecompressor().decompress(data[pos:]) if fn is lzma.decompress else \
                        gzip.GzipFile(fileobj=__import__("io").BytesIO(data[pos:])).read()
                except Exception:
                    pass
    pos = data.find(b"\x28\xb5\x2f\xfd")
    if pos >= 0:
        from . import children
        proc = children.run(["zstd", "-dc"], input=data[pos:], capture_output=True)
        if proc.stdout:
            return proc.stdout
    return None


def _read_regular(path: str, label: str) -> bytes:
    """The bytes of the regular file `path`: a directory, device or FIFO
    (opened without blocking: a FIFO would wait for a writer) is an error
    naming it as given (label: `--btf FILE`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise BTFError(f"{label}: {err.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise BTFError(f"{label}: is {kind}, not a BTF file, a vmlinux or a kernel image")
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read()
        except OSError as err:
            raise BTFError(f"{label}: {err.strerror}") from None


def raw_btf(path: str, workdir: Optional[str] = None, label: Optional[str] = None) -> bytes:
    """Kernel BTF from a BTF file (a copy of /sys/kernel/btf/vmlinux), a
    vmlinux (its .BTF section, or BTF made from its DWARF by pahole), or a
    kernel image (vmlinuz, Image) that carries BTF."""
    import shutil
    import tempfile

    from . import children
    from .safefile import private_folder
    data = _read_regular(path, label or path)
    if data[:4] in BTF_MAGICS:
        return data
    if data[:4] == ELF_MAGIC:
        sec = _elf_section(data, ".BTF")
        if sec:
            return sec
        if _elf_section(data, ".debug_info") is not None:
            if not shutil.which("pahole"):
                raise BTFError(f"{path} has DWARF but no BTF: making BTF from it needs pahole "
                               "(apt-get install dwarves)")
            with (tempfile.TemporaryDirectory(dir=workdir) if workdir else private_folder("plyc-btf-")) as tmp:
                out = os.path.join(tmp, "vmlinux.btf")
                proc = children.run(["pahole", f"--btf_encode_detached={out}", path],
                                      capture_output=True, text=True)
                if proc.returncode != 0 or not os.path.exists(out):
                    raise BTFError(f"pahole could not make BTF from {path}: {proc.stderr.strip()}")
                with open(out, "rb") as f:
                    return f.read()
    found = _find_embedded(data)
    if found:
        return found
    inner = _decompress(data)
    if inner:
        if inner[:4] == ELF_MAGIC:
            sec = _elf_section(inner, ".BTF")
            if sec:
                return sec
        found = _find_embedded(inner)
        if found:
            return found
    raise BTFError(f"{label + ': ' if label else ''}no BTF in {path}: give the kernel's /sys/kernel/btf/vmlinux, its vmlinux, or an image "
                   "built with CONFIG_DEBUG_INFO_BTF")
