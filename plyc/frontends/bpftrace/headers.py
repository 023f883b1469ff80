"""Constants from the headers a script #includes (AF_INET from
<sys/socket.h>, EPERM from <errno.h>, DT_REG from <dirent.h>,
IPPROTO_ICMPV6 from <netinet/in.h>, runqlat's TASK_RUNNING from the
kernel's <linux/sched.h>), computed by a real C compiler.

bpftrace runs clang over the preamble with the build machine's headers:
kernel headers where it finds them ($BPFTRACE_KERNEL_SOURCE, else
/lib/modules/`uname -r`/source and build), and /usr/include; a script's
identifier naming a macro (or an enumerator) of those headers takes its
value. plyc does the same with clang: `-E -dM` says which names the
headers define, then the name is compiled as C's integer constant
(`long long x = (NAME);`, clang's LLVM IR holds the value), so that
nested macros (glibc's AF_INET is PF_INET), expressions, casts and the
headers' enumerators are C's answers, not a table's. A macro's expansion
is compiled alone first (kernel headers need not compile as a user
program), then with the headers (an expansion naming their enumerators).
Kernel headers are read with the kernel build's own flags (kernel_flags). Builds stay offline and reproducible:
only the build machine's headers are read.

Where clang can't read the headers (a header that is missing), plyc falls
back to `#define NAME literal` lines in the included files themselves, and
the note of the unknown identifier says what was looked at."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Optional

from ... import children
from ... import kernel_headers
from ... import arch as ARCH
from ...safefile import private_folder
from ...toolchain import find_clang
from .preamble import _literal

INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
# How long clang may take over the headers (the kernel's take about 1 s).
TIMEOUT = 60
# The compiler's file name for the lines plyc adds after the script's #includes.
MARK = "plyc-constant"


def kernel_dirs(env: dict) -> list:
    """The kernel source and build trees bpftrace would use, existing or not."""
    if env.get("BPFTRACE_KERNEL_SOURCE"):
        return [env["BPFTRACE_KERNEL_SOURCE"]] + [env[k] for k in ("BPFTRACE_KERNEL_BUILD",) if env.get(k)]
    base = f"/lib/modules/{os.uname().release}"
    return [f"{base}/source", f"{base}/build"]


def search_dirs(env: dict, arch: str, extra: tuple = ()) -> list:
    """Where an #include is looked for: the kernel's trees, -I's dirs, the
    target's C library headers (arch.py)."""
    dirs = []
    known = arch in ARCH.ARCHES
    for k in kernel_dirs(env):
        dirs += [f"{k}/include", f"{k}/arch/{ARCH.get(arch).kernel_arch if known else arch}/include",
                 f"{k}/include/uapi", f"{k}/include/generated/uapi"]
    return dirs + list(extra) + (list(ARCH.get(arch).header_dirs()) if known else []) + ["/usr/include"]


def include_lines(files: tuple) -> list:
    """--include FILE as the #include line that comes before the script's:
    a file that exists from where plyc runs by its absolute path, another
    name searched as <FILE> (clang's -include looks in the working
    directory first, then where #include <...> looks). The command line
    refuses names no #include line can hold (common.include_args)."""
    from . import ast as A
    out = []
    for name in files:
        line = f'#include "{os.path.abspath(name)}"' if os.path.isfile(name) else f"#include <{name}>"
        out.append(A.CText("preprocessor", line))
    return out


def kernel_flags(env: dict, arch: str) -> list:
    """clang's flags for a kernel tree's headers (kernel_headers.py: Debian
    splits a tree in two, source and build), or [] when there is no tree."""
    trees = [d for d in kernel_dirs(env) if os.path.isdir(os.path.join(d, "include"))]
    if not trees:
        return []
    src = next((d for d in trees if os.path.isdir(os.path.join(d, "include", "linux"))), trees[0])
    return kernel_headers.flags(src, trees[-1], arch) + ["-D__BPF_TRACING__"]


def find(header: str, dirs: list) -> Optional[str]:
    for d in dirs:
        path = os.path.join(d, header)
        if os.path.isfile(path):
            return path
    return None


class _Compiler:
    """clang over the script's #include lines, for one target and set of
    header directories (cached: the lowering asks once per name)."""

    def __init__(self, lines: tuple, env: dict, arch: str, dirs: tuple = (), kernel: bool = True):
        self.lines = lines
        self.clang = find_clang()
        try:
            triplet = ARCH.get(arch).triplet
        except Exception:          # an unknown target: the host's headers
            triplet = None
        # Kernel headers first, as bpftrace puts them; BPFTRACE_HAVE_BTF
        # defined, as the preamble reads it.
        # -I's dirs after the kernel's, as bpftrace passes them.
        tree = kernel_flags(env, arch) if kernel else []
        # the kernel's own headers are read (or -I's dirs, which may hold them)
        self.kernel_tree = bool(tree) or bool(dirs)
        self.flags = ([f"--target={triplet}"] if triplet else []) + tree + \
            [f"-I{d}" for d in dirs] + ["-DBPFTRACE_HAVE_BTF", "-w", "-ferror-limit=0"]
        self.problem: Optional[str] = None
        self.missing: list = []         # the #include'd headers clang found nowhere (left out)
        self._macros: Optional[dict] = None
        self._text: Optional[str] = None
        self._values: dict = {}

    def run(self, extra: str, args: list, includes: bool = True) -> subprocess.CompletedProcess:
        with private_folder("plyc-cpp-") as tmp:
            src = Path(tmp) / "h.c"
            src.write_text(("".join(ln + "\n" for ln in self.lines) if includes else "") + extra)
            try:
                return children.run([self.clang, *self.flags, *args, "-x", "c", str(src), "-o", "-"],
                                      capture_output=True, text=True, cwd=tmp, timeout=TIMEOUT,
                                      stdin=subprocess.DEVNULL, errors="replace")
            except subprocess.TimeoutExpired:
                # `#include "/dev/zero"`: the preprocessor reads on and on
                return subprocess.CompletedProcess([], 1, "", f"h.c:1:1: error: clang took more than "
                                                              f"{TIMEOUT} s to read the headers")

    @property
    def macros(self) -> dict:
        """name -> (parameters or None, body) of every macro the headers define."""
        if self._macros is None:
            self._macros = {}
            if self.clang is None:
                self.problem = "no clang on the build machine to read the headers with"
                return self._macros
            proc = self.run("", ["-E", "-dM"])
            while proc.returncode != 0 and self._leave_out_missing(proc.stderr):
                # the rest still read (a board's build machine has no
                # kernel tree: <net/sock.h> missing, <linux/in.h> there)
                proc = self.run("", ["-E", "-dM"])
            if proc.returncode != 0:
                self.problem = _first_error(proc.stderr)
                return self._macros
            for line in proc.stdout.splitlines():
                m = re.match(r"#define (\w+)(\([^)]*\))?\s?(.*)", line)
                if m:
                    self._macros[m.group(1)] = (m.group(2), m.group(3))
        return self._macros

    def _leave_out_missing(self, stderr: str) -> bool:
        """Drop the #include line whose header (or a header it includes) is
        not found; False when the error is another."""
        m = re.search(r"(?:In file included from h\.c:(\d+):.*\n(?:.*\n)*?.*?|h\.c:(\d+):\d+: )"
                      r"fatal error: '([^']+)' file not found", stderr)
        if not m:
            return False
        index = int(m.group(1) or m.group(2)) - 1
        if not 0 <= index < len(self.lines):
            return False
        self.missing.append(INCLUDE.match(self.lines[index].strip()).group(1))
        self.lines = self.lines[:index] + self.lines[index + 1:]
        return True

    @property
    def text(self) -> str:
        """The headers preprocessed (where enumerators are found)."""
        if self._text is None:
            proc = self.run("", ["-E", "-P"])
            self._text = proc.stdout if proc.returncode == 0 else ""
        return self._text

    def value(self, name: str) -> Optional[int]:
        if name not in self._values:
            self._values[name] = self._value(name)
        return self._values[name]

    def _value(self, name: str) -> Optional[int]:
        macros = self.macros
        if self.problem is not None:
            return None
        macro = macros.get(name)
        if macro is not None and macro[0] is not None:
            return None                 # function-like: no value of its own
        if macro is None and not re.search(rf"\b{re.escape(name)}\b", self.text):
            return None
        value = None
        if macro is not None:
            # The expansion compiled alone first: kernel headers need not
            # compile as a user program, and it is quicker. An expansion
            # naming the headers' enumerators or types needs them all.
            proc = self.run(f'\n#line 1 "{MARK}"\nplyc_expansion = {name} ;\n', ["-E", "-P"])
            m = re.search(r"plyc_expansion = (.*?) ;\s*$", proc.stdout, re.M | re.S)
            if proc.returncode == 0 and m:
                value = self.compile(" ".join(m.group(1).split()), includes=False)
        return value if value is not None else self.compile(name, includes=True)

    def compile(self, expr: str, includes: bool) -> Optional[int]:
        """The value of `expr` as C's integer constant expression, or None
        when it is none (a string, a type, a float, not declared)."""
        src = (f'\n#line 1 "{MARK}"\n'
               f"char plyc_integer[((__typeof__({expr}))1 / 2 == 0) ? 1 : -1];\n"
               f"long long plyc_value = (long long)({expr});\n"
               f"int plyc_negative = ({expr}) < 0;\n")
        proc = self.run(src, ["-S", "-emit-llvm", "-O0"], includes)
        if proc.returncode != 0:
            return None
        value = re.search(r"^@plyc_value = \S+ (?:\S+ )*?i64 (-?\d+)", proc.stdout, re.M)
        negative = re.search(r"^@plyc_negative = \S+ (?:\S+ )*?i32 (-?\d+)", proc.stdout, re.M)
        if not value or not negative:
            return None
        v = int(value.group(1))
        return v if negative.group(1) == "1" else v & ((1 << 64) - 1)

    def degraded(self) -> list:
        """Why the kernel's headers the script names were not all read (a
        header missing; none installed and a kernel header read from the
        C library's UAPI copy instead), [] when they were."""
        self.macros
        why = [f"<{h}> is missing" for h in self.missing]
        kernel = [h for h in (INCLUDE.match(ln.strip()).group(1) for ln in self.lines)
                  if h.split("/")[0] in KERNEL_DIRS]
        if kernel and not self.kernel_tree:
            why.append(f"<{kernel[0]}> is the C library's UAPI copy, not the kernel's (no kernel headers installed)")
        return why


# The kernel's include/ folders whose headers the C library's development
# package has only the UAPI part of (<linux/socket.h> without AF_INET).
# net/ is not one: glibc's <net/if.h> is the C library's own.
KERNEL_DIRS = ("linux", "asm", "asm-generic", "uapi", "trace", "scsi", "rdma", "sound", "video", "xen",
               "misc", "drm", "mtd")


def _first_error(stderr: str) -> str:
    line = next((ln for ln in stderr.splitlines() if "error" in ln), stderr.strip())
    return re.sub(r"^.*?h\.c:\d+:\d+: (?:fatal )?error: ", "", line.strip())


_CACHE: dict = {}


def compiler(includes: list, env: dict, arch: str, dirs: tuple = ()) -> _Compiler:
    key = (tuple(item.text.strip() for item in includes), tuple(kernel_dirs(env)), arch, tuple(dirs))
    if key not in _CACHE:
        _CACHE[key] = _Compiler(key[0], env, arch, key[3])
    return _CACHE[key]


def constant(name: str, includes: list, env: dict, arch: str, dirs: tuple = ()):
    """(value, where) for a constant of the included headers, or (None,
    what was looked at) to say in the unknown identifier's note."""
    lines = [item for item in includes if INCLUDE.match(item.text.strip())]
    if not lines:
        return None, []
    cc = compiler(lines, env, arch, dirs)
    value = cc.value(name)
    if value is not None:
        from . import ast as A
        return A.Int(value, str(value)), "the headers"
    if cc.problem is None:
        return None, [f"the #include'd headers, read by clang, define no integer constant {name}"]
    return _scan(name, lines, env, arch, cc.problem, dirs)


def _scan(name: str, includes: list, env: dict, arch: str, problem: str, extra: tuple = ()):
    """`#define name literal` in the included files themselves (clang could
    not read them: `problem`)."""
    dirs = search_dirs(env, arch, extra)
    looked = []
    for item in includes:
        m = INCLUDE.match(item.text.strip())
        path = find(m.group(1), dirs)
        if path is None:
            looked.append(f"<{m.group(1)}> (not found)")
            continue
        looked.append(path)
        define = re.compile(rf"^\s*#\s*define\s+{re.escape(name)}\s+(.*?)\s*(?://.*|/\*.*)?$", re.M)
        with open(path, errors="replace") as f:
            found = define.search(f.read())
        if found:
            value = _literal(found.group(1))
            if value is not None:
                return value, path
    return None, [f"clang could not read the headers ({problem}); plyc read `#define NAME number` lines of "
                  "the #include'd files themselves: " + ", ".join(looked)]


def library_compiler(header: str, arch: str) -> _Compiler:
    """clang over one of the target's C library or UAPI headers alone, no
    kernel tree (abi.py's kernel ABI values)."""
    key = ("library", header, arch)
    if key not in _CACHE:
        _CACHE[key] = _Compiler((f"#include <{header}>",), {}, arch, kernel=False)
    return _CACHE[key]


# The C library's headers a note may name for a constant a script uses
# without #including where it is defined (asked of clang, not a table).
COMMON = ("sys/socket.h", "netinet/in.h", "errno.h", "fcntl.h", "dirent.h", "signal.h", "sys/stat.h",
          "sys/mman.h")


def header_of(name: str, env: dict, arch: str) -> Optional[str]:
    """The first of COMMON that defines `name`, for a note."""
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
        return None
    for header in COMMON:
        cc = _CACHE.setdefault(("note", header, arch), _Compiler((f"#include <{header}>",), {}, arch))
        if name in cc.macros:
            return header
    return None
