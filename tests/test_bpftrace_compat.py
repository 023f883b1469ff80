"""plyc's tracers print what bpftrace prints: each runtime case with a
`=== compare` section (tests/runtime/*.test) is also run with `bpftrace`
itself, and its output must be the case's `stdout` (or match its
`stdout-re`), which test_runtime.py holds plyc's tracer to.

Every line counts, "Attaching N probes..." and blank ones included; they
are compared in sorted order: bpftrace 0.17 reads one perf buffer per CPU,
so lines printed on different CPUs (END's and a probe's) may come out in
either order. Trailing blank lines are set aside, as test_runtime.py does.

A case whose script uses what bpftrace 0.17 spells otherwise (current
bpftrace's config block, where 0.17 reads environment variables) gives
0.17's spelling: `=== compare-script`, the script bpftrace runs instead,
and `=== compare-env`, NAME=VALUE lines for its environment."""
import os
import re
import shlex
import shutil
import subprocess

import pytest

from test_runtime import CASES, parse_case, substituter

COMPARED = [p for p in CASES if "compare" in parse_case(p)]


def normalize(text: str) -> list:
    return sorted(text.rstrip("\n").split("\n"))


@pytest.mark.bpf
@pytest.mark.parametrize("path", COMPARED, ids=[p.stem for p in COMPARED])
def test_same_output_as_bpftrace(path, tmp_path, workload, usdt_prog):
    bpftrace = shutil.which("bpftrace")
    if bpftrace is None:
        pytest.skip("bpftrace is not installed here (apt-get install bpftrace)")
    case = parse_case(path)
    subst = substituter(workload, usdt_prog)

    script = tmp_path / (path.stem + ".bt")
    script.write_text(subst(case.get("compare-script", case["bpftrace"])))
    env = dict(line.split("=", 1) for line in case.get("compare-env", "").splitlines() if line.strip())
    args = shlex.split(subst(case.get("args", "").strip()))
    # a case built with --unsafe (system(), signal()) is run so by bpftrace
    unsafe = ["--unsafe"] if "--unsafe" in case.get("build", "").split() else []
    proc = subprocess.run([bpftrace, *unsafe, str(script), *args], capture_output=True, text=True,
                          timeout=float(case.get("timeout", "30").strip()) + 30, cwd=tmp_path,
                          env={**os.environ, "LANG": "C.UTF-8", **env})
    detail = f"\n--- stdout:\n{proc.stdout}\n--- stderr:\n{proc.stderr}"
    assert proc.returncode == 0, f"bpftrace exited {proc.returncode}{detail}"
    if "stdout" in case or "stdout-unordered" in case:
        want = case.get("stdout", case.get("stdout-unordered"))
        assert normalize(proc.stdout) == normalize(subst(want)), f"bpftrace prints otherwise{detail}"
    else:
        text = proc.stdout.rstrip("\n")
        pattern = case["stdout-re"].rstrip("\n")
        assert re.fullmatch(pattern, text, re.DOTALL), f"bpftrace's output does not match /{pattern}/{detail}"
