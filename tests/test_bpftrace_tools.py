"""Debian's bpftrace tools (/usr/sbin/*.bt, read where the bpftrace package
installed them): those plyc lowers build into tracers for x86_64 and
aarch64; every other one stops at a located error (a refusal by name, or
what this kernel's BTF lacks), never a traceback or a C compiler's message.
Those whose probes this kernel has run beside bpftrace in
tests/test_bpftrace_tools_compare.py."""
import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

from plyc import driver
from plyc.diag import PlycError

ROOT = Path(__file__).resolve().parent.parent
TOOLS = sorted(glob.glob("/usr/sbin/*.bt"))
# The tools plyc lowers today (docs/bpftrace.md); the rest stop at a refusal.
LOWERED = ["bashreadline", "biolatency", "biosnoop", "biostacks", "bitesize", "capable", "cpuwalk",
           "dcsnoop", "execsnoop", "gethostlatency", "killsnoop", "loads", "mdflush", "naptime", "oomkill",
           "opensnoop", "pidpersec", "runqlat", "setuids", "ssllatency", "sslsnoop", "statsnoop",
           "swapin", "syncsnoop", "syscount", "tcpaccept", "tcpconnect", "tcpdrop", "tcplife", "threadsnoop",
           "tcpretrans", "tcpsynbl", "undump", "vfscount", "vfsstat", "writeback", "xfsdist"]


# runqlat's TASK_RUNNING comes from the kernel headers (plyc/frontends/bpftrace/headers.py),
# which build machines often lack: a tree with that #define (every kernel's value), the same
# wherever the test runs.
@pytest.fixture
def headers_env(tmp_path):
    sched = tmp_path / "kernel/include/linux/sched.h"
    sched.parent.mkdir(parents=True)
    sched.write_text("#define TASK_RUNNING\t\t\t0x00000000\n")
    return {**os.environ, "BPFTRACE_KERNEL_SOURCE": str(tmp_path / "kernel")}


def need_tools():
    if not TOOLS:
        pytest.skip("bpftrace's tools are not installed here (/usr/sbin/*.bt): apt-get install bpftrace")


@pytest.mark.parametrize("path", TOOLS or ["(none)"], ids=os.path.basename)
def test_lowered_or_refused_by_name(path, headers_env):
    need_tools()
    name = os.path.basename(path)[:-3]
    try:
        # Debian 12's tools are 0.17's (its probe-wide variables: tcpconnect's $saddr)
        driver.lower(open(path).read(), path, driver.Options(env=headers_env,
                                                             frontend={"bpftrace-output": "0.17"}))
    except PlycError as err:
        assert name not in LOWERED, err.render()
        assert err.render().startswith(f"{path}:"), err.render()
        return
    assert name in LOWERED, f"{name} lowers now: add it to LOWERED and docs/bpftrace.md"


@pytest.mark.parametrize("target", ["x86_64", "aarch64"])
@pytest.mark.parametrize("name", LOWERED)
def test_builds(name, target, tmp_path, headers_env):
    need_tools()
    path = f"/usr/sbin/{name}.bt"
    if not os.path.exists(path):
        pytest.skip(f"{path} is not in this bpftrace package")
    out = tmp_path / name
    # Debian 12's tools, built to print as its bpftrace 0.17 does
    proc = builds.run([sys.executable, "-m", "plyc", "build", "--bpftrace-output", "0.17", "--target", target, path,
                       "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=headers_env)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 100_000
