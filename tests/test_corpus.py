"""Scripts other people published (../shared/corpus/ply: ply's README, man
page, scripts/ and self-tests), read from where they are, never copied here.

- Every script builds, for x86_64 and aarch64.
- Every script runs in the Debian 6.1 guest (x86_64) for two seconds under a
  small workload (execs, opens, reads, dd, loopback UDP): it must attach,
  exit 0 (or with its own `exit(n)`) and print no error. The few that cannot
  do that in a guest are listed in EXPECTED with the reason and what they must
  print instead.
- Those whose probes this machine's kernel has (tracepoints, interval, profile,
  BEGIN/END; no kprobes here) run here the same way.

Skipped, with a message, where the corpus folder is absent.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "ply"
SCRIPTS = sorted(CORPUS.glob("*.ply")) if CORPUS.is_dir() else []
NO_CORPUS = f"no corpus of published scripts at {CORPUS} (it comes with the project's shared folder)"
HERE = {"tracepoint", "interval", "profile", "BEGIN", "END"}  # providers this kernel runs
MARK = "@@@plyc-corpus"

sys.path.insert(0, str(ROOT / "tests" / "vm"))
import lab  # noqa: E402

# Scripts that cannot attach-and-run cleanly in the guest, why, and what
# they must do instead: (exit status, a pattern stderr must match).
EXPECTED = {
    # Since 5.19 dev_queue_xmit is an inline wrapper of __dev_queue_xmit (6.1
    # keeps a notrace local copy): the tracer must say so and name the latter.
    "readme-dev-queue-xmit-stacks": (1, r"dev_queue_xmit is not a traceable function on this "
                                        r"device.*near: __dev_queue_xmit"),
}

# The guest's workload: processes come and go (exec, exit), files are
# opened and read, dd copies, UDP datagrams go through loopback.
WORKLOAD = r"""
ifconfig lo 127.0.0.1 up 2>/dev/null
work() {
	while :; do
		dd if=/dev/zero of=/dev/null bs=4k count=50 2>/dev/null
		cat /proc/version /etc/passwd > /dev/null 2>&1
		ls / > /dev/null
		head -c 2000 /lab/workload > /dev/null
		./workload udp 5 64 > /dev/null 2>&1
		sleep 0.05
	done
}
"""


def needs(script: Path) -> set:
    m = re.search(r"^# needs: (.*)$", script.read_text(), re.M)
    return {n.strip() for n in m.group(1).split(",")} if m else set()


def allowed_exits(script: Path) -> set:
    """0, or the statuses of the script's own exit(n) calls (exit() is 0)."""
    body = "\n".join(line for line in script.read_text().splitlines() if not line.startswith("#"))
    codes = {int(n or 0) for n in re.findall(r"\bexit\s*\(\s*(\d*)\s*\)", body)}
    return codes or {0}


def build(script: Path, out: Path, target: str = "x86_64") -> subprocess.CompletedProcess:
    return builds.run([sys.executable, "-m", "plyc", "build", "--target", target, str(script),
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)


def tracer_name(script: Path) -> str:
    return script.stem.replace("-", "_")


def check_run(script: Path, rc: int, stdout: str, stderr: str) -> None:
    detail = f"\n--- stdout (tail):\n{stdout[-2000:]}\n--- stderr:\n{stderr[-3000:]}"
    if script.stem in EXPECTED:
        want, pattern = EXPECTED[script.stem]
        assert rc == want, f"exit {rc}, expected {want}{detail}"
        assert re.search(pattern, stderr, re.S), f"stderr lacks /{pattern}/{detail}"
        return
    assert rc in allowed_exits(script), f"exit {rc}, expected one of {sorted(allowed_exits(script))}{detail}"
    # Kernel stacks that hash to a taken slot of the stack map are a warning
    # (the events are still counted, under an empty stack): a fact of the
    # stack map, not a failure of the script. Anything else is a problem.
    bad = [line for line in stderr.splitlines() if re.search(r"error|warning|lost|dropped|full", line, re.I)
           and not re.search(r"warning: \d+ stacks? not recorded", line)]
    assert not bad, f"the tracer reported problems{detail}"


def test_corpus_is_there():
    if not SCRIPTS:
        pytest.skip(NO_CORPUS)
    assert len(SCRIPTS) >= 30


@pytest.mark.parametrize("target", ["x86_64", "aarch64"])
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_published_script_builds(script, target, tmp_path):
    # named as the other tests name it, so they share the build (builds.py)
    tracer = tmp_path / tracer_name(script)
    proc = build(script, tracer, target)
    assert proc.returncode == 0, proc.stderr
    assert tracer.read_bytes()[:4] == b"\x7fELF"


HOST = [s for s in SCRIPTS if needs(s) and needs(s) <= HERE]


@pytest.mark.bpf
@pytest.mark.parametrize("script", HOST, ids=[p.stem for p in HOST])
def test_published_script_runs_here(script, tmp_path, workload):
    tracer = tmp_path / tracer_name(script)
    proc = build(script, tracer)
    assert proc.returncode == 0, proc.stderr
    # A workload that execs, exits, opens and reads while the tracer runs.
    load = subprocess.Popen(["sh", "-c", f"while :; do {workload} read 50 4096 >/dev/null 2>&1; "
                             "cat /etc/passwd >/dev/null; sleep 0.05; done"],
                            start_new_session=True)
    try:
        run = subprocess.run([str(tracer), "-d", "2"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "LANG": "C.UTF-8"})
    finally:
        os.killpg(load.pid, 9)
        load.wait()
    check_run(script, run.returncode, run.stdout, run.stderr)


_guest: dict = {}


def guest_results(tmp_path_factory):
    """Build every script, run them all in one boot of the 6.1 guest."""
    if "results" in _guest:
        return _guest["results"]
    tmp = tmp_path_factory.mktemp("corpus-vm")
    workload = tmp / "workload"
    subprocess.run(["gcc", "-static", "-O2", "-o", str(workload), str(ROOT / "tests/helpers/workload.c")],
                   check=True)
    files, errors = [str(workload)], {}
    lines = ["#!/bin/sh", "cd /lab", WORKLOAD]
    for script in SCRIPTS:
        name = tracer_name(script)
        proc = build(script, tmp / name)
        if proc.returncode != 0:
            errors[script.stem] = proc.stderr
            continue
        files.append(str(tmp / name))
        lines += ["work & w=$!",
                  f"./{name} -d 2 > out.{name} 2> err.{name}; rc=$?",
                  "kill $w; wait $w 2>/dev/null",
                  f"echo '{MARK} {script.stem} '$rc; tail -c 4000 out.{name}; echo; echo '{MARK}-err';"
                  f" cat err.{name}; echo '{MARK}-end'"]
    runner = tmp / "run-corpus.sh"
    runner.write_text("\n".join(lines) + "\n")
    runner.chmod(0o755)
    files.append(str(runner))
    res = lab.run(["./run-corpus.sh"], files=files, kernel="6.1", timeout=900, memory="512M",
                  one_thread=True)
    out = res.stdout.decode(errors="replace")
    pattern = re.compile(rf"^{MARK} (\S+) (\d+)\n(.*?)^{MARK}-err\n(.*?)^{MARK}-end$", re.S | re.M)
    results = {m.group(1): (int(m.group(2)), m.group(3), m.group(4)) for m in pattern.finditer(out)}
    _guest["results"] = (results, errors, res)
    return _guest["results"]


@pytest.mark.vm
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_published_script_runs_in_guest(script, tmp_path_factory):
    if not shutil.which("qemu-system-x86_64"):
        pytest.skip("qemu-system-x86_64 is not installed (scripts/setup.sh installs it)")
    results, errors, res = guest_results(tmp_path_factory)
    assert script.stem not in errors, f"build failed:\n{errors[script.stem]}"
    assert script.stem in results, (f"the guest did not run it:\n{res.stdout[-3000:]!r}\n"
                                    f"{res.stderr[-2000:]!r}\n{res.console[-3000:]}")
    check_run(script, *results[script.stem])

