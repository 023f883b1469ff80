"""`plyc run`'s (and `plyc argdist --run`'s) tracers, kept in plyc's cache
under run/KEY. The key is what decides the tracer: the script, the build
options, plyc itself and the toolchain's environment; not the directory it
is run from nor unrelated variables. Entries beyond the newest KEEP, or
beyond SIZE_MAX bytes, are removed after each build."""
from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import asdict
from importlib import resources as ir
from pathlib import Path
from typing import Callable

from . import __version__
from .toolchain import cache_dir, find_clang

KEEP = 32
SIZE_MAX = 256 << 20

# The environment a build reads: the toolchain's (toolchain.py) and the
# front ends' (bpftrace's BPFTRACE_*, plyc's PLYC_*).
ENV_NAMES = ("CC", "CFLAGS", "LDFLAGS", "AR", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT")
ENV_PREFIXES = ("PLYC_", "BPFTRACE_")


def plyc_files() -> list:
    """plyc's own files (compiler, templates, runtime), relative to the
    package. In a checkout runtime-c/ and templates/ are symlinked into it,
    which rglob does not enter: os.walk follows them."""
    root = Path(str(ir.files("plyc")))
    found = []
    for folder, _, names in os.walk(root, followlinks=True):
        found += [Path(folder, n).relative_to(root) for n in names if Path(n).suffix in (".py", ".j2", ".c", ".h")]
    return sorted(found)


def _plyc_digest() -> str:
    """A changed plyc is a new tracer even at the same version."""
    h = hashlib.sha256(__version__.encode())
    root = Path(str(ir.files("plyc")))
    for rel in plyc_files():
        h.update(str(rel).encode() + b"\0" + (root / rel).read_bytes())
    return h.hexdigest()


def key(*parts) -> str:
    """The cache key of a tracer built from parts (the script or the IR
    text, its name, the options)."""
    env = sorted((k, v) for k, v in os.environ.items()
                 if k in ENV_NAMES or k.startswith(ENV_PREFIXES) and k != "PLYC_TEST_BUILDS")
    opts = [asdict(p) if hasattr(p, "__dataclass_fields__") else p for p in parts]
    for o in opts:
        if isinstance(o, dict):
            for name in ("verbose", "keep_dir", "origin", "env"):
                o.pop(name, None)
    tools = (find_clang(), shutil.which("gcc"))      # which compilers $PATH finds
    return hashlib.sha256(repr((opts, env, tools, _plyc_digest())).encode()).hexdigest()[:20]


def root() -> Path:
    return cache_dir() / "run"


def entry(k: str) -> Path:
    path = root() / k
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def tracer(k: str, name: str, build: Callable[[str], object]) -> Path:
    """The tracer `name` under run/k: built by build(path) if it is not
    there yet (then the oldest entries evicted), marked as used now."""
    out = entry(k) / name
    if not out.exists():
        build(str(out))
        evict()
    touch(out.parent)
    return out


def touch(path: Path) -> None:
    """Used now: the newest, the last evicted."""
    try:
        os.utime(path)
    except OSError:
        pass


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def evict(keep: int = KEEP, size_max: int = SIZE_MAX) -> list:
    """Remove the oldest entries beyond `keep` or `size_max` bytes in all;
    the removed entries' paths."""
    try:
        entries = sorted((p for p in root().iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime,
                         reverse=True)
    except OSError:
        return []
    removed, total = [], 0
    for i, p in enumerate(entries):
        total += _size(p)
        if i >= keep or (i > 0 and total > size_max):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed
