"""Names a script's kernel headers would have defined, when they could not
be read: the BPF Performance Tools book's networking and file-system tools
#include <net/sock.h>, <linux/fs.h> or <net/tcp_states.h> for AF_INET,
DT_REG or TCP_SYN_SENT, and the machine building the tracer (a board's,
most cloud machines) has no headers of the kernel it will run on.

Two sources, each value with a warning at its first use saying where it
came from:
- kernel ABI (address families, protocols, errno, file types, signals,
  open and mmap flags): the same in every kernel of the target, so the
  target's UAPI headers and C library (Debian's libc-dev, or its cross
  libc-dev for another target: errno and signal numbers differ on MIPS)
  read by clang for the target (headers.py);
- the kernel's own enumerators (enum tcp_state's TCP_SYN_SENT): the
  target's BTF (--btf), as bpftrace resolves them.
A kernel-internal #define (runqlat's TASK_RUNNING) has no such source: it
stays an unknown identifier, and the note says why."""
from __future__ import annotations

import os
import re
from typing import Optional

from ... import arch as ARCH
from . import constants, headers

# (what the names are, their pattern, the headers that define them for the
# target: the kernel's UAPI first, where it has them, then the C library's)
ABI = (
    ("an address family", r"[AP]F_\w+", ("sys/socket.h",)),
    ("a socket type, level or flag", r"(?:SOCK|SOL|SO|MSG|SCM)_\w+", ("sys/socket.h",)),
    ("a protocol number", r"IPPROTO_\w+", ("linux/in.h", "linux/in6.h", "netinet/in.h")),
    ("an ICMP message type", r"ICMP(?:V6)?_\w+", ("linux/icmp.h", "linux/icmpv6.h")),
    ("an errno", r"E[A-Z0-9]+", ("linux/errno.h", "errno.h")),
    ("a directory entry's file type", r"DT_[A-Z]+", ("dirent.h",)),
    ("a file mode", r"S_I\w+", ("linux/stat.h", "sys/stat.h")),
    ("a signal", r"SIG[A-Z0-9]+", ("linux/signal.h", "signal.h")),
    ("an open flag", r"O_\w+", ("linux/fcntl.h",)),
    ("an mmap flag", r"(?:PROT|MAP)_\w+", ("linux/mman.h",)),
)


def _whose(header: str, arch: str) -> str:
    if header.split("/")[0] in headers.KERNEL_DIRS:
        return f"the kernel's UAPI header <{header}> for {arch}"
    return f"the C library's <{header}> for {arch}"


def abi_value(name: str, arch: str) -> Optional[tuple]:
    """(value, where) of a kernel ABI constant from the target's UAPI and C
    library headers, or None."""
    if arch not in ARCH.ARCHES or not any(os.path.isdir(d) for d in ARCH.get(arch).header_dirs()):
        return None     # not the target's headers: clang would read the build machine's
    for what, pattern, files in ABI:
        if not re.fullmatch(pattern, name):
            continue
        for header in files:
            value = headers.library_compiler(header, arch).value(name)
            if value is not None:
                return value, f"{what} (kernel ABI) from {_whose(header, arch)}"
    return None


def btf_value(name: str, ktypes) -> Optional[tuple]:
    """(value, where) of a kernel enumerator in the target's BTF, or None."""
    value = constants.enumerator(name, ktypes)
    if value is None:
        return None
    return value, f"a kernel enumerator from the BTF ({ktypes.path or '/sys/kernel/btf/vmlinux'})"


def fallback(name: str, cc, arch: str, ktypes):
    """(value, warning) for `name` when the kernel headers `cc` read were
    not all the kernel's (None, None when they were), or (None, note) when
    no source defines it."""
    why = cc.degraded()
    if not why:
        return None, None
    found = abi_value(name, arch) or btf_value(name, ktypes)
    if found is None:
        return None, (f"{'; '.join(why)}; neither the target's UAPI and C library headers (kernel ABI) nor "
                      f"the kernel's BTF enumerators define {name}: #define it in the script")
    value, where = found
    return value, f"{name} is {value}, {where}: {why[0]}"


def constant(name: str, includes: list, env: dict, arch: str, ktypes, dirs: tuple = ()):
    """(value, warning, note) of a name the script's headers may define:
    headers.constant's value (no warning), else fallback's (a warning);
    the unknown identifier's note (a list) when there is none."""
    value, where = headers.constant(name, includes, env, arch, dirs)
    if value is not None:
        return value, None, where
    lines = [item for item in includes if headers.INCLUDE.match(item.text.strip())]
    if not lines:
        return None, None, where
    cc = headers.compiler(lines, env, arch, dirs)
    if cc.problem is not None:
        return None, None, where
    found, said = fallback(name, cc, arch, ktypes)
    if found is not None:
        from . import ast as A
        return A.Int(found, str(found)), said, None
    return None, None, [said] if said else where
