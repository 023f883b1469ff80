"""plyc's tracers print what bpftrace prints: each runtime case with a
`=== compare` section (tests/runtime/*.test) is also run with each bpftrace
that section names, a line each: `bpftrace 0.17` (Debian 12's, installed by
scripts/setup.sh) and `bpftrace 0.27` (Debian sid's, from a chroot built
once into the cache: tests/bpftrace_sid.py). Its output must be the case's
`stdout` (or match its `stdout-re`), which test_runtime.py holds plyc's
tracer to.

Every line counts, blank ones included; they are compared in sorted order:
bpftrace 0.17 reads one perf buffer per CPU, so lines printed on different
CPUs (END's and a probe's) may come out in either order. Trailing blank
lines are set aside, as test_runtime.py does. A tracer prints as bpftrace
0.27 by default ("Attached N probes" on stderr): a case built so is held
to 0.27 line for line, and where it names 0.17 too, 0.17's stdout is
compared without its "Attaching N probes..." line. A case built with
`--bpftrace-output 0.17` prints that line as 0.17 does, and is compared
with it whole.

A case whose script uses what bpftrace 0.17 spells otherwise (current
bpftrace's config block, where 0.17 reads environment variables) gives
0.17's spelling: `=== compare-script`, the script bpftrace 0.17 runs
instead, and `=== compare-env`, NAME=VALUE lines for its environment.
Where bpftrace 0.27 prints otherwise than plyc (and 0.17), the case gives
what 0.27 prints, `=== compare-0.27-stdout` (or `compare-0.27-stdout-re`;
`compare-0.17-stdout` where 0.17 is the one that differs, as for bools):
each such difference is listed in docs/bpftrace.md ("Against bpftrace
0.27"), and the test fails when 0.27 stops printing it. A script with an
iter or rawtracepoint probe runs where 0.27 finds a readable list of traceable functions
(bpftrace_sid.ftrace_list: this machine's cannot be opened)."""
import os
import re
import shlex
import shutil
import subprocess

import pytest

from test_runtime import CASES, parse_case, substituter

VERSIONS = ("0.17", "0.27")


def versions(case: dict) -> list:
    """The bpftrace versions a case's `compare` section names."""
    out = []
    for line in case["compare"].splitlines():
        if line.strip():
            m = re.fullmatch(r"bpftrace (\S+)", line.strip())
            assert m and m.group(1) in VERSIONS, f"compare: {line.strip()!r} is not `bpftrace {'|'.join(VERSIONS)}`"
            out.append(m.group(1))
    return out


COMPARED = [(p, v) for p in CASES if "compare" in parse_case(p) for v in versions(parse_case(p))]


def normalize(text: str) -> list:
    return sorted(text.rstrip("\n").split("\n"))


def built_for(case: dict) -> str:
    """The bpftrace version whose output the case's tracer prints."""
    m = re.search(r"--bpftrace-output[= ](\S+)", case.get("build", ""))
    return m.group(1) if m else "0.27"


def expected(case: dict, version: str):
    """("stdout", text) or ("stdout-re", pattern): what `version` must print."""
    assert version == "0.17" or built_for(case) == version, \
        f"a tracer built for bpftrace {built_for(case)} is compared with {version}"
    for kind in ("stdout", "stdout-re"):
        if f"compare-{version}-{kind}" in case:
            return kind, case[f"compare-{version}-{kind}"]
    if "stdout" in case or "stdout-unordered" in case:
        return "stdout", case.get("stdout", case.get("stdout-unordered"))
    return "stdout-re", case["stdout-re"]


def banner_left_out(case: dict, version: str, stdout: str) -> str:
    """bpftrace 0.17's stdout without its first "Attaching N probes..."
    line, where the case's tracer prints 0.27's (on stderr)."""
    if version == "0.17" and built_for(case) != "0.17":
        return re.sub(r"\AAttaching \d+ probes?\.\.\.\n", "", stdout)
    return stdout


@pytest.mark.bpf
@pytest.mark.parametrize("path,version", COMPARED, ids=[f"{p.stem}-{v}" for p, v in COMPARED])
def test_same_output_as_bpftrace(path, version, tmp_path, workload, usdt_prog, request):
    case = parse_case(path)
    subst = substituter(workload, usdt_prog)
    if version == "0.17":
        bpftrace = shutil.which("bpftrace")
        if bpftrace is None:
            pytest.skip("bpftrace is not installed here (apt-get install bpftrace)")
        source, env = case.get("compare-script", case["bpftrace"]), case.get("compare-env", "")

        def command(args, cwd):
            return [bpftrace, *args]
    else:
        bpftrace27 = request.getfixturevalue("bpftrace27")
        source, env = case["bpftrace"], ""
        # iter and rawtracepoint probes need the kernel's list of traceable
        # functions (bpftrace_sid.ftrace_list)
        iterates = bool(re.search(r"^\s*(iter|it|rawtracepoint|rt):", source, re.MULTILINE))

        def command(args, cwd):
            return bpftrace27(args, cwd, ftrace=iterates)

    script = tmp_path / (path.stem + ".bt")
    script.write_text(subst(source))
    env = dict(line.split("=", 1) for line in env.splitlines() if line.strip())
    args = shlex.split(subst(case.get("args", "").strip()))
    # a case built with --unsafe (system(), signal()) is run so by bpftrace
    unsafe = ["--unsafe"] if "--unsafe" in case.get("build", "").split() else []
    proc = subprocess.run(command([*unsafe, str(script), *args], tmp_path), capture_output=True, text=True,
                          timeout=float(case.get("timeout", "30").strip()) + 30, cwd=tmp_path,
                          env={**os.environ, "LANG": "C.UTF-8", **env})
    detail = f"\n--- stdout:\n{proc.stdout}\n--- stderr:\n{proc.stderr}"
    # bpftrace exits as the case says plyc's tracer does (exit(1) of assert()),
    # or as its compare-exit says where they differ
    assert proc.returncode == int(case.get("compare-exit", case.get("exit", "0")).strip() or 0), \
        f"bpftrace {version} exited {proc.returncode}{detail}"
    kind, want = expected(case, version)
    stdout = banner_left_out(case, version, proc.stdout)
    if kind == "stdout":
        assert normalize(stdout) == normalize(subst(want)), f"bpftrace {version} prints otherwise{detail}"
    else:
        text = stdout.rstrip("\n")
        pattern = subst(want).rstrip("\n")
        assert re.fullmatch(pattern, text, re.DOTALL), f"bpftrace {version}'s output does not match /{pattern}/{detail}"
