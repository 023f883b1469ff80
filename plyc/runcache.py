"""`plyc run`'s (and `plyc argdist --run`'s) tracers, kept in plyc's cache
under run/KEY. The key is what decides the tracer: the script, the build
options, plyc itself and the toolchain's environment; not the directory it
is run from nor unrelated variables. Entries beyond the newest KEEP, or
beyond SIZE_MAX bytes, are removed after each build."""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from . import __version__, package_dir
from .cachedir import cache_dir, writing
from .toolchain import find_clang

KEEP = 32
SIZE_MAX = 256 << 20
# A digest of another plyc's files not used for this long is removed.
DIGEST_AGE = 30 * 86400

# The environment a build reads: the toolchain's (toolchain.py) and the
# front ends' (bpftrace's BPFTRACE_*, plyc's PLYC_*).
ENV_NAMES = ("CC", "CFLAGS", "LDFLAGS", "AR", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT")
ENV_PREFIXES = ("PLYC_", "BPFTRACE_")


SUFFIXES = (".py", ".j2", ".c", ".h")


def _package_files(root: str) -> list:
    """plyc's own files (compiler, templates, runtime), as paths relative
    to the package, sorted. In a checkout runtime-c/ and templates/ are
    symlinked into it: followed (DirEntry.is_dir follows links)."""
    found, folders = [], [""]
    while folders:
        rel = folders.pop()
        with os.scandir(os.path.join(root, rel)) as entries:
            for e in entries:
                name = rel + e.name
                if e.is_dir():
                    if e.name != "__pycache__":        # .pyc only: the .py files are the source
                        folders.append(name + "/")
                elif os.path.splitext(e.name)[1] in SUFFIXES:
                    found.append(name)
    return sorted(found)


def plyc_files() -> list:
    """plyc's own files (compiler, templates, runtime), relative to the package."""
    return [Path(rel) for rel in _package_files(package_dir())]


def _stamp(root: str, files: list) -> str:
    """What changes when any of plyc's files does: each one's name, size,
    inode and change times (ctime: no one sets it back, as one can mtime)."""
    h = hashlib.sha256(repr((__version__, root)).encode())
    for rel in files:
        st = os.stat(os.path.join(root, rel))
        h.update(f"{rel}\0{st.st_size} {st.st_ino} {st.st_dev} {st.st_mtime_ns} {st.st_ctime_ns}\n".encode())
    return h.hexdigest()[:32]


def _plyc_digest() -> str:
    """A changed plyc is a new tracer even at the same version: the digest
    of every file of the package. Reading them all (some 200 files) on each
    `plyc run` cost more than the rest of a cached run, so the digest is
    kept in the cache under the files' stamp (names, sizes, inodes, times:
    a stat of each) and read again only when the stamp changes."""
    root = package_dir()
    files = _package_files(root)
    stamp = _stamp(root, files)
    folder = cache_dir() / "digests"
    kept = folder / stamp
    try:
        text = kept.read_text()
        if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
            return text
    except OSError:
        pass
    h = hashlib.sha256(__version__.encode())
    for rel in files:
        with open(os.path.join(root, rel), "rb") as f:
            h.update(rel.encode() + b"\0" + f.read())
    digest = h.hexdigest()
    if _stamp(root, files) == stamp:     # no file changed while it was read
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            for old in folder.iterdir():     # one plyc's, or a few (checkouts, venvs): the others go
                if old.name != stamp and old.stat().st_mtime < time.time() - DIGEST_AGE:
                    old.unlink(missing_ok=True)
            tmp = folder / f".{stamp}.{os.getpid()}"
            tmp.write_text(digest)
            os.replace(tmp, kept)
        except OSError:
            pass          # a cache that cannot keep it: digested again next time
    return digest


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


# -I folders bigger than this are not read for the key: their tracer is
# built anew each run (a stale header would give a stale tracer).
INCLUDE_FILES_MAX = 4096


def _included(opts):
    """The text of every file under -I's folders and of --include's files
    (a changed header is a new tracer), or None when there is too much."""
    texts = []
    for name in getattr(opts, "include_files", ()):
        if os.path.isfile(name):
            with open(name, "rb") as f:
                texts.append((os.path.abspath(name), hashlib.sha256(f.read()).hexdigest()))
    for top in getattr(opts, "include_dirs", ()):
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            for f in sorted(files):
                path = os.path.join(folder, f)
                if len(texts) >= INCLUDE_FILES_MAX:
                    return None
                try:
                    with open(path, "rb") as fh:
                        texts.append((path, hashlib.sha256(fh.read()).hexdigest()))
                except OSError:
                    texts.append((path, None))
    return texts


def script_key(source: str, filename: str, opts) -> str:
    """The key of a script's tracer (`plyc run`): its text, its name, the
    options, the files it imports (bpftrace's `import`: a changed one is
    a new tracer) and the headers -I and --include name. Only a script with
    the word `import` in it can import anything: a one-liner's key is had
    without loading the front end."""
    imported = []
    if "import" in source:
        from . import driver
        program = driver.parse(source, filename, opts.lang)
        # the C files too; the headers one includes are the build machine's, as -I's are
        imported = [(f.name, f.text) for f in [*getattr(program, "imported", ()), *getattr(program, "c_files", ())]]
    included = _included(opts)
    if included is None:
        included = os.urandom(16).hex()     # a key no later run has
    return key(source, imported, included, os.path.basename(filename), opts)


def root() -> Path:
    return cache_dir() / "run"


def entry(k: str) -> Path:
    path = root() / k
    with writing(path.parent):
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
