"""What a process holds open in the kernel's BPF subsystem, read from
/proc/PID/fdinfo: make bench's kernel-memory and run-time columns, and the
tests that check the same figures (tests/test_aggstorage.py, test_oldkernel.py)."""
from __future__ import annotations

import os


def bpf_fdinfo(pid: int, kind: str):
    """The /proc/PID/fdinfo entries, as dicts, of the fds that process holds
    open on BPF objects of one kind ("prog", "map")."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != f"anon_inode:bpf-{kind}":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                yield {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in f if ":" in line)}
        except OSError:
            continue


def maps_memlock(pid: int) -> int:
    """Bytes of kernel memory the BPF maps that process holds open lock, as
    the kernel counts them (/proc/PID/fdinfo's memlock; a perf buffer's
    pages are mapped, not a map's, and not in it)."""
    total = 0
    for info in bpf_fdinfo(pid, "map"):
        try:
            total += int(info["memlock"])
        except (KeyError, ValueError):
            continue
    return total
