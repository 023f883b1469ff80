"""`plyc doctor`: what the build machine has, what is missing, how to get it."""
from __future__ import annotations

import os
import shutil
import subprocess

from . import __version__
from .toolchain import find_clang

CHECKS = (
    ("clang (BPF compiler)", lambda: find_clang(), "apt-get install clang llvm"),
    ("C compiler", lambda: shutil.which(os.environ.get("CC", "gcc")), "apt-get install gcc"),
    ("libbpf.a", lambda: _lib("libbpf.a"), "apt-get install libbpf-dev"),
    ("libelf.a", lambda: _lib("libelf.a"), "apt-get install libelf-dev"),
    ("libz.a", lambda: _lib("libz.a"), "apt-get install zlib1g-dev"),
    ("bpf/bpf_helpers.h", lambda: _file("/usr/include/bpf/bpf_helpers.h"), "apt-get install libbpf-dev"),
    ("linux/types.h", lambda: _file("/usr/include/linux/types.h"), "apt-get install linux-libc-dev"),
)


def _file(path):
    return path if os.path.exists(path) else None


def _lib(name):
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def _version(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0] if out else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def main(args) -> int:
    print(f"plyc {__version__}")
    missing = []
    for what, find, fix in CHECKS:
        found = find()
        if found:
            ver = _version(found) if os.access(found, os.X_OK) and not found.endswith((".a", ".h")) else ""
            print(f"  ok       {what}: {found}" + (f" ({ver})" if ver else ""))
        else:
            print(f"  missing  {what}: {fix}")
            missing.append(fix)
    btf = os.path.exists("/sys/kernel/btf/vmlinux")
    print(f"  {'ok' if btf else 'note':8} this kernel's BTF: {'/sys/kernel/btf/vmlinux' if btf else 'none'}")
    if missing:
        print("\nTo install what is missing: " + "; ".join(sorted(set(missing))))
        return 1
    return 0
