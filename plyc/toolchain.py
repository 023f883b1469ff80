"""Turning generated C into a tracer: clang for the BPF object, the C
compiler for the loader, linked statically against libbpf, libelf and zlib.
The runtime (runtime-c/*.c) is compiled once per compiler and flags and
cached. Failures show the command and its output."""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from importlib import resources as ir
from pathlib import Path
from typing import Optional

from .diag import PlycError, Diagnostic

WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-Wno-unused-variable",
            "-Wno-unused-function", "-Wno-missing-field-initializers"]
BPF_WARNINGS = ["-Wall", "-Werror", "-Wno-unused-variable", "-Wno-unused-function"]

ARCH_DEFINE = {"x86_64": "x86", "aarch64": "arm64", "armhf": "arm"}


class ToolchainError(Exception):
    pass


def runtime_dir() -> Path:
    return Path(str(ir.files("plyc").joinpath("runtime-c")))


def cache_dir() -> Path:
    base = os.environ.get("PLYC_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "plyc")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def find_clang() -> Optional[str]:
    for name in [os.environ.get("PLYC_CLANG"), "clang"] + [f"clang-{v}" for v in range(20, 13, -1)]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@dataclass
class Toolchain:
    target: str = "x86_64"
    verbose: bool = False
    clang: str = ""
    cc: list = field(default_factory=list)
    cflags: list = field(default_factory=list)
    ldflags: list = field(default_factory=list)

    @classmethod
    def detect(cls, target: str = "x86_64", verbose: bool = False) -> "Toolchain":
        clang = find_clang()
        if not clang:
            raise ToolchainError("clang is not installed (needed to compile BPF); run `plyc doctor`")
        cc = shlex.split(os.environ.get("CC", "")) or [shutil.which("gcc") or shutil.which("cc") or "cc"]
        return cls(target, verbose, clang, cc, shlex.split(os.environ.get("CFLAGS", "")),
                   shlex.split(os.environ.get("LDFLAGS", "")))

    def run(self, cmd: list, what: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
        if self.verbose:
            print("+ " + shlex.join(str(c) for c in cmd), flush=True)
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd)
        if proc.returncode != 0:
            raise ToolchainError(f"{what} failed:\n+ {shlex.join(str(c) for c in cmd)}\n"
                                 f"{(proc.stderr or proc.stdout).rstrip()}")
        return proc

    def compile_bpf(self, src: Path, out: Path, include: Path):
        rt = runtime_dir()
        self.run([self.clang, "-target", "bpf", f"-D__TARGET_ARCH_{ARCH_DEFINE[self.target]}",
                  "-O2", "-g", *BPF_WARNINGS, "-I", rt / "bpf", "-I", include, "-c", src, "-o", out],
                 "compiling the BPF program")

    def runtime_lib(self) -> Path:
        """libplycrt.a for this compiler and flags, built once and cached."""
        rt = runtime_dir()
        sources = sorted(rt.glob("*.c"))
        h = hashlib.sha256()
        for p in sorted(rt.glob("*.[ch]")):
            h.update(p.name.encode() + p.read_bytes())
        h.update(repr((self.cc, self.cflags, self.target)).encode())
        h.update(self.run([*self.cc, "--version"], "running the C compiler").stdout.encode())
        lib_dir = cache_dir() / f"rt-{self.target}-{h.hexdigest()[:16]}"
        lib = lib_dir / "libplycrt.a"
        if lib.exists():
            return lib
        tmp = Path(str(lib_dir) + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        objs = []
        for src in sources:
            obj = tmp / (src.stem + ".o")
            self.run([*self.cc, "-O2", "-std=gnu11", *WARNINGS, *self.cflags, "-I", rt, "-c", src, "-o", obj],
                     f"compiling the tracer runtime ({src.name})")
            objs.append(obj)
        ar = shutil.which((self.cc[0][:-3] + "ar") if self.cc[0].endswith("gcc") else "ar") or "ar"
        self.run([ar, "rcs", tmp / "libplycrt.a", *objs], "archiving the tracer runtime")
        try:
            os.rename(tmp, lib_dir)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)   # another build won the race
        return lib

    def link_loader(self, loader_c: Path, obj_c: Path, out: Path, include: Path, strip: bool = True):
        rt = runtime_dir()
        lib = self.runtime_lib()
        self.run([*self.cc, "-O2", "-std=gnu11", *WARNINGS, *self.cflags, "-I", rt, "-I", include,
                  loader_c, obj_c, lib, "-static", *(["-s"] if strip else []), *self.ldflags,
                  "-lbpf", "-lelf", "-lz", "-o", out], "linking the tracer")


def embed_object(obj: bytes, out: Path):
    """The BPF object as a C array (deterministic, no assembler tricks)."""
    lines = ["/* Generated by plyc: the BPF object, embedded. */", "#include <stddef.h>", "",
             "const unsigned char plyc_bpf_object[] __attribute__((aligned(8))) = {"]
    for i in range(0, len(obj), 16):
        lines.append("\t" + " ".join(f"0x{b:02x}," for b in obj[i:i + 16]))
    lines += ["};", "", "const size_t plyc_bpf_object_size = sizeof(plyc_bpf_object);", ""]
    out.write_text("\n".join(lines))


def translate_c_error(message: str, bpf_c_name: str, linemap: list, script: str) -> str:
    """Point compiler errors in generated BPF C at the script line they came from."""
    out = []
    for line in message.splitlines():
        m = re.search(re.escape(bpf_c_name) + r":(\d+):\d+: (error|warning): (.*)", line)
        if m and 0 < int(m.group(1)) <= len(linemap) and linemap[int(m.group(1)) - 1]:
            out.append(f"{script}:{linemap[int(m.group(1)) - 1]}: error: generated code does not compile: "
                       f"{m.group(3)} (a plyc bug; please report it with the script)")
    return "\n".join(out) if out else ""
