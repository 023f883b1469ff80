"""Runtime tests: each tests/runtime/*.test file is a script, the tracer's
arguments, and what it must print, run against this machine's kernel.

Sections of a .test file (each starts with a line `=== NAME`):
  script     the ply script (required, unless argdist or bpftrace is given)
  bpftrace   instead of a script: a bpftrace script (built as a .bt file;
             tests/test_bpftrace_compat.py also runs it with bpftrace itself
             and compares the output with stdout)
  argdist    instead of a script: `plyc argdist` options (shell words)
  args       the tracer's arguments, shell words; {workload} is the
             deterministic workload program (tests/helpers/workload.c),
             {usdt} a program with USDT probes (tests/helpers/usdt_prog.c),
             {cgroup2} where cgroup v2 is mounted (/sys/fs/cgroup, or
             /sys/fs/cgroup/unified beside v1); they may appear in the
             script, stdout and requires too
  stdout     exactly what the tracer must print (trailing blank lines aside)
  stdout-re  a regular expression the whole stdout must match (re.DOTALL;
             trailing blank lines aside)
  stdout-unordered  the lines the tracer must print, each as many times, in
             any order (a dump's entries of equal value follow their keys,
             which are addresses that move with the workload's build)
  stderr-re  a regular expression that must be found in stderr
  exit       the expected exit status (default 0)
  compare-exit  bpftrace's exit status where it differs from plyc's (else
             the compared bpftrace must exit as `exit` says)
  compare    the bpftrace versions that must print stdout too, a line each
             (`bpftrace 0.17`: Debian 12's; `bpftrace 0.27`: Debian sid's,
             tests/bpftrace_sid.py), run by test_bpftrace_compat.py
  compare-script, compare-env  bpftrace 0.17's spelling of the script and
             its environment
  compare-0.27-stdout, compare-0.27-stdout-re  what bpftrace 0.27 prints
             where it differs from plyc (each listed in docs/bpftrace.md);
             compare-0.17-stdout, what 0.17 prints where it does
  build      extra `plyc build` options
  env        NAME=VALUE lines for the build (compile-time $NAME)
  timeout    seconds (default 30)
  requires   a path that must exist on this machine (else skipped, saying why)
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "tests" / "runtime").glob("*.test"))


def parse_case(path: Path) -> dict:
    sections, name = {}, None
    for line in path.read_text().splitlines(keepends=True):
        m = re.match(r"=== ([a-z][a-z0-9.-]*)\s*$", line)
        if m:
            name = m.group(1)
            sections[name] = ""
        elif name is not None:
            sections[name] += line
    assert sections.keys() & {"script", "argdist", "bpftrace", "example"}, \
        f"{path.name}: no === script section"
    return sections


def cgroup2_root() -> str:
    """Where this machine mounts cgroup v2 ("" where it does not)."""
    with open("/proc/self/mounts") as f:
        return next((line.split()[1] for line in f if line.split()[2] == "cgroup2"), "")


def substituter(workload: str, usdt_prog: str):
    """The case's text with {workload}, {usdt} and {cgroup2} replaced."""
    cgroup2 = cgroup2_root()

    def subst(text: str) -> str:
        return text.replace("{workload}", workload).replace("{usdt}", usdt_prog).replace("{cgroup2}", cgroup2)
    return subst


def build_tracer(case: dict, path: Path, tmp: Path, subst) -> Path:
    out = tmp / path.stem.replace("-", "_")
    if "argdist" in case:
        cmd = [sys.executable, "-m", "plyc", "argdist", *shlex.split(subst(case["argdist"].strip())),
               "-o", str(out)]
        proc = builds.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert proc.returncode == 0, f"argdist build failed:\n{proc.stderr}"
        return out
    lang = "bpftrace" if "bpftrace" in case else "script"
    script = tmp / (path.stem.replace("-", "_") + (".bt" if lang == "bpftrace" else ".ply"))
    script.write_text(subst(case[lang]))
    env = dict(os.environ)
    for line in case.get("env", "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k.strip()] = v.strip()
    cmd = [sys.executable, "-m", "plyc", "build", str(script), "-o", str(out),
           *shlex.split(case.get("build", ""))]
    proc = builds.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, f"build failed:\n{proc.stderr}"
    return out


# What a kernel older than this one lacks, forced on this one: every case
# runs once more with the tracer taking its fallbacks (BEGIN/END by a uprobe
# on the tracer instead of BPF_PROG_TEST_RUN (< 5.10), bpf_probe_read instead
# of bpf_probe_read_kernel/_user (< 5.5), a perf buffer instead of the BPF
# ring buffer (< 5.8)).
OLD_KERNEL_ENV = {"PLYC_NO_TEST_RUN": "1", "PLYC_NO_PROBE_READ_KERNEL": "1", "PLYC_NO_RINGBUF": "1"}


@pytest.mark.bpf
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_runtime(path, tmp_path, workload, usdt_prog):
    run_case(path, tmp_path, workload, usdt_prog, {})


@pytest.mark.bpf
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_runtime_old_kernel(path, tmp_path, workload, usdt_prog):
    run_case(path, tmp_path, workload, usdt_prog, OLD_KERNEL_ENV)


def run_case(path, tmp_path, workload, usdt_prog, tracer_env: dict):
    case = parse_case(path)
    subst = substituter(workload, usdt_prog)
    req = subst(case.get("requires", "").strip())
    if req and not os.path.exists(req):
        pytest.skip(f"this machine has no {req}")

    tracer = build_tracer(case, path, tmp_path, subst)
    args = shlex.split(subst(case.get("args", "").strip()))
    timeout = float(case.get("timeout", "30").strip())
    proc = subprocess.run([str(tracer), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=tmp_path, env={**os.environ, "LANG": "C.UTF-8", **tracer_env})
    detail = f"\n--- stdout:\n{proc.stdout}\n--- stderr:\n{proc.stderr}"
    want_exit = int(case.get("exit", "0").strip())
    assert proc.returncode == want_exit, f"exit {proc.returncode}, expected {want_exit}{detail}"
    if "stdout" in case:
        assert proc.stdout.rstrip("\n") == subst(case["stdout"]).rstrip("\n"), f"stdout differs{detail}"
    if "stdout-unordered" in case:
        assert sorted(proc.stdout.rstrip("\n").splitlines()) == \
            sorted(subst(case["stdout-unordered"]).rstrip("\n").splitlines()), f"stdout differs{detail}"
    if "stdout-re" in case:
        pattern = case["stdout-re"].rstrip("\n")
        assert re.fullmatch(pattern, proc.stdout.rstrip("\n"), re.DOTALL), \
            f"stdout does not match /{pattern}/{detail}"
    if "stderr-re" in case:
        pattern = case["stderr-re"].strip()
        assert re.search(pattern, proc.stderr), f"stderr lacks /{pattern}/{detail}"
    assert {"stdout", "stdout-unordered", "stdout-re", "stderr-re", "exit"} & set(case), \
        "a runtime test must check something"
