"""What `plyc list` needs of a user binary: its function symbols (uprobe
targets) and its USDT probes (`.note.stapsdt`), read from the ELF file on
the build machine, of any class and byte order. The tracer resolves both
again on the device (runtime-c/probes/uprobes.c, usdt.c); this is only the
list a user greps."""
from __future__ import annotations

import os
import stat
import struct

ELF_MAGIC = b"\x7fELF"
SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
STT_FUNC, STT_GNU_IFUNC = 2, 10
NT_STAPSDT = 3
# The largest binary read whole: a list, not a loader (a 2 GB debug image is refused).
MAX_SIZE = 1 << 30


class ElfError(Exception):
    pass


class Elf:
    def __init__(self, path: str):
        self.path = path
        try:
            # O_NONBLOCK: opening a FIFO would otherwise wait for a writer
            # before fstat could say it is no binary
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise ElfError(f"{path}: not a regular file")
                data = f.read(MAX_SIZE + 1)
        except OSError as err:
            raise ElfError(f"{path}: {err.strerror}") from None
        if len(data) > MAX_SIZE:
            raise ElfError(f"{path}: larger than {MAX_SIZE >> 20} MiB")
        if data[:4] != ELF_MAGIC or len(data) < 64 or data[4] not in (1, 2) or data[5] not in (1, 2):
            raise ElfError(f"{path}: not an ELF file")
        self.data = data
        self.is64 = data[4] == 2
        self.e = "<" if data[5] == 1 else ">"
        try:
            self.sections = self._sections()
        except struct.error:
            raise ElfError(f"{path}: a truncated ELF file") from None

    def _sections(self) -> list:
        """(type, offset, size, link, entsize) of each section."""
        d, e = self.data, self.e
        if self.is64:
            shoff, = struct.unpack_from(e + "Q", d, 0x28)
            shentsize, shnum = struct.unpack_from(e + "HH", d, 0x3A)
            fmt = e + "IIQQQQIIQQ"
        else:
            shoff, = struct.unpack_from(e + "I", d, 0x20)
            shentsize, shnum = struct.unpack_from(e + "HH", d, 0x2E)
            fmt = e + "IIIIIIIIII"
        out = []
        for i in range(shnum):
            _, typ, _, _, off, size, link, _, _, entsize = struct.unpack_from(fmt, d, shoff + i * shentsize)
            out.append((typ, off, size, link, entsize))
        return out

    def _cstr(self, off: int) -> str:
        end = self.data.find(b"\0", off)
        return self.data[off:end if end >= 0 else len(self.data)].decode("utf-8", "replace")

    def functions(self) -> set:
        """The names of the functions the file defines (.symtab, else .dynsym)."""
        try:
            return self._functions()
        except (struct.error, IndexError):
            raise ElfError(f"{self.path}: a truncated or damaged symbol table") from None

    def usdt(self) -> set:
        """(provider, name) of each USDT probe in `.note.stapsdt`."""
        return set(self.usdt_args())

    def usdt_args(self) -> dict:
        """(provider, name) -> its arguments' specs as the note gives them
        (`-4@%eax 8@%rdx`), the first site's where a probe has several (the
        sites differ in registers, not in sizes)."""
        try:
            return self._usdt()
        except (struct.error, IndexError):
            raise ElfError(f"{self.path}: a truncated or damaged note") from None

    def _functions(self) -> set:
        names: set = set()
        for want in (SHT_SYMTAB, SHT_DYNSYM):
            for typ, off, size, link, entsize in self.sections:
                if typ != want or not entsize or link >= len(self.sections):
                    continue
                stroff = self.sections[link][1]
                for i in range(1, size // entsize):
                    p = off + i * entsize
                    if self.is64:
                        name, info, _, shndx, value, _ = struct.unpack_from(self.e + "IBBHQQ", self.data, p)
                    else:
                        name, value, _, info, _, shndx = struct.unpack_from(self.e + "IIIBBH", self.data, p)
                    if info & 0xF in (STT_FUNC, STT_GNU_IFUNC) and shndx and name:
                        names.add(self._cstr(stroff + name).split("@")[0])
            if names:
                break
        return names

    def _usdt(self) -> dict:
        out: dict = {}
        addr = 8 if self.is64 else 4
        for typ, off, size, _, _ in self.sections:
            if typ != SHT_NOTE:
                continue
            p, end = off, off + size
            while p + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from(self.e + "III", self.data, p)
                owner = self.data[p + 12:p + 12 + namesz].rstrip(b"\0")
                desc = p + 12 + ((namesz + 3) & ~3)
                if owner == b"stapsdt" and ntype == NT_STAPSDT and descsz > 3 * addr:
                    texts = self.data[desc + 3 * addr:desc + descsz].split(b"\0")
                    if len(texts) >= 2:
                        key = (texts[0].decode("utf-8", "replace"), texts[1].decode("utf-8", "replace"))
                        out.setdefault(key, texts[2].decode("utf-8", "replace") if len(texts) > 2 else "")
                p = desc + ((descsz + 3) & ~3)
        return out


def usdt_arg_types(spec: str) -> list:
    """The type of each argument of a USDT note's spec (`-4@%eax 8@%rdx`):
    N@ is N bytes, -N@ signed; an argument with no size (some assemblers
    write none) is a signed long, as systemtap and bpftrace take it."""
    out = []
    for arg in spec.split():
        size, at, _ = arg.partition("@")
        try:
            n = int(size) if at else -8
        except ValueError:
            n = -8
        if abs(n) not in (1, 2, 4, 8):
            n = -8
        out.append(f"{'' if n < 0 else 'u'}int{abs(n) * 8}")
    return out


def lib_dirs(triplet: str) -> tuple:
    """Where a library's short name is looked for, in the tracer's order
    (runtime-c/probes/uprobes.c, lib_dirs)."""
    return (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib")


def _is_elf(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        # a directory of the name (/usr/lib/python3) is no library, nor a FIFO
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, 4) == ELF_MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


def _library_in(folder: str, name: str):
    """lib<name>.so or lib<name>.so.N... (or name itself) in folder, an
    ELF file, the shortest name winning: the tracer's find_in_dir."""
    prefix = f"lib{name}.so"
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    found = [n for n in names if n == name or (n.startswith(prefix) and n[len(prefix):len(prefix) + 1] in ("", "."))]
    found = [n for n in found if _is_elf(os.path.join(folder, n))]
    if not found:
        return None
    # the tracer keeps the first of the shortest in readdir's order; sorted here, so the same for one name
    return os.path.join(folder, min(found, key=lambda n: (len(n), n)))


def resolve(name: str, triplet: str):
    """A uprobe's or usdt's binary as the tracer finds it on the device
    (plyc_resolve_binary): a path as given; a short name a library
    ($LD_LIBRARY_PATH, then the library folders: `c` is libc), else a
    program on $PATH. None when nothing is found."""
    if "/" in name:
        return name
    folders = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d] + list(lib_dirs(triplet))
    for folder in folders:
        found = _library_in(folder, name)
        if found:
            return found
    for folder in os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin").split(":"):
        path = os.path.join(folder or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None
