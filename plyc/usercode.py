"""The user's own BPF C compiled with a program (bpftrace's `import
"lib.bpf.c";`): how each file is compiled, what it may include, and where
clang's messages about it point.

Each file is its own translation unit, as bpftrace 0.27 builds it: it may
include <vmlinux.h> (the build's kernel BTF, dumped by bpftool), libbpf's
<bpf/bpf_helpers.h>, <bpf/bpf_core_read.h>, <bpf/bpf_tracing.h>, clang's
freestanding headers (<stdint.h>) and the UAPI ones (<linux/types.h>); none
of plyc's own definitions is in its way. Every
function in it is made always_inline (a clang pragma around its text), so
that the script's calls are inlined into the probes' programs when the
program's and the files' bitcode are linked (driver.link): the verifier
sees the code where it is called, as in bpftrace, never a global function
it would check alone. Compiled with clang's default warnings, not plyc's
-Wall -Werror: the C is the user's, as bpftrace compiles it; its warnings
are printed at their lines, its errors stop the build there."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Optional

from . import children
from .cachedir import ToolchainError
from .quoting import quoted
from .span import SourceFile

# What clang is given, beyond the target: bpftrace's -O2, and -g for the
# BTF that types the functions (and that CO-RE needs); a file with no
# function leaves the always_inline pragma unused, which is no news to its author.
# -ffreestanding: <stdint.h>, <stdbool.h>, <stddef.h> are clang's own, as
# bpftrace gives its own (the C library's want its target's headers).
FLAGS = ["-O2", "-g", "-fno-stack-protector", "-ffreestanding", "-Wno-pragma-clang-attribute"]


def include_flags(triplet: str) -> list:
    """The target's multiarch headers (<asm/types.h>, which <linux/types.h>
    includes), searched after the rest, where the machine has them."""
    d = f"/usr/include/{triplet}"
    return ["-idirafter", d] if os.path.isdir(d) else []
# A file clang takes longer than this on (a `#include "/dev/zero"`) is given up
TIMEOUT = 120


def wrapped(source: SourceFile) -> str:
    """The text clang compiles for one file: its own, at its own lines and
    under its own name, every function in it always_inline."""
    return ("#pragma clang attribute push (__attribute__((always_inline)), apply_to = function)\n"
            f"#line 1 {quoted(source.tracer_name or source.name)}\n"
            f"{source.text}\n"
            "#pragma clang attribute pop\n")


def vmlinux_header(btf_path: Optional[str], folder: Path) -> None:
    """<vmlinux.h> in folder: the build's kernel types (bpftool's dump of
    the BTF plyc types the script with), only when a file includes it."""
    import shutil
    path = btf_path or "/sys/kernel/btf/vmlinux"
    tool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    if not os.path.exists(tool):
        raise ToolchainError("a C import including <vmlinux.h> needs bpftool (apt-get install bpftool)")
    with open(folder / "vmlinux.h", "wb") as out:
        proc = children.run([tool, "btf", "dump", "file", path, "format", "c"], stdout=out,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise ToolchainError(f"cannot make <vmlinux.h> from {path}: "
                             f"{proc.stderr.decode(errors='replace').strip()}")


def wants_vmlinux(sources) -> bool:
    return any(re.search(r'#\s*include\s*[<"]vmlinux\.h[>"]', s.text) for s in sources)


def arch_defines(arch) -> list:
    """The target's defines, as the program's own (bpf_tracing.h's PT_REGS_*)."""
    return [f"-D__TARGET_ARCH_{arch.bpf_arch}", *(f"-D{d}" for d in arch.bpf_defines)]


def compile_one(clang: str, arch, include: Path, source: SourceFile, out: Path, bitcode: bool,
                bpf_target: str = "") -> subprocess.CompletedProcess:
    """source compiled for arch (an arch.Arch) in folder include (its
    wrapped text there as out's name with .c), into out: an object, or LLVM
    bitcode."""
    src = out.with_suffix(".c")
    src.write_text(wrapped(source))
    cmd = [clang, "-target", bpf_target or arch.bpf_target, *arch_defines(arch), *FLAGS, "-I", str(include),
           *include_flags(arch.triplet),
           "-c", str(src), "-o", str(out)] + (["-emit-llvm"] if bitcode else [])
    try:
        return children.run(cmd, capture_output=True, text=True, cwd=str(include), timeout=TIMEOUT,
                            stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 1, "", f"{source.tracer_name or source.name}:1:1: error: "
                                                       f"clang took more than {TIMEOUT} s")


MESSAGE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?:fatal )?(?P<sev>error|warning): (?P<text>.*)$")


def messages(stderr: str, source: SourceFile) -> list:
    """(severity, line, col, text) of each of clang's errors and warnings
    in source's own lines; those in a header it includes point at the
    #include that brought it in ("In file included from" names that line),
    where the file has one, else at its first line."""
    name = source.tracer_name or source.name
    out, included_at = [], None
    for line in stderr.splitlines():
        inc = re.match(r"^In file included from (.*?):(\d+):", line)
        if inc:
            if inc.group(1) == name:
                included_at = int(inc.group(2))
            continue
        m = MESSAGE.match(line)
        if not m:
            continue
        if m.group("file") == name:
            out.append((m.group("sev"), int(m.group("line")), int(m.group("col")), m.group("text")))
        else:
            where = os.path.basename(m.group("file"))
            out.append((m.group("sev"), included_at or 1, 1, f"{where}: {m.group('text')}"))
        included_at = None
    return out


def llvm_tool(clang: str, name: str) -> Optional[str]:
    """clang's own LLVM's `name` (llvm-link): beside the clang binary it
    resolves to (/usr/lib/llvm-N/bin), else named for its version."""
    real = os.path.realpath(clang)
    beside = os.path.join(os.path.dirname(real), name)
    if os.access(beside, os.X_OK):
        return beside
    m = re.search(r"clang-(\d+)$", clang)
    for cand in ([f"/usr/lib/llvm-{m.group(1)}/bin/{name}", f"/usr/bin/{name}-{m.group(1)}"] if m else []) + \
            [f"/usr/bin/{name}"]:
        if os.access(cand, os.X_OK):
            return cand
    return None
