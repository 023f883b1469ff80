"""A kernel tree's headers as the kernel's own build reads them: the
compiler flags both front ends that read kernel headers use (bpftrace's
#includes, argdist's -I headers with --kernel-headers). Which tree to read
is each front end's (bpftrace's BPFTRACE_KERNEL_SOURCE, argdist's
--kernel-headers); the folders in it are the target's (arch.py)."""
from __future__ import annotations

import os

from . import arch as ARCH


def include_dirs(src: str, build: str, target: str) -> list:
    """The tree's include folders in the kernel build's order (Debian splits
    a tree in two: the source `src`, the configured `build`), those that exist."""
    a = ARCH.get(target).kernel_arch if target in ARCH.ARCHES else target
    dirs = [f"{src}/arch/{a}/include", f"{build}/arch/{a}/include/generated", f"{src}/include",
            f"{build}/include", f"{src}/arch/{a}/include/uapi", f"{build}/arch/{a}/include/generated/uapi",
            f"{src}/include/uapi", f"{build}/include/generated/uapi"]
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def flags(src: str, build: str, target: str) -> list:
    """-I the tree's folders, its kconfig.h included first, __KERNEL__ defined."""
    out = [f"-I{d}" for d in include_dirs(src, build, target)]
    kconfig = os.path.join(src, "include", "linux", "kconfig.h")
    if os.path.isfile(kconfig):
        out += ["-include", kconfig]
    return out + ["-D__KERNEL__"]
