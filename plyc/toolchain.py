"""Turning generated C into a tracer: clang for the BPF object, the C
compiler for the loader, linked statically against libbpf, libelf and zlib
and a C library: glibc (the target's gcc and a Debian sysroot) or musl
(zig's cc and libraries plyc builds, plyc/musl.py). The runtime
(runtime-c/LAYER/*.c) is compiled once per compiler and flags and cached.
Failures show the command and its output."""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import children, package_dir
from . import arch as A
from . import progress
from .cachedir import CacheError, ToolchainError, cache_dir, trusted_dir, untrusted_file, writing


WARNINGS = ["-Wall", "-Wextra", "-Werror"]
BPF_WARNINGS = ["-Wall", "-Werror"]
# The BPF program's C: the script's integers wrap on 64 bits (C's signed
# overflow is undefined, and clang may fold `a + 1 > a` to true without
# -fwrapv, which also makes a constant that overflows wrap rather than stop the
# build: -Wno-integer-overflow); a script's own tautology (`$a > $a`, `(u8)x < 300`) is the
# script's to write, not a warning that stops its build.
BPF_FLAGS = ["-fwrapv", "-Wno-tautological-compare", "-Wno-integer-overflow"]


# runtime-c's folders of loader sources, the lowest layer first (bpf/ is
# the BPF side's headers, compat/ a toolchain's shims: neither is in here).
# __NR_ names that number no syscall: a count, a range's start (asm-generic)
NOT_SYSCALLS = frozenset({"syscalls", "arch_specific_syscall"})
RUNTIME_LAYERS = ("core", "symbols", "values", "maps", "output", "io", "metrics", "probes", "providers", "load")


def runtime_dir() -> Path:
    return Path(package_dir()) / "runtime-c"


# Where a build's work folder and plyc's runtime sources are, as the tracer
# records them (debug information, BTF's line info, __FILE__): fixed names,
# so two builds of a script with the same options are the same bytes
# wherever they ran (docs/toolchain.md, "Reproducible builds").
BUILD_DIR_NAME = "/plyc-build"
RUNTIME_DIR_NAME = "/plyc-runtime"


def reproducible(workdir: Path) -> list:
    """The compiler flags that write workdir (where the command runs) and
    plyc's runtime folder under fixed names. gcc, clang and zig cc take them."""
    flags = []
    for path, name in ((Path(workdir), BUILD_DIR_NAME), (runtime_dir(), RUNTIME_DIR_NAME)):
        # as given (the -I and source paths) and resolved (runtime-c is a link in a checkout)
        for form in dict.fromkeys((str(path.absolute()), str(path.resolve()))):
            flags.append(f"-ffile-prefix-map={form}={name}")
    return flags


def find_clang() -> Optional[str]:
    for name in [os.environ.get("PLYC_CLANG"), "clang"] + [f"clang-{v}" for v in range(20, 13, -1)]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


LIBS = ["-lbpf", "-lelf", "-lz"]
LIBCS = ("glibc", "musl")


def default_libc() -> str:
    """$PLYC_LIBC, else glibc."""
    return os.environ.get("PLYC_LIBC") or "glibc"


def find_cc(target: str, sysroot: Optional[str] = None) -> tuple:
    """The C compiler for target as the user's build environment says: $CC
    (a Yocto SDK's), else $CROSS_COMPILE + gcc (kernel style), else the
    native gcc, else the Debian cross compiler. Returns (cc argv, $CFLAGS,
    the sysroot of --sysroot, $SYSROOT or $SDKTARGETSYSROOT, or None);
    ToolchainError when that compiler is not installed."""
    cc = shlex.split(os.environ.get("CC", ""))
    if not cc:
        if os.environ.get("CROSS_COMPILE"):
            cc = [os.environ["CROSS_COMPILE"] + "gcc"]
        elif A.is_native(target):
            cc = [shutil.which("gcc") or shutil.which("cc") or "cc"]
        else:
            cc = [f"{A.get(target).triplet}-gcc"]
    cc = program_path(cc)
    if not shutil.which(cc[0]):
        raise ToolchainError(f"no C compiler for {target}: {cc[0]} is not installed "
                             f"(apt-get install {A.get(target).cc_package}; "
                             "or set $CC or $CROSS_COMPILE)")
    sysroot = sysroot or os.environ.get("SYSROOT") or os.environ.get("SDKTARGETSYSROOT") or None
    return cc, absolute_paths(shlex.split(os.environ.get("CFLAGS", ""))), \
        os.path.abspath(sysroot) if sysroot else None


def program_path(argv: list) -> list:
    """argv with its program made absolute where it is a relative path
    (./bin/cc): the compiler runs in the build's work folder, the path
    means the folder plyc was run from (as absolute_paths' flags do); a
    bare name is looked for on $PATH."""
    if argv and "/" in argv[0] and not os.path.isabs(argv[0]):
        return [os.path.abspath(argv[0]), *argv[1:]]
    return argv


def user_compiler() -> str:
    """Which variable names the user's own compiler (an SDK's), or ""."""
    return next((v for v in ("CC", "CROSS_COMPILE") if os.environ.get(v, "").strip()), "")


def find_ar(cc: list) -> list:
    """$AR, else the archiver beside the compiler (an SDK's prefixed
    `-ar`), else the machine's: a plain error when it is not there."""
    if os.environ.get("AR", "").strip():
        ar = program_path(shlex.split(os.environ["AR"]))
        what = "$AR"
    elif os.path.basename(cc[0]).endswith("gcc"):
        ar = [cc[0][:-3] + "ar"]
        what = f"the archiver beside {cc[0]}"
    else:
        ar, what = ["ar"], "ar"
    if not shutil.which(ar[0]):
        raise ToolchainError(f"no archiver: {what} ({ar[0]}) is not installed; "
                             "set $AR to the SDK's ar (or binutils' ar)")
    return ar


def compiler_sysroot(argv: list) -> Optional[str]:
    """The sysroot a compiler command uses: its --sysroot, else the one it
    was built with (-print-sysroot), unless that is / (Debian's)."""
    for i, a in enumerate(argv):
        if a.startswith("--sysroot="):
            return a.partition("=")[2]
        if a == "--sysroot" and i + 1 < len(argv):
            return argv[i + 1]
    proc = children.run([*argv, "-print-sysroot"], capture_output=True, text=True)
    root = proc.stdout.strip() if proc.returncode == 0 else ""
    return root if root and os.path.realpath(root) != "/" and os.path.isdir(root) else None


def _absolute(path: str) -> str:
    """path made absolute, unless it is the sysroot's (`=dir`, `$SYSROOT/dir`)."""
    return path if path.startswith(("=", "$")) else os.path.abspath(path)


# Options whose value is a path, given as the next argument or joined.
PATH_OPTIONS = ("-I", "-L", "-B", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "--sysroot")


def absolute_paths(flags: list) -> list:
    """$CFLAGS and $LDFLAGS with their relative paths made absolute: the
    compiler runs in the build's work folder (reproducible), not in the
    folder plyc was run from, where they were meant."""
    out, expect = [], False
    for f in flags:
        if expect:
            out.append(_absolute(f))
            expect = False
            continue
        if f in PATH_OPTIONS:
            expect = True
            out.append(f)
            continue
        for opt in PATH_OPTIONS:
            joined = opt + "=" if opt == "--sysroot" else opt
            if f.startswith(joined) and len(f) > len(joined):
                f = joined + _absolute(f[len(joined):])
                break
        out.append(f)
    return out


@dataclass
class Toolchain:
    """The compilers and flags for one target, found the way users' build
    environments say: $CC/$CFLAGS/$LDFLAGS (a Yocto SDK's environment),
    else $CROSS_COMPILE (kernel style), else the Debian cross compiler;
    libraries from --sysroot, $SYSROOT or $SDKTARGETSYSROOT (through
    pkg-config --static when it knows them), else plyc's Debian sysroot."""
    target: str = "x86_64"
    verbose: bool = False
    clang: str = ""
    cc: list = field(default_factory=list)
    cflags: list = field(default_factory=list)
    ldflags: list = field(default_factory=list)
    libs: list = field(default_factory=lambda: list(LIBS))
    ar: list = field(default_factory=lambda: ["ar"])
    # runtime-c/compat/ sources linked after the libraries: what plyc's
    # Debian sysroot of another release needs from the C library it lacks.
    compat: list = field(default_factory=list)
    libc: str = "glibc"
    opt: list = field(default_factory=lambda: ["-O2"])   # the loader's and runtime's optimisation
    _runtime_lib: Optional[Path] = field(default=None, init=False, repr=False, compare=False)
    _runtime_key: Optional[str] = field(default=None, init=False, repr=False, compare=False)
    _key_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @classmethod
    def detect(cls, target: str = "x86_64", verbose: bool = False, sysroot: Optional[str] = None,
               libc: Optional[str] = None) -> "Toolchain":
        clang = find_clang()
        if not clang:
            raise ToolchainError("clang is not installed (needed to compile BPF); run `plyc doctor`")
        libc = libc or default_libc()
        if libc not in LIBCS:
            raise ToolchainError(f"unknown C library '{libc}' (glibc or musl)")
        sdk = user_compiler()
        if libc == "musl" and not sdk:
            return cls.musl(target, verbose, clang, sysroot)
        native = A.is_native(target)
        if A.get(target).no_debian_glibc and not sdk:
            raise ToolchainError(f"no glibc build for {target}: {A.get(target).no_debian_glibc}; "
                                 f"build with --libc musl, or set $CC to an SDK's {target} compiler")
        cc, cflags, sysroot = find_cc(target, sysroot)
        tc = cls(target, verbose, clang, cc, cflags, absolute_paths(shlex.split(os.environ.get("LDFLAGS", ""))))
        tc.ar = find_ar(cc)
        if libc == "musl":
            tc.use_musl_sdk(sdk)
        if sdk and not sysroot:
            # The SDK's compiler knows its own sysroot (Buildroot's and
            # OpenWrt's wrappers, CFLAGS' --sysroot): its C library, not
            # Debian's, is what the tracer links.
            sysroot = compiler_sysroot(cc + cflags)
        if sysroot:
            tc.use_sysroot(Path(sysroot), explicit=True)
        elif libc == "musl":
            tc.use_sdk_libraries(None)
        elif not native:
            from . import sysroot as debian_sysroot
            tc.use_sysroot(debian_sysroot.prepare(target, verbose), explicit=False)
            if A.get(target).debian_release:
                tc.compat = [runtime_dir() / "compat" / "trixie-on-bookworm.c"]
        return tc

    @classmethod
    def musl(cls, target: str, verbose: bool, clang: str, sysroot: Optional[str]) -> "Toolchain":
        """zig's cc for target and plyc's musl libraries, built on first use.
        $CC, $CFLAGS and --sysroot describe a glibc environment: not used."""
        from . import musl
        if sysroot:
            raise ToolchainError("--sysroot is for glibc builds: a musl build uses the libraries "
                                 "plyc builds (plyc sysroot --libc musl --target T)")
        if target not in musl.TARGETS:
            raise ToolchainError(f"no musl build for {target}")
        cc = musl.cc(target)
        root = musl.prepare(target, verbose)
        return cls(target, verbose, clang, cc, cflags=[f"-I{root / 'include'}"],
                   ldflags=musl.link_flags(target, runtime_dir()), libs=[f"-L{root / 'lib'}", *LIBS], ar=[cc[0], "ar"],
                   libc="musl", opt=musl.opt_flags(target),
                   compat=[runtime_dir() / "compat" / f for f in musl.TARGETS[target].compat])

    def use_musl_sdk(self, sdk: str):
        """--libc musl with the user's compiler ($CC, $CROSS_COMPILE: an
        OpenWrt SDK's): it must link musl; the tracer is built for size as
        zig's are."""
        from . import musl, sdklibs
        if sdklibs.c_library(self.cc + self.cflags) != "musl":
            raise ToolchainError(f"--libc musl: {sdk} ({' '.join(self.cc)}) links glibc, not musl: "
                                 "leave out --libc musl to build with it, or unset $CC and "
                                 "$CROSS_COMPILE to build with zig's musl")
        self.libc, self.opt = "musl", list(musl.SIZE_CFLAGS)
        self.ldflags += musl.SIZE_LDFLAGS

    def use_sdk_libraries(self, root: Optional[Path]):
        """libbpf, libelf and zlib built for this compiler (and sysroot),
        once: an SDK's sysroot holds only the C library."""
        from . import sdklibs
        prefix = sdklibs.prepare(self.target, self.cc, self.ar, self.cflags, root, self.opt, self.verbose)
        self.cflags.append(f"-I{prefix / 'include'}")
        self.libs = [f"-L{prefix / 'lib'}", *LIBS]

    def use_sysroot(self, root: Path, explicit: bool):
        if not root.is_dir():
            raise ToolchainError(f"sysroot {root} does not exist")
        if explicit and "--sysroot" not in " ".join(self.cc + self.cflags):
            self.cflags.append(f"--sysroot={root}")
            self.ldflags.append(f"--sysroot={root}")
        from . import sdklibs
        triplet = A.get(self.target).triplet
        pcdirs = [root / "usr/lib" / triplet / "pkgconfig", root / "usr/lib/pkgconfig",
                  root / "usr/lib64/pkgconfig", root / "usr/share/pkgconfig"]
        env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=str(root),
                   PKG_CONFIG_LIBDIR=":".join(str(d) for d in pcdirs))
        pc = shutil.which("pkg-config")
        proc = children.run([pc, "--static", "--cflags", "--libs", "libbpf"], capture_output=True,
                              text=True, env=env) if pc else None
        if proc and proc.returncode == 0 and "-lbpf" in proc.stdout:
            flags = shlex.split(proc.stdout)
            self.cflags += [f for f in flags if f.startswith("-I")]
            self.libs = [f for f in flags if not f.startswith("-I")]
        elif explicit and not sdklibs.has_libraries(root, triplet):
            self.use_sdk_libraries(root)
        else:
            self.cflags += [f"-I{root / 'usr/include'}"]
            self.libs = [*(f"-L{d}" for d in sdklibs.lib_dirs(root, triplet)), *LIBS]

    def run(self, cmd: list, what: str, cwd: Optional[Path] = None, input: Optional[str] = None) \
            -> subprocess.CompletedProcess:
        self.show(cmd)
        return checked(children.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, input=input),
                       what)

    def show(self, cmd: list):
        """The command about to run, with -v."""
        if self.verbose:
            print("+ " + shlex.join(str(c) for c in cmd), flush=True)

    def bpf_command(self, src: Path, out: Path, include: Path, bpf_target: str = "", bitcode: bool = False) -> list:
        """clang's command compiling the BPF C src into out (LLVM bitcode
        when bitcode), in the work folder include."""
        rt = runtime_dir()
        src, out, include = (Path(p).absolute() for p in (src, out, include))
        arch = A.get(self.target)
        return [self.clang, "-target", bpf_target or arch.bpf_target, f"-D__TARGET_ARCH_{arch.bpf_arch}",
                *(f"-D{d}" for d in arch.bpf_defines), "-O2", "-g", *BPF_WARNINGS, *BPF_FLAGS, *reproducible(include),
                "-I", rt / "bpf", "-I", rt / "bpf" / "include", "-I", include, "-c", src, "-o", out,
                *(["-emit-llvm"] if bitcode else [])]

    def compile_bpf(self, src: Path, out: Path, include: Path, bpf_target: str = "", user_c: list = ()):
        """src into the BPF object out; user_c: the C files the script
        imports (span.SourceFile), each compiled apart (usercode.py) and
        linked with it as LLVM bitcode, their functions inlined."""
        src, out, include = (Path(p).absolute() for p in (src, out, include))
        arch = A.get(self.target)
        target = bpf_target or arch.bpf_target
        main = out.with_suffix(".main.bc") if user_c else out
        self.run(self.bpf_command(src, main, include, target, bitcode=bool(user_c)), BPF_COMPILE, cwd=include)
        if not user_c:
            return
        from . import usercode
        link = usercode.llvm_tool(self.clang, "llvm-link")
        if link is None:
            raise ToolchainError(f"importing a C file needs llvm-link, of {self.clang}'s LLVM (apt-get install llvm)")
        parts = [main]
        for i, source in enumerate(user_c):
            bc = include / f"user{i}.bc"
            proc = usercode.compile_one(self.clang, arch, include, source, bc, bitcode=True, bpf_target=target)
            if proc.returncode != 0:
                raise ToolchainError(f"compiling {source.name} failed:\n{proc.stderr.rstrip()}")
            parts.append(bc)
        self.run([link, *parts, "-o", out.with_suffix(".all.bc")], "linking the imported C files", cwd=include)
        # the functions inlined into the probes (their always_inline), then the object
        self.run([self.clang, "-target", target, "-O2", "-g", "-Wno-override-module", "-c",
                  out.with_suffix(".all.bc"), "-o", out], BPF_COMPILE, cwd=include)

    def runtime_lib(self) -> Path:
        """libplycrt.a for this compiler and flags, built once and cached
        (with libplyccompat.a beside it when the toolchain has compat sources);
        looked for once per build."""
        if self._runtime_lib is None:
            self._runtime_lib = self._find_runtime_lib()
        return self._runtime_lib

    def runtime_key(self) -> str:
        """What decides the runtime library (and the loader's precompiled
        header): the runtime's sources and headers, this compiler (its
        version), its flags and the target; computed once per build (a
        second caller waits for the first: early.py asks in a thread)."""
        with self._key_lock:
            return self._compute_runtime_key()

    def _compute_runtime_key(self) -> str:
        if self._runtime_key is None:
            rt = runtime_dir()
            h = hashlib.sha256()
            top = str(rt) + os.sep

            def sources_read():
                # The sources are in a folder per layer (docs/design.md, "The
                # runtime"); the headers, the interfaces, at the top.
                for p in sorted(rt.glob("*.[ch]")) + sorted(p for layer in RUNTIME_LAYERS for p in (rt / layer).glob("*.[ch]")) + self.compat:
                    path = str(p)
                    with open(path, "rb") as f:
                        h.update((path[len(top):] if path.startswith(top) else p.name).encode() + f.read())
                h.update(repr((self.cc, self.cflags, self.opt, self.target, BUILD_DIR_NAME, RUNTIME_DIR_NAME)).encode())

            # the compiler's version asked while the sources are read
            version = at_once(lambda: self.run([*self.cc, "--version"], "running the C compiler"), sources_read)[0]
            h.update(version.stdout.encode())
            self._runtime_key = h.hexdigest()
        return self._runtime_key

    def _cached(self, kind: str, key: str, files: tuple, what: str, build: Callable[[Path], None]) -> Path:
        """The cache's folder KIND-TARGET[-musl]-KEY holding files, made by
        build(folder) once (in a folder of its own, renamed into place: no
        half entry is ever seen); refused unless only we could have written
        it (the compilers read it into every tracer)."""
        folder = cache_dir() / f"{kind}-{self.target}{'-musl' if self.libc == 'musl' else ''}-{key[:16]}"
        if (folder / files[0]).exists():
            trusted_dir(folder, f"plyc's {what} folder")
            for name in files:
                problem = untrusted_file(folder / name)
                if problem:
                    raise CacheError(f"plyc's {what} {folder / name} {problem}: not used; remove {folder}")
            return folder
        tmp = Path(str(folder) + f".tmp{os.getpid()}")
        try:
            with writing(tmp.parent):
                tmp.mkdir(parents=True, exist_ok=True)
                build(tmp)
                # whatever the umask: writable by us only, as the check above wants
                for f in tmp.iterdir():
                    os.chmod(f, 0o644)
                os.chmod(tmp, 0o755)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)     # a failure or a signal leaves no half entry
            raise
        try:
            os.rename(tmp, folder)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)   # another build won the race
        return folder

    def _find_runtime_lib(self) -> Path:
        rt = runtime_dir()
        sources = sorted(p for layer in RUNTIME_LAYERS for p in (rt / layer).glob("*.c"))

        def build(tmp: Path):
            with progress.step(f"building the tracer runtime for {self.target} ({self.libc or 'glibc'}), once"):
                self._build_runtime(rt, sources, tmp)

        files = ("libplycrt.a",) + (("libplyccompat.a",) if self.compat else ())
        return self._cached("rt", self.runtime_key(), files, "runtime library", build) / "libplycrt.a"

    def _build_runtime(self, rt: Path, sources: list, tmp: Path):
        """The runtime's objects and archives, built in tmp."""
        (tmp / "plyc_syscalls.h").write_text(self.syscall_table())
        objs = []
        for src in sources:
            obj = tmp / ("_".join(src.relative_to(rt).with_suffix(".o").parts))
            self.run([*self.cc, *self.opt, "-std=gnu11", *WARNINGS, *self.cflags, *reproducible(tmp), "-I", rt,
                      "-I", tmp, "-c", src, "-o", obj], f"compiling the tracer runtime ({src.name})", cwd=tmp)
            objs.append(obj)
        self.run([*self.ar, "rcs", tmp / "libplycrt.a", *objs], "archiving the tracer runtime")
        compat = []
        for src in self.compat:
            compat.append(tmp / (src.stem + ".o"))
            self.run([*self.cc, *self.opt, "-std=gnu11", *WARNINGS, *self.cflags, *reproducible(tmp),
                      "-c", src, "-o", compat[-1]], f"compiling the tracer runtime ({src.name})", cwd=tmp)
        if compat:
            self.run([*self.ar, "rcs", tmp / "libplyccompat.a", *compat], "archiving the tracer runtime")

    def syscall_table(self) -> str:
        """plyc_syscalls.h: PLYC_SYSCALL(name) for each syscall the target's
        <sys/syscall.h> numbers (__NR_name), for syscall_name()'s table
        (runtime-c/values/syscalls.c): the target's, as the device has no list."""
        return syscall_table(self.run([*self.cc, *self.cflags, *SYSCALL_MACROS], "listing the target's syscalls",
                                      input="#include <sys/syscall.h>\n").stdout)

    def keep_symbols(self) -> list:
        # zig's cc strips an -Os link unless asked for debug information.
        return ["-g"] if self.libc == "musl" else []

    def loader_flags(self, include: Path) -> list:
        """The C compiler's options for the tracer's own C (the loader, the
        embedded object), compiled in the work folder include."""
        return [*self.opt, "-std=gnu11", *WARNINGS, *self.cflags, *reproducible(include), "-I", runtime_dir(),
                "-I", include]

    def compile_loader(self, loader_c: Path, out: Path, include: Path, prelude: Optional[str] = None):
        """The script's loader C into an object, with the runtime library
        ready for the link (built meanwhile if this compiler has none cached):
        what does not wait for the BPF object, so it runs beside clang.
        prelude: the loader's fixed includes (loader_prelude's), compiled
        once into a precompiled header the loader is compiled with."""
        loader_c, out, include = (Path(p).absolute() for p in (loader_c, out, include))
        if prelude is not None:
            # the header's key is the runtime's: looked for first, then the
            # loader compiled with it and the runtime library found
            pch = self.loader_pch(prelude)
            self.run([*self.cc, *self.loader_flags(include), "-include", pch, "-c", loader_c, "-o", out],
                     "compiling the tracer's loader", cwd=include)
            self.runtime_lib()
            return
        # the runtime looked for (or built) while the loader compiles
        at_once(lambda: self.run([*self.cc, *self.loader_flags(include), "-c", loader_c, "-o", out],
                                 "compiling the tracer's loader", cwd=include), self.runtime_lib)

    def loader_pch(self, prelude: str) -> Path:
        """The loader's fixed includes as a header beside its precompiled
        form (gcc's .gch), for `-include`: built once per runtime, compiler
        and flags (half of the loader's compile is reading those headers).
        gcc uses the .gch only where it was made by this very compiler with
        these options, and reads the header's text otherwise: the object is
        the same bytes either way (tests/test_toolchain_quick.py)."""
        key = hashlib.sha256(repr((self.runtime_key(), prelude, self.opt, self.cflags)).encode()).hexdigest()

        def build(tmp: Path):
            (tmp / PCH_HEADER).write_text(prelude)
            self.run([*self.cc, *self.loader_flags(tmp), "-x", "c-header", tmp / PCH_HEADER,
                      "-o", tmp / (PCH_HEADER + ".gch")], "precompiling the loader's headers", cwd=tmp)

        return self._cached("pch", key, (PCH_HEADER + ".gch", PCH_HEADER), "loader header", build) / PCH_HEADER

    def link_loader(self, loader_o: Path, obj_c: Path, out: Path, include: Path, strip: bool = True,
                    linker: list = (), static: bool = True):
        """The loader's object (compile_loader's), the embedded BPF object
        (its C, or quick_embed's assembly) and the runtime, linked statically
        into the tracer out; linker: the C compiler's options choosing
        another linker (quick_link's); not static: against this machine's
        shared C library, libbpf, libelf and zlib (quick_link's)."""
        lib = self.runtime_lib()
        loader_o, obj_c, out, include = (Path(p).absolute() for p in (loader_o, obj_c, out, include))
        compat = [lib.parent / "libplyccompat.a"] if self.compat else []
        self.run([*self.cc, *self.loader_flags(include), *linker, loader_o, obj_c, lib, *(["-static"] if static else []),
                  *(["-s"] if strip else self.keep_symbols()), *self.ldflags, *self.libs, *compat, "-o", out],
                 "linking the tracer", cwd=include)

    def quick(self) -> bool:
        """Whether this toolchain builds for this machine with its own gcc and
        glibc (no $CC, $CFLAGS or sysroot of a build environment): where
        `plyc run` may take the quicker ways below, whose tracer is never
        shipped (docs/performance.md, "At the desk")."""
        return (A.is_native(self.target) and self.libc == "glibc" and not self.compat
                and not os.environ.get("CC") and not os.environ.get("CROSS_COMPILE")
                and not self.cflags and not self.ldflags and struct.calcsize("P") == 8)

    def quick_link(self) -> list:
        """The link options of a quick() build, whose tracer runs here only:
        gold when installed (half of ld.bfd's time), a position-dependent
        executable (as the static ones are), and (link_loader's static=False)
        this machine's shared libraries, not their archives: a static link
        copies and relocates the C library, libbpf, libelf and zlib, two
        thirds of its time. Not the target's default linker nor a program
        to ship, so never for `plyc build`."""
        return (["-fuse-ld=gold"] if shutil.which("ld.gold") else []) + ["-no-pie"]


# The loader's fixed includes, precompiled (Toolchain.loader_pch).
PCH_HEADER = "plyc_loader_prelude.h"
# What the loader C's prelude may hold: its includes of the C library's
# and the runtime's headers, _GNU_SOURCE, blank lines; nothing else.
PRELUDE_LINE = re.compile(r'(?:#define _GNU_SOURCE|#include <[A-Za-z0-9_./]+>|#include "plyc_[A-Za-z0-9_]+\.h")?')


def loader_prelude(loader_c: str, name: str) -> Optional[str]:
    """The loader C's fixed includes, from its `#define _GNU_SOURCE` to the
    include of its own header NAME.h (exclusive), for a precompiled header;
    None when the text is not of that shape."""
    lines = loader_c.split("\n")
    try:
        start, end = lines.index("#define _GNU_SOURCE"), lines.index(f'#include "{name}.h"')
    except ValueError:
        return None
    prelude = lines[start:end]
    if not all(PRELUDE_LINE.fullmatch(line) for line in prelude) or not any(line.startswith("#include") for line in prelude):
        return None
    return "\n".join(prelude) + "\n"


BPF_COMPILE = "compiling the BPF program"


def checked(proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    """A compiler's run: ToolchainError, with its command and output, when it failed."""
    if proc.returncode != 0:
        raise ToolchainError(f"{what} failed:\n+ {shlex.join(str(c) for c in proc.args)}\n"
                             f"{once_each((proc.stderr or proc.stdout).rstrip())}")
    return proc


def at_once(*calls) -> list:
    """Each call (a function of no arguments) run in a thread of its own,
    all at once: they wait on compilers, which run on the machine's other
    cores meanwhile. Their results in order; when any failed, the first
    one's exception (in the calls' order), once all have ended."""
    results, errors = [None] * len(calls), [None] * len(calls)

    def one(i):
        try:
            results[i] = calls[i]()
        except BaseException as err:       # noqa: B902  (raised again below, in the caller's thread)
            errors[i] = err

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(1, len(calls))]
    for t in threads:
        t.start()
    one(0)           # the first in this thread: a signal raised here stops the build
    for t in threads:
        t.join()
    for err in errors:
        if err is not None:
            raise err
    return results


# The C compiler's options that print the macros of its input (stdin).
SYSCALL_MACROS = ("-dM", "-E", "-x", "c", "-")


def syscall_table(macros: str) -> str:
    """plyc_syscalls.h's text from a compiler's -dM output of <sys/syscall.h>."""
    names = sorted({m.group(1) for m in re.finditer(r"^#define __NR_([a-z][a-z0-9_]*)\s", macros, re.M)}
                   - NOT_SYSCALLS)
    return "".join(f"PLYC_SYSCALL({n})\n" for n in names)


_BYTE_C = tuple(f"0x{b:02x}," for b in range(256))     # a byte as _c_array writes it


def _c_array(name: str, data: bytes) -> list:
    lines = [f"const unsigned char {name}[] __attribute__((aligned(8))) = {{"]
    for i in range(0, len(data), 16):
        lines.append("\t" + " ".join(map(_BYTE_C.__getitem__, data[i:i + 16])))
    if not data:
        lines.append("\t0,")
    lines += ["};", f"const size_t {name}_size = {len(data)};", ""]
    return lines


def embed_object(obj: bytes, out: Path, btf: bytes = b""):
    """The BPF object, and the kernel BTF it needs where the device has
    none, as C arrays (deterministic, no assembler tricks)."""
    lines = ["/* Generated by plyc: the BPF object, embedded. */", "#include <stddef.h>", ""]
    lines += _c_array("plyc_bpf_object", obj)
    lines += _c_array("plyc_embedded_btf", btf)
    out.write_text("\n".join(lines))


def quick_embed(obj: Path, out: Path, btf: Optional[Path] = None):
    """The BPF object (and BTF) embedded as embed_object's symbols by an
    assembly file that includes the files (.incbin) for a quick() build:
    assembled in no time, where the C arrays' compile takes tens of ms.
    The files are looked for relative to the link's folder (out's)."""
    lines = []
    for name, path in (("plyc_bpf_object", obj), ("plyc_embedded_btf", btf)):
        lines += ["\t.section .rodata", f"\t.globl {name}", f"\t.globl {name}_size", "\t.balign 8", f"{name}:"]
        lines.append(f'\t.incbin "{path.name}"' if path else "\t.byte 0")
        lines += ["\t.balign 8", f"{name}_size:", f"\t.quad {path.stat().st_size if path else 0}"]
    lines.append('\t.section .note.GNU-stack,"",@progbits')
    out.write_text("\n".join(lines) + "\n")


def min_core_btf(tc: "Toolchain", kernel_btf: Path, obj: Path, out: Path) -> bytes:
    """The part of the kernel's BTF the object's CO-RE relocations use."""
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    if not os.path.exists(bpftool):
        raise ToolchainError("embedding BTF needs bpftool (apt-get install bpftool)")
    if A.get(tc.target).big_endian:
        # bpftool (libbpf) opens objects of this machine's byte order only:
        # a little-endian twin of the program has the same CO-RE relocations.
        # The kernel's BTF stays big-endian, and so does what is cut from it.
        twin = obj.with_name(obj.stem + ".el.o")
        tc.compile_bpf(obj.with_suffix(".c"), twin, obj.parent, bpf_target="bpfel")
        obj = twin
    tc.run([bpftool, "gen", "min_core_btf", kernel_btf, out, obj], "cutting the kernel BTF down")
    return out.read_bytes()


DIAG_HEAD = re.compile(r"^(?:\S+:\d+:\d+: )?(?:fatal error|error|warning): ")


def once_each(output: str) -> str:
    """A compiler's output with every diagnostic shown once. clang's BPF
    back end reports some errors (a stack overflow) once per instruction
    involved: each repeat, with its source line, caret and notes, goes."""
    out, seen, keep = [], set(), True
    for line in output.splitlines():
        if DIAG_HEAD.match(line):
            keep = line not in seen
            seen.add(line)
        elif re.match(r"^\d+ (?:errors?|warnings?)( and \d+ \w+)? generated\.$", line):
            keep = True
        if keep:
            out.append(line)
    return "\n".join(out)


def translate_c_error(message: str, bpf_c_name: str, linemap: list, script: str) -> str:
    """Point compiler errors in generated BPF C at the script line they came
    from, each once."""
    out = []
    for line in message.splitlines():
        m = re.search(re.escape(bpf_c_name) + r":(\d+):\d+: (error|warning): (.*)", line)
        if m and 0 < int(m.group(1)) <= len(linemap) and linemap[int(m.group(1)) - 1]:
            text = (f"{script}:{linemap[int(m.group(1)) - 1]}: error: generated code does not compile: "
                    f"{m.group(3)} (a plyc bug; please report it with the script)")
            if text not in out:
                out.append(text)
    return "\n".join(out) if out else ""
