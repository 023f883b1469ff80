"""The musl side of a build: zig's C compiler (from the `ziglang` Python
package; it carries musl and the Linux headers for every target) and
libbpf, libelf and zlib built from Debian bookworm's source packages for
each target, cached under ~/.cache/plyc/musl. The sources come through a
private apt state (its own source list, lists and cache), so the machine's
apt is never touched. Each library is built from the file lists of its
own build files (libbpf's Makefile, libelf's Makefile.am, zlib's
Makefile.in), not from its configure scripts: those cannot cross-compile
with zig alone, and we need only the static archives."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import children, progress
from .cachedir import ToolchainError, built_once, cache_dir


@dataclass(frozen=True)
class Target:
    triple: str          # zig's -target
    flags: tuple = ()    # what the target's ABI needs beyond the triple
    # runtime-c/compat/ sources for what zig's libraries lack there, linked
    # into the tracer (not the libraries: kept out of their cache key).
    compat: tuple = field(default=(), repr=False)
    # Link-time optimised (LTO_CFLAGS): where that brings the tracer under
    # 512 KB (docs/toolchain.md, "Where the bytes go").
    lto: bool = False


# One line per target: a new architecture is one more line.
TARGETS = {
    "x86_64": Target("x86_64-linux-musl"),
    "aarch64": Target("aarch64-linux-musl"),
    # Debian's armhf baseline (ARMv7-A, VFPv3-D16) in Thumb-2, as Debian
    # builds it: libbpf.o is 85 KB of text so, 111 KB in ARM code (zig
    # ignores -mthumb: the "thumb" triple is how to ask).
    "armhf": Target("thumb-linux-musleabihf", ("-mcpu=generic+v7a+vfp3d16+thumb2",)),
    # Raspberry Pi Zero/1's core (ARMv6KZ, VFPv2, hard-float) and ARMv5TE
    # soft-float (Debian's armel baseline), in ARM code: their Thumb is
    # the 16-bit one only.
    "armv6": Target("arm-linux-musleabihf", ("-mcpu=arm1176jzf_s",)),
    "armel": Target("arm-linux-musleabi", ("-mcpu=arm926ej_s",), ("armv5-atomics.c",)),
    "riscv64": Target("riscv64-linux-musl"),
    # 32-bit MIPS soft-float (OpenWrt's musl ABI): runs on routers without
    # an FPU, and on those with one.
    "mipsel": Target("mipsel-linux-musleabi", lto=True),
    "mips": Target("mips-linux-musleabi", lto=True),
    # n64 is always PIC: zig's -fno-PIC is ignored, with a warning -Werror
    # would make fatal.
    "mips64el": Target("mips64el-linux-muslabi64", ("-Wno-option-ignored",), lto=True),
    "ppc64le": Target("powerpc64le-linux-musl", lto=True),
    "s390x": Target("s390x-linux-musl"),
}

# Small code: each function and object in its own section, so that the
# link keeps only what the tracer reaches; no unwind tables (C without
# exceptions: they were a tenth of the tracer).
SIZE_CFLAGS = ["-Os", "-ffunction-sections", "-fdata-sections", "-fno-asynchronous-unwind-tables",
               "-fno-unwind-tables"]
SIZE_LDFLAGS = ["-Wl,--gc-sections"]
# For the targets whose Target says lto, with zig (an SDK's gcc would need
# its gcc-ar and LTO plugin): the libraries, the runtime and the loader as
# LLVM bitcode, optimised as one program at the link (mipsel 553,664 ->
# 521,184 bytes). Not everywhere: every tracer's link then compiles the
# whole program (a build takes 10-50 s more; docs/toolchain.md).
LTO_CFLAGS = ["-flto"]


def opt_flags(target: str) -> list:
    """The flags of target's libraries, runtime, loader and link."""
    return [*SIZE_CFLAGS, *(LTO_CFLAGS if TARGETS[target].lto else ())]

# A target's linker scripts (runtime-c/compat/), beside lld's own: MIPS's
# .pdr records are a tenth of its tracers and nothing reads them. Apart
# from TARGETS, so that the libraries' recipe (prefix()) is unchanged.
LINK_SCRIPTS = {t: ("discard-pdr.ld",) for t in ("mipsel", "mips", "mips64el")}


def link_flags(target: str, runtime: Path) -> list:
    """The musl link's flags for target; runtime: runtime-c's folder."""
    return [*SIZE_LDFLAGS, *(f"-Wl,-T,{runtime / 'compat' / s}" for s in LINK_SCRIPTS.get(target, ()))]

SOURCE_PACKAGES = ("libbpf", "elfutils", "zlib")
SUITE = "bookworm"
ARCHIVE = "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
LIBS = ("libbpf.a", "libelf.a", "libz.a")

# zlib as far as a tracer uses it (libbpf reads /proc/config.gz, libelf
# zlib-compressed sections): no gz writing, whose gzclose() kept deflate
# and trees (22 KB on MIPS) though a tracer only reads; CRC-32 a byte at a
# time (Z_TESTW=0: no braided tables, 5 KB; it runs over config.gz once).
ZLIB_FLAGS = ("-DNO_GZCOMPRESS", "-DZ_TESTW=0")
# libbpf's sources replaced by plyc's (runtime-c/compat/): what a tracer
# never calls but libbpf's own code references, so the link kept it.
LIBBPF_STANDINS = {"gen_loader.c": "libbpf-no-gen-loader.c"}
STANDIN_DIR = Path(__file__).resolve().parent / "runtime-c" / "compat"

# What elfutils' configure would find in musl (libelf uses no more of it).
ELFUTILS_CONFIG = """\
#define _GNU_SOURCE 1
#define HAVE_ERR_H 1
#define HAVE_DECL_MEMPCPY 1
#define HAVE_DECL_MEMRCHR 1
#define HAVE_DECL_RAWMEMCHR 0
#define HAVE_DECL_REALLOCARRAY 1
#define HAVE_DECL_POWEROF2 1
#define HAVE_FALLTHROUGH 1
#define HAVE_GCC_STRUCT 1
#define HAVE_VISIBILITY 1
#define HAVE_STDATOMIC_H 1
#define PACKAGE "elfutils"
#define PACKAGE_NAME "elfutils"
#define PACKAGE_URL "http://elfutils.org/"
#define PACKAGE_VERSION VERSION
#define VERSION "{version}"
#include <eu-config.h>
"""


def base() -> Path:
    return cache_dir() / "musl"


def recipe() -> str:
    """What the libraries' bytes depend on besides the compiler and its
    flags: part of their cache folders' names (here and plyc/sdklibs.py),
    so a change builds them again (in CI too: its cache is this folder)."""
    standins = [(STANDIN_DIR / f).read_text() for f in sorted(LIBBPF_STANDINS.values())]
    return repr((ELFUTILS_CONFIG, SOURCE_PACKAGES, SUITE, ZLIB_FLAGS, LIBBPF_STANDINS, standins))


def prefix(target: str) -> Path:
    """Where the target's libraries (lib/) and their headers (include/) go:
    one directory per target and build recipe, so a new recipe rebuilds."""
    key = repr((TARGETS[target], opt_flags(target), recipe()))
    return base() / f"{target}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def ready(target: str) -> bool:
    if target not in TARGETS:
        return False
    p = prefix(target)
    return all((p / "lib" / f).exists() for f in LIBS) and (p / "include/bpf/libbpf.h").exists()


def find_zig() -> Optional[str]:
    """$PLYC_ZIG, else the zig of the ziglang package, else zig on $PATH."""
    if os.environ.get("PLYC_ZIG"):
        return shutil.which(os.environ["PLYC_ZIG"])
    spec = importlib.util.find_spec("ziglang")
    if spec and spec.origin:
        zig = Path(spec.origin).parent / "zig"
        if os.access(zig, os.X_OK):
            return str(zig)
    return shutil.which("zig")


ZIG_HINT = "pip install ziglang (zig's C compiler builds the musl tracers), or set $PLYC_ZIG"


def cc(target: str, zig: Optional[str] = None) -> list:
    """The C compiler argv for target."""
    zig = zig or find_zig()
    if not zig:
        raise ToolchainError(f"no zig for a musl build: {ZIG_HINT}")
    t = TARGETS[target]
    return [zig, "cc", "-target", t.triple, *t.flags]


class _Runner:
    def __init__(self, what: str, verbose: bool):
        self.what, self.verbose = what, verbose

    def __call__(self, cmd, cwd=None, check=True):
        cmd = [str(c) for c in cmd]
        if self.verbose:
            print("+ " + " ".join(cmd), flush=True)
        proc = children.run(cmd, capture_output=True, text=True, cwd=cwd)
        if proc.returncode != 0 and check:
            raise ToolchainError(f"{self.what} failed:\n+ {' '.join(cmd)}\n"
                                 f"{(proc.stderr or proc.stdout).strip()[-3000:]}")
        return proc


def sources(verbose: bool = False) -> Path:
    """Debian's libbpf, elfutils and zlib sources, unpacked (with Debian's
    patches) under musl/src, the first time only."""
    src = base() / "src"
    if all(_one(src, p) for p in SOURCE_PACKAGES):
        return src
    for tool in ("apt-get", "dpkg-source"):
        if not shutil.which(tool):
            raise ToolchainError(f"fetching the library sources for musl needs {tool} "
                                 "(Debian: apt-get install apt dpkg-dev)")
    run = _Runner("fetching the library sources for musl", verbose)
    state = base() / "apt"
    for d in ("lists/partial", "cache/archives/partial"):
        (state / d).mkdir(parents=True, exist_ok=True)
    (state / "status").touch()
    signed = f" [signed-by={KEYRING}]" if os.path.exists(KEYRING) else ""
    (state / "sources.list").write_text(f"deb-src{signed} {ARCHIVE} {SUITE} main\n")
    opts = ["-o", f"Dir::Etc::SourceList={state / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={state / 'lists'}", "-o", f"Dir::State::status={state / 'status'}",
            "-o", f"Dir::Cache={state / 'cache'}", "-o", "APT::Sandbox::User=root", "-q"]
    run(["apt-get", *opts, "update"])
    tmp = base() / f"src.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    run(["apt-get", *opts, "source", "--download-only", *SOURCE_PACKAGES], cwd=tmp)
    for dsc in sorted(tmp.glob("*.dsc")):
        # apt checked the files against the signed Sources index.
        run(["dpkg-source", "--no-check", "-x", dsc.name], cwd=tmp)
    for f in tmp.iterdir():
        if f.is_file():
            f.unlink()
    shutil.rmtree(state / "lists", ignore_errors=True)   # 20 MB, not needed again
    shutil.rmtree(src, ignore_errors=True)
    os.rename(tmp, src)
    missing = [p for p in SOURCE_PACKAGES if not _one(src, p)]
    if missing:
        raise ToolchainError(f"the sources of {', '.join(missing)} did not unpack into {src}")
    return src


def _one(src: Path, package: str) -> Optional[Path]:
    found = sorted(d for d in src.glob(f"{package}-*") if d.is_dir()) if src.is_dir() else []
    return found[-1] if found else None


def make_variable(text: str, name: str) -> list:
    """The words of `name = ...` in a Makefile, continuation lines joined."""
    joined = text.replace("\\\n", " ")
    m = re.search(rf"^{re.escape(name)}\s*:?=(.*)$", joined, re.M)
    if not m:
        raise ToolchainError(f"no {name} in the library's build file")
    return m.group(1).split()


def _version(directory: Path) -> str:
    return directory.name.partition("-")[2]


def prepare(target: str, verbose: bool = False) -> Path:
    """The target's libbpf.a, libelf.a and libz.a for musl (and their
    headers), built the first time; the prefix that holds them."""
    if target not in TARGETS:
        raise ToolchainError(f"no musl target '{target}' (known: {', '.join(TARGETS)})")
    out = prefix(target)

    def build():
        with progress.step(f"building libbpf, libelf and zlib for {target} with musl, once"):
            _build(target, out, verbose)
    built_once(base(), lambda: ready(target), build)
    return out


def _build(target: str, out: Path, verbose: bool) -> Path:
    compiler = cc(target)
    build_libraries(compiler, [compiler[0], "ar"], opt_flags(target), ELFUTILS_CONFIG, out,
                    f"the {target} musl libraries", verbose,
                    link=[*opt_flags(target), "-static", *SIZE_LDFLAGS])
    if not ready(target):
        raise ToolchainError(f"the {target} musl libraries at {out} are incomplete")
    return out


def build_libraries(compiler: list, ar: list, cflags: list, config: str, out: Path, what: str,
                    verbose: bool, link: list):
    """zlib, libelf and libbpf from Debian's sources as static archives in
    out/lib, their headers in out/include, with `compiler` (zig's cc here;
    a cross gcc for a glibc target without Debian packages: plyc/sysroot.py).
    `config`: elfutils' config.h for the C library; `link`: the flags of a
    static link that checks the C library links (and has zig build musl)."""
    src = sources(verbose)
    run = _Runner(f"building {what}", verbose)
    tmp = Path(f"{out}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    inc, lib, obj = tmp / "include", tmp / "lib", tmp / "obj"
    for d in (inc / "bpf", lib, obj / "z", obj / "elf", obj / "bpf"):
        d.mkdir(parents=True)
    # Their warnings are theirs to fix: ours (-Werror) stay on our code.
    # The sources' and work folder's paths under fixed names (__FILE__ in
    # the libraries' messages): the same libraries from any cache.
    common = [*compiler, *cflags, "-w", "-g0", f"-ffile-prefix-map={src}=/plyc-musl-src",
              f"-ffile-prefix-map={tmp}=/plyc-musl-build"]

    zlib = _one(src, "zlib")
    mk = (zlib / "Makefile.in").read_text()
    zsrc = [zlib / w.replace(".o", ".c") for w in make_variable(mk, "OBJZ") + make_variable(mk, "OBJG")]
    _compile(run, [*common, "-D_LARGEFILE64_SOURCE=1", "-DHAVE_HIDDEN", "-DHAVE_UNISTD_H", "-DHAVE_STDARG_H",
                   *ZLIB_FLAGS], zsrc, obj / "z")
    for h in ("zlib.h", "zconf.h"):
        shutil.copy(zlib / h, inc / h)

    elfutils = _one(src, "elfutils")
    libelf = elfutils / "libelf"
    (obj / "config.h").write_text(config.format(version=_version(elfutils)))
    esrc = [libelf / w for w in make_variable((libelf / "Makefile.am").read_text(), "libelf_a_SOURCES")]
    # Without USE_ZSTD: libelf reads zlib-compressed sections only, and the
    # tracer carries no zstd.
    _compile(run, [*common, "-DHAVE_CONFIG_H", "-I", obj, "-I", libelf, "-I", elfutils / "lib", "-I", inc],
             esrc, obj / "elf")
    for h in ("libelf.h", "gelf.h", "nlist.h"):
        shutil.copy(libelf / h, inc / h)

    libbpf = _one(src, "libbpf") / "src"
    mk = (libbpf / "Makefile").read_text()
    bsrc = [libbpf / w.replace(".o", ".c") for w in make_variable(mk, "OBJS")]
    bsrc = [STANDIN_DIR / LIBBPF_STANDINS[f.name] if f.name in LIBBPF_STANDINS else f for f in bsrc]
    _compile(run, [*common, "-std=gnu89", "-D_LARGEFILE64_SOURCE", "-D_FILE_OFFSET_BITS=64", "-I", libbpf,
                   "-I", libbpf.parent / "include", "-I", libbpf.parent / "include/uapi", "-I", inc],
             bsrc, obj / "bpf")
    for h in make_variable(mk, "HEADERS"):
        shutil.copy(libbpf / h, inc / "bpf" / h)

    for name, d in (("libz.a", "z"), ("libelf.a", "elf"), ("libbpf.a", "bpf")):
        run([*ar, "rcs", lib / name, *sorted((obj / d).glob("*.o"))])
    # zig builds musl itself for the target on its first static link (a
    # minute or two, in zig's own cache): here, not in the first tracer build.
    (obj / "main.c").write_text("int main(void) { return 0; }\n")
    run([*compiler, *link, obj / "main.c", "-o", obj / "main"])
    shutil.rmtree(obj)
    if all((out / "lib" / f).exists() for f in LIBS):
        shutil.rmtree(tmp, ignore_errors=True)   # another build won the race: others may be using its
    else:
        shutil.rmtree(out, ignore_errors=True)   # what an interrupted build left
        try:
            os.rename(tmp, out)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)


def _compile(run, argv: list, srcs: list, objdir: Path):
    def one(src: Path):
        run([*argv, "-c", src, "-o", objdir / (src.stem + ".o")])
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(one, srcs))
