"""`plyc doctor [--target T] [--sysroot DIR]`: what a build for T will use,
what is missing, and how to get it.

It checks what `plyc build --target T` uses, found the same way
(toolchain.find_cc, the sysroot rules of Toolchain.detect): clang and its
BPF target, the C compiler for T (and that it does compile for T), the
sysroot and the target's static libbpf, libelf and zlib in it, the libbpf
headers both sides include, and the optional tools for `--btf` (bpftool,
pahole).  With --libc musl: zig's cc for T (that it compiles for T) and
plyc's musl libbpf, libelf and zlib for T, or what building them needs.
Nothing is downloaded or installed."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from . import __version__, musl
from . import sysroot as debian_sysroot
from . import arch as A
from .safefile import private_folder
from .cachedir import ToolchainError
from .toolchain import compiler_sysroot, find_ar, find_cc, find_clang, user_compiler

DEV_PACKAGE = {"libbpf.a": "libbpf-dev", "libelf.a": "libelf-dev", "libz.a": "zlib1g-dev"}


class Report:
    def __init__(self):
        self.missing = []

    def ok(self, what: str, detail: str):
        print(f"  ok       {what}: {detail}")

    def note(self, what: str, detail: str):
        print(f"  note     {what}: {detail}")

    def miss(self, what: str, fix: str):
        print(f"  missing  {what}: {fix}")
        self.missing.append(fix)


def _version(argv: list) -> str:
    try:
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0] if out else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _run(argv: list, **kw) -> Optional[subprocess.CompletedProcess]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, **kw)
    except (OSError, subprocess.SubprocessError):
        return None


def _clang_bpf(clang: str) -> bool:
    """Whether this clang compiles for BPF (a build without the BPF back end
    fails here)."""
    p = _run([clang, "-target", "bpf", "-O2", "-c", "-x", "c", "-", "-o", os.devnull],
             input="int plyc_doctor(void) { return 0; }\n")
    return bool(p and p.returncode == 0)


def _which_tool(name: str) -> Optional[str]:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}")
                                       if os.access(p, os.X_OK)), None)


def _lib_dirs(target: str, root: Optional[Path]) -> list:
    triplet = A.get(target).triplet
    base = root or Path("/")
    dirs = [base / "usr/lib" / triplet, base / "usr/lib64", base / "usr/lib",
            base / "lib" / triplet, base / "lib64", base / "lib"]
    if root is None:
        dirs.append(Path("/usr/local/lib"))
    return dirs


def _find(dirs: list, name: str) -> Optional[Path]:
    return next((d / name for d in dirs if (d / name).exists()), None)


def check(target: str, sysroot: Optional[str] = None, libc: str = "glibc") -> Report:
    r = Report()
    native = A.is_native(target)
    print(f"plyc {__version__}, building for {target}"
          + ("" if native else f" on {os.uname().machine}") + (" with musl" if libc == "musl" else ""))
    _bpf_side(r)
    if libc == "musl" and not user_compiler():
        return _tools(_musl(r, target, sysroot), target)
    return _glibc(r, target, sysroot, native, libc)


def _bpf_side(r: Report):
    # The BPF side: clang and the libbpf headers of the build machine.
    clang = find_clang()
    if not clang:
        r.miss("clang (BPF compiler)", "apt-get install clang llvm (or set $PLYC_CLANG)")
    elif not _clang_bpf(clang):
        r.ok("clang", f"{clang} ({_version([clang])})")
        r.miss("clang's BPF target", f"{clang} cannot compile for -target bpf: install Debian's "
               "clang (apt-get install clang llvm) or set $PLYC_CLANG to one that can")
    else:
        r.ok("clang (BPF target)", f"{clang} ({_version([clang])})")
    if clang:
        # bpftrace's `import "lib.bpf.c";` only (usercode.py): a note, not a miss
        from .usercode import llvm_tool
        link = llvm_tool(clang, "llvm-link")
        r.note("llvm-link (C imports)", link or "not found: bpftrace scripts importing a .bpf.c file "
               "need it (apt-get install llvm)")
    for header, package in (("bpf/bpf_helpers.h", "libbpf-dev"), ("linux/types.h", "linux-libc-dev")):
        path = Path("/usr/include") / header
        if path.exists():
            r.ok(f"{header} (BPF side)", str(path))
        else:
            r.miss(f"{header} (BPF side)", f"apt-get install {package}")


def _sdk(r: Report, target: str, cc: list, cflags: list, root: Optional[str], libc: str) -> Report:
    """The rest of a build with the user's own compiler ($CC or
    $CROSS_COMPILE: a Yocto, Buildroot or OpenWrt SDK's): its archiver, C
    library and sysroot, and the libraries plyc builds with it where the
    sysroot lacks them."""
    from . import sdklibs
    try:
        ar = find_ar(cc)
        r.ok("archiver", " ".join(ar))
    except ToolchainError as e:
        r.miss("archiver", str(e).partition(": ")[2])
        ar = None
    try:
        clib = sdklibs.c_library([*cc, *cflags])
    except ToolchainError as e:
        r.miss("the C library's headers", str(e).splitlines()[0])
        return r
    if libc == "musl" and clib != "musl":
        r.miss("C library", f"{' '.join(cc)} links glibc: leave out --libc musl, or unset "
               f"${user_compiler()} to build with zig's musl")
    else:
        r.ok("C library", clib)
    root = root or compiler_sysroot(cc + cflags)
    if root and not Path(root).is_dir():
        r.miss("sysroot", f"{root} is not a directory")
        return r
    r.note("sysroot", root or "the compiler's own")
    rootp = Path(root) if root else None
    if rootp and sdklibs.has_libraries(rootp, A.get(target).triplet):
        r.ok("libbpf, libelf, zlib", f"in {root}")
        return r
    if ar:
        out = sdklibs.prefix(target, cc, ar, [*cflags] + ([f"--sysroot={root}"] if root and "--sysroot"
                              not in " ".join(cc + cflags) else []), rootp)
        if sdklibs.ready(out):
            r.ok("libbpf, libelf, zlib", f"built for this SDK: {out}")
            return r
    r.note("libbpf, libelf, zlib", f"not in the sysroot: plyc build builds them from Debian {musl.SUITE}'s "
           f"sources with {' '.join(cc)}, once (kept in {sdklibs.cache_dir() / 'sdk'})")
    if not (musl.base() / "src").is_dir():
        for tool, package in (("apt-get", "apt"), ("dpkg-source", "dpkg-dev")):
            if not shutil.which(tool):
                r.miss(f"{tool} (to fetch the sources)", f"apt-get install {package}")
    return r


def _musl(r: Report, target: str, sysroot: Optional[str]) -> Report:
    """zig's cc for the target and plyc's musl libraries built with it."""
    if sysroot:
        r.miss("--sysroot", "a musl build uses plyc's own libraries: leave out --sysroot")
    what = f"C compiler for {target} (musl)"
    zig = musl.find_zig()
    if not zig:
        r.miss(what, musl.ZIG_HINT)
    else:
        cc = musl.cc(target, zig)
        # A file, not stdin: zig's cc writes stdin's object to ./-.o whatever -o says.
        with private_folder("plyc-doctor-") as tmp:
            src = Path(tmp) / "doctor.c"
            src.write_text("int plyc_doctor(void) { return 0; }\n")
            p = _run([*cc, "-c", str(src), "-o", str(Path(tmp) / "doctor.o")], cwd=tmp)
        if p and p.returncode == 0:
            r.ok(what, f"{' '.join(cc)} (zig {_version_flag([zig, 'version'])})")
        else:
            err = (p.stderr.strip().splitlines() or ["no output"])[-1] if p else "did not run"
            r.miss(what, f"{zig} cannot compile for {musl.TARGETS[target].triple} ({err}): "
                   f"pip install --upgrade ziglang, or set $PLYC_ZIG to a zig that can")
    root = musl.prefix(target)
    if musl.ready(target):
        for lib in musl.LIBS:
            r.ok(f"{lib} ({target}, musl)", str(root / "lib" / lib))
        r.ok(f"bpf/libbpf.h ({target}, musl)", str(root / "include/bpf/libbpf.h"))
        return r
    how = (f"plyc sysroot --libc musl --target {target} (builds libbpf, libelf and zlib from "
           f"Debian {musl.SUITE}'s sources with zig into {root}; plyc build also does it on first use)")
    r.miss(f"libbpf.a, libelf.a, libz.a ({target}, musl)", how)
    if not (musl.base() / "src").is_dir():
        for tool, package in (("apt-get", "apt"), ("dpkg-source", "dpkg-dev")):
            if not shutil.which(tool):
                r.miss(f"{tool} (to fetch the sources)", f"apt-get install {package}")
    return r


def _version_flag(argv: list) -> str:
    p = _run(argv)
    return p.stdout.strip() if p and p.returncode == 0 else "?"


def _glibc(r: Report, target: str, sysroot: Optional[str], native: bool, libc: str = "glibc") -> Report:
    # The loader: the C compiler for the target.
    try:
        cc, cflags, root = find_cc(target, sysroot)
    except ToolchainError as e:
        r.miss(f"C compiler for {target}", str(e).partition(": ")[2] or str(e))
        cc, root = None, sysroot or os.environ.get("SYSROOT") or os.environ.get("SDKTARGETSYSROOT")
    if cc:
        machine = _run([*cc, *cflags, "-dumpmachine"])
        machine = machine.stdout.strip() if machine and machine.returncode == 0 else ""
        what = f"C compiler for {target}"
        if machine and not machine.startswith(A.get(target).machine_prefix):
            r.miss(what, f"{' '.join(cc)} compiles for {machine}, not {target}: "
                   f"apt-get install {A.get(target).cc_package}, or set $CC or $CROSS_COMPILE "
                   f"to {target}'s compiler")
        else:
            r.ok(what, f"{' '.join(cc)} ({_version(cc) or machine})")
            if not root:
                _libc(r, target, cc, cflags)
            if user_compiler() and not (native and not root and libc == "glibc"):
                return _tools(_sdk(r, target, cc, cflags, root, libc), target)

    # The sysroot and the target's static libraries in it.
    if root:
        source = ("--sysroot" if sysroot else "$SYSROOT" if os.environ.get("SYSROOT")
                  else "$SDKTARGETSYSROOT")
        rootp = Path(root)
        if not rootp.is_dir():
            unset = "leave out --sysroot" if source == "--sysroot" else f"unset {source}"
            r.miss(f"sysroot ({source})", f"{root} is not a directory: give the target's sysroot, "
                   f"or {unset} to use plyc's Debian sysroot (plyc sysroot --target {target})")
            return _tools(r, target)
        r.ok(f"sysroot ({source})", root)
        unset = "leave out --sysroot" if source == "--sysroot" else f"unset {source}"
        advice = ("no {what} in {where}: install " + f"{target}'s " + "{package} into " + root
                  + " (Debian: {package}:" + A.get(target).debian_arch
                  + f"), or {unset} to use plyc's Debian sysroot (plyc sysroot --target {target})")
        dirs, header_root = _lib_dirs(target, rootp), rootp
    elif native:
        advice = "apt-get install {package}"  # {what} and {where} are known
        dirs, header_root = _lib_dirs(target, None), Path("/")
    else:
        rootp = debian_sysroot.path(target) / "root"
        other = A.get(target).debian_release
        release = f" from Debian {other}" if other else ""
        if not debian_sysroot.ready(target):
            how = (f"builds libbpf, libelf and zlib from Debian's sources with {A.get(target).triplet}-gcc"
                   if A.get(target).from_source else
                   f"downloads libbpf, libelf and zlib for {A.get(target).debian_arch}{release}")
            r.miss("sysroot (plyc's Debian sysroot)",
                   f"plyc sysroot --target {target} ({how} into {rootp}; plyc build also does it "
                   "on first use), or give one with --sysroot or $SYSROOT")
            return _tools(r, target)
        r.ok("sysroot (plyc's Debian sysroot)", str(rootp))
        if other:
            r.note(f"{other}'s libraries", f"linked with this machine's {target} C library "
                   "and plyc's runtime-c/compat shims for what it lacks (docs/design.md)")
        advice = ("no {what} in {where}: "
                  f"rm -r {debian_sysroot.path(target)}; plyc sysroot --target {target}")
        dirs, header_root = _lib_dirs(target, rootp), rootp
    for lib, package in DEV_PACKAGE.items():
        found = _find(dirs, lib)
        if found:
            r.ok(f"{lib} ({target})", str(found))
        else:
            r.miss(f"{lib} ({target})", advice.format(
                what=lib, package=package, where=f"{dirs[0]} or {dirs[2]}"))
    header = header_root / "usr/include/bpf/libbpf.h"
    if header.exists():
        r.ok(f"bpf/libbpf.h ({target})", str(header))
    else:
        r.miss(f"bpf/libbpf.h ({target})", advice.format(
            what="bpf/libbpf.h", package="libbpf-dev", where=header_root / "usr/include"))
    return _tools(r, target)


def _libc(r: Report, target: str, cc: list, cflags: list):
    """The static C library the compiler links (Debian ships a cross
    compiler's apart: libc6-dev-<arch>-cross)."""
    p = _run([*cc, *cflags, "-print-file-name=libc.a"])
    found = p.stdout.strip() if p and p.returncode == 0 else ""
    if os.path.isabs(found) and os.path.exists(found):
        r.ok(f"libc.a ({target})", os.path.normpath(found))
    else:
        r.miss(f"libc.a ({target})", f"apt-get install {A.get(target).libc_package()}")


def _tools(r: Report, target: str) -> Report:
    # Only `--btf` needs these: they are notes, not failures.
    bpftool = _which_tool("bpftool")
    if bpftool:
        r.ok("bpftool (for --btf)", bpftool)
    else:
        r.note("bpftool (for --btf)", "none; --btf needs it: apt-get install bpftool")
    pahole = _which_tool("pahole")
    if pahole:
        r.ok("pahole (--btf from a vmlinux without BTF)", f"{pahole} ({_version([pahole])})")
    else:
        r.note("pahole (--btf from a vmlinux without BTF)", "none: apt-get install dwarves")
    if A.is_native(target):
        btf = os.path.exists("/sys/kernel/btf/vmlinux")
        (r.ok if btf else r.note)("this kernel's BTF", "/sys/kernel/btf/vmlinux" if btf else
                                  "none (scripts that read kernel structs need --btf)")
    return r


def main(args) -> int:
    r = check(args.target, getattr(args, "sysroot", None), getattr(args, "libc", "glibc"))
    if r.missing:
        print("\nTo get what is missing:\n" + "\n".join(f"  {fix}" for fix in dict.fromkeys(r.missing)))
        return 1
    return 0
