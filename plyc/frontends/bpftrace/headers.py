"""Constants from the headers a script #includes (runqlat's TASK_RUNNING
from <linux/sched.h>).

bpftrace 0.17 runs clang's preprocessor over the preamble with the build
machine's kernel headers ($BPFTRACE_KERNEL_SOURCE, else
/lib/modules/`uname -r`/source and build) and /usr/include; a script's
identifier that names a macro of those headers takes its value. plyc reads
only what its tracers can use and the tools need: `#define NAME literal`
lines (a number or a string) in the included file itself, found in the
same directories in the same order. Nested #includes are not followed."""
from __future__ import annotations

import os
import platform
import re
from typing import Optional

from .preamble import _literal

ARCH_DIRS = {"x86_64": "x86", "aarch64": "arm64", "armhf": "arm", "arm": "arm"}
INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')


def kernel_dirs(env: dict) -> list:
    """The kernel source and build trees bpftrace would use, existing or not."""
    if env.get("BPFTRACE_KERNEL_SOURCE"):
        return [env["BPFTRACE_KERNEL_SOURCE"]] + [env[k] for k in ("BPFTRACE_KERNEL_BUILD",) if env.get(k)]
    base = f"/lib/modules/{platform.release()}"
    return [f"{base}/source", f"{base}/build"]


def search_dirs(env: dict, arch: str) -> list:
    dirs = []
    for k in kernel_dirs(env):
        dirs += [f"{k}/include", f"{k}/arch/{ARCH_DIRS.get(arch, arch)}/include", f"{k}/include/uapi",
                 f"{k}/include/generated/uapi"]
    return dirs + ["/usr/include"]


def find(header: str, dirs: list) -> Optional[str]:
    for d in dirs:
        path = os.path.join(d, header)
        if os.path.isfile(path):
            return path
    return None


def constant(name: str, includes: list, env: dict, arch: str):
    """(value, where) for `#define name literal` in an included header, or
    (None, what was looked at) to say in the unknown identifier's note."""
    dirs = search_dirs(env, arch)
    looked = []
    for item in includes:
        m = INCLUDE.match(item.text.strip())
        if not m:
            continue
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
    return None, looked
