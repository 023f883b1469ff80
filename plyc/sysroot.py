"""A Debian sysroot with the target's static libbpf, libelf and zlib, for
cross-building tracers. apt gets a private state for the foreign
architecture (its own lists, cache and an empty dpkg status), so the
machine's own apt configuration and packages are never touched; the
packages are downloaded and unpacked, not installed. A target no Debian
release has packages for (big-endian MIPS) gets the same libraries built
from Debian's sources with its cross gcc, as the musl ones are."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import children
from . import arch as A
from . import progress
from .cachedir import ToolchainError, built_once, cache_dir

PACKAGES = ("libbpf-dev", "libelf-dev", "zlib1g-dev", "libzstd-dev")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MIRROR = "http://deb.debian.org/debian"


def path(target: str) -> Path:
    return cache_dir() / "sysroot" / target


def ready(target: str) -> bool:
    lib = path(target) / "root" / "usr" / "lib" / A.get(target).triplet
    return all((lib / f).exists() for f in ("libbpf.a", "libelf.a", "libz.a"))


def prepare(target: str, verbose: bool = False) -> Path:
    """The sysroot for `target`, downloading it the first time."""
    if target not in A.ARCHES:
        raise ToolchainError(f"unknown target '{target}'")
    base = path(target)
    root = base / "root"

    def build():
        if A.get(target).from_source:
            with progress.step(f"building the {target} sysroot's libraries, once"):
                _build(target, base, root, verbose)
        else:
            with progress.step(f"downloading the {target} sysroot from Debian, once"):
                _download(target, base, root, verbose)
    built_once(base, lambda: ready(target), build)
    return root


def _build(target: str, base: Path, root: Path, verbose: bool) -> Path:
    """libbpf, libelf and zlib built with the target's cross gcc, laid out
    as Debian's packages would be (usr/include, usr/lib/<triplet>)."""
    from . import musl
    a = A.get(target)
    cc = f"{a.triplet}-gcc"
    if not shutil.which(cc):
        raise ToolchainError(f"building the {target} sysroot needs {cc} "
                             f"(apt-get install {a.cc_package} {a.libc_package()})")
    out = base / "build"
    shutil.rmtree(out, ignore_errors=True)
    # glibc has rawmemchr, which musl lacks.
    config = musl.ELFUTILS_CONFIG.replace("HAVE_DECL_RAWMEMCHR 0", "HAVE_DECL_RAWMEMCHR 1")
    musl.build_libraries([cc], [f"{a.triplet}-ar"], ["-O2"], config, out, f"the {target} sysroot's libraries",
                         verbose, link=["-static"])
    tmp = base / "root.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "usr" / "lib").mkdir(parents=True)
    os.rename(out / "include", tmp / "usr" / "include")
    os.rename(out / "lib", tmp / "usr" / "lib" / a.triplet)
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    os.rename(tmp, root)
    if not ready(target):
        raise ToolchainError(f"the {target} sysroot at {root} lacks libbpf.a, libelf.a or libz.a")
    return root


def _download(target: str, base: Path, root: Path, verbose: bool) -> Path:
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise ToolchainError("preparing a sysroot needs apt-get and dpkg-deb (a Debian-based machine); "
                             "or give one with --sysroot/$SYSROOT")
    arch = A.get(target).debian_arch
    release = A.get(target).debian_release
    state = base / "apt"
    for d in ("lists/partial", "cache/archives/partial", "debs", "sources.list.d"):
        (state / d).mkdir(parents=True, exist_ok=True)
    (state / "status").touch()
    opts = ["-o", f"APT::Architecture={arch}", "-o", f"APT::Architectures::={arch}",
            "-o", f"Dir::State::Lists={state / 'lists'}", "-o", f"Dir::State::status={state / 'status'}",
            "-o", f"Dir::Cache={state / 'cache'}", "-o", "APT::Sandbox::User=root", "-q"]
    if release:
        # Another Debian release than the machine's: a source list of our own
        # (main only: trixie-security's riscv64 index failed its size check here).
        (state / "sources.list").write_text(f"deb [signed-by={KEYRING}] {MIRROR} {release} main\n")
        opts += ["-o", f"Dir::Etc::SourceList={state / 'sources.list'}",
                 "-o", f"Dir::Etc::SourceParts={state / 'sources.list.d'}"]

    def run(cmd, cwd=None, check=True):
        if verbose:
            print("+ " + " ".join(map(str, cmd)), flush=True)
        proc = children.run(cmd, capture_output=True, text=True, cwd=cwd)
        if proc.returncode != 0 and check:
            raise ToolchainError(f"preparing the {target} sysroot failed:\n+ {' '.join(map(str, cmd))}\n"
                                 f"{(proc.stderr or proc.stdout).strip()}")
        return proc

    # One index of a mirror failing its size check (seen for bookworm-security's
    # armhf list) fails `update` as a whole; the others are still there, and
    # the download below says whether what we need was in them.
    upd = run(["apt-get", *opts, "update"], check=False)
    if upd.returncode != 0 and not list((state / "lists").glob("*_Packages*")):
        raise ToolchainError(f"preparing the {target} sysroot failed: apt-get update:\n{upd.stderr.strip()}")
    run(["apt-get", *opts, "download", *(f"{p}:{arch}" for p in PACKAGES)], cwd=state / "debs")
    tmp = base / "root.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for deb in sorted((state / "debs").glob("*.deb")):
        run(["dpkg-deb", "-x", str(deb), str(tmp)])
    shutil.rmtree(root, ignore_errors=True)
    os.rename(tmp, root)
    if not ready(target):
        raise ToolchainError(f"the {target} sysroot at {root} lacks libbpf.a, libelf.a or libz.a")
    return root
