"""libbpf, libelf and zlib for a board vendor's SDK (Yocto, Buildroot,
OpenWrt) whose sysroot has only the C library: built once from Debian's
sources (plyc/musl.py's recipe) with the SDK's own compiler and flags, and
kept in the cache under the compiler's identity and the sysroot's, so a
new SDK, another -mcpu or a rebuilt C library builds them again."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional

from . import children, progress
from .cachedir import ToolchainError, built_once, cache_dir

LIBS = ("libbpf.a", "libelf.a", "libz.a")


def lib_dirs(root: Path, triplet: str) -> list:
    """Where a sysroot keeps its libraries: Debian's multiarch folder, then
    the flat layouts of Yocto, Buildroot and OpenWrt."""
    return [root / "usr/lib" / triplet, root / "usr/lib64", root / "usr/lib", root / "lib64", root / "lib"]


def has_libraries(root: Path, triplet: str) -> bool:
    """Whether the sysroot has all three archives and libbpf's header."""
    dirs = lib_dirs(root, triplet)
    return (all(any((d / lib).exists() for d in dirs) for lib in LIBS)
            and (root / "usr/include/bpf/libbpf.h").exists())


def c_library(cc: list) -> str:
    """"glibc" or "musl" (anything without __GLIBC__: uClibc-ng too reads
    as musl here, which only means rawmemchr is not assumed)."""
    proc = children.run([*cc, "-dM", "-E", "-x", "c", "-"], input="#include <stddef.h>\n#include <features.h>\n",
                        capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"the C compiler cannot read its C library's headers:\n+ {' '.join(cc)} -E\n"
                             f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    return "glibc" if "#define __GLIBC__ " in proc.stdout else "musl"


def _identity(cc: list, ar: list, cflags: list, root: Optional[Path]) -> str:
    """What the libraries depend on: the compiler (its argv, its version
    and its target), the flags, the sysroot's path and its C library's
    archive (size and time: an SDK rebuilt in place builds them again)."""
    parts = [repr((cc, ar, cflags, str(root)))]
    for flag in ("--version", "-dumpmachine"):
        proc = children.run([*cc, flag], capture_output=True, text=True)
        parts.append(proc.stdout)
    libc = children.run([*cc, *cflags, "-print-file-name=libc.a"], capture_output=True, text=True).stdout.strip()
    if os.path.isabs(libc) and os.path.exists(libc):
        st = os.stat(libc)
        parts.append(f"{libc} {st.st_size} {st.st_mtime_ns}")
    from . import musl
    parts.append(musl.recipe())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def prefix(target: str, cc: list, ar: list, cflags: list, root: Optional[Path]) -> Path:
    """Where the libraries for this compiler and sysroot are (or go)."""
    return cache_dir() / "sdk" / f"{target}-{_identity(cc, ar, cflags, root)}"


def ready(out: Path) -> bool:
    return all((out / "lib" / f).exists() for f in LIBS)


def prepare(target: str, cc: list, ar: list, cflags: list, root: Optional[Path], opt: list,
            verbose: bool = False) -> Path:
    """The prefix (include/, lib/) holding libbpf.a, libelf.a and libz.a
    built with cc for the SDK, the first time."""
    from . import musl
    out = prefix(target, cc, ar, cflags, root)

    def build():
        libc = c_library([*cc, *cflags])
        config = musl.ELFUTILS_CONFIG
        if libc == "glibc":
            config = config.replace("HAVE_DECL_RAWMEMCHR 0", "HAVE_DECL_RAWMEMCHR 1")
        with progress.step(f"building libbpf, libelf and zlib with {os.path.basename(cc[0])} "
                           f"for the SDK's {libc}, once"):
            musl.build_libraries([*cc, *cflags], ar, opt, config, out, f"libbpf, libelf and zlib "
                                 f"with {' '.join(cc)}", verbose, link=["-static"])
    built_once(out.parent, lambda: ready(out), build)
    if not ready(out):
        raise ToolchainError(f"building libbpf, libelf and zlib with {' '.join(cc)} left {out} incomplete")
    return out
