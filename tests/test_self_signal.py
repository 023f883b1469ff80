"""SIGUSR1 to a bpftrace tracer: bpftrace 0.27 runs the script's
`self:signal:SIGUSR1` probes (in the script's order) and prints nothing
else; 0.17 prints every map as at exit. Before, plyc's tracer died of the
signal's default action (exit 138), its maps lost. Each run here beside
the bpftrace it follows, on the same script: started, SIGUSR1 once it is
attached, SIGINT once the signal's answer is printed."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import builds

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.bpf


def wait_for(path: Path, text: str, proc, timeout: float = 60) -> str:
    end = time.time() + timeout
    while time.time() < end:
        got = path.read_text()
        if text in got:
            return got
        assert proc.poll() is None, f"exited {proc.returncode} before printing {text!r}: {got}"
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} within {timeout} s: {path.read_text()}")


def usr1_run(argv, tmp: Path, name: str, attached: str, answer: str) -> tuple:
    """argv run until `attached` shows (stdout or stderr), sent SIGUSR1, then
    SIGINT once stdout has `answer`: (stdout, exit status)."""
    out, err = tmp / f"{name}.out", tmp / f"{name}.err"
    proc = subprocess.Popen(argv, stdout=open(out, "w"), stderr=open(err, "w"), cwd=tmp,
                            env={**os.environ, "LANG": "C.UTF-8"})
    try:
        end = time.time() + 60
        while attached not in out.read_text() + err.read_text():
            assert proc.poll() is None and time.time() < end, err.read_text()
            time.sleep(0.05)
        proc.send_signal(signal.SIGUSR1)
        wait_for(out, answer, proc)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out.read_text(), proc.returncode


def build(tmp: Path, text: str, *opts) -> str:
    exe = tmp / "tracer"
    p = builds.run([sys.executable, "-m", "plyc", "build", "--lang", "bpftrace", *opts, "-e", text,
                    "-o", str(exe)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    return str(exe)


SELF = ('BEGIN { @a = 5; } self:signal:SIGUSR1 { printf("first"); @n = count(); } '
        'self:signal:SIGUSR1 { printf(" second %s\\n", probe); }')


def test_self_probes_run_on_sigusr1_as_027(tmp_path, bpftrace27):
    exe = build(tmp_path, SELF)
    ours, rc = usr1_run([exe], tmp_path, "plyc", "Attached", "second")
    assert rc == 0
    (tmp_path / "self.bt").write_text(SELF)
    theirs, rc27 = usr1_run(bpftrace27([str(tmp_path / "self.bt")], tmp_path), tmp_path, "bpftrace",
                            "Attached", "second")
    assert rc27 == 0
    assert ours == theirs == "first second self:signal:SIGUSR1\n\n\n@a: 5\n@n: 1\n"


def test_sigusr1_prints_the_maps_as_017(tmp_path):
    bpftrace = shutil.which("bpftrace")
    if bpftrace is None:
        pytest.skip("bpftrace is not installed here (apt-get install bpftrace)")
    text = 'BEGIN { @a = 5; @b[1] = 2; @b[2] = 3; @h = hist(9); }'
    exe = build(tmp_path, text, "--bpftrace-output", "0.17")
    ours, rc = usr1_run([exe], tmp_path, "plyc", "Attaching", "@h:")
    assert rc == 0
    (tmp_path / "maps.bt").write_text(text)
    theirs, rc17 = usr1_run([bpftrace, str(tmp_path / "maps.bt")], tmp_path, "bpftrace", "Attaching", "@h:")
    assert rc17 == 0
    # the maps twice: at SIGUSR1, then the exit dump after its blank lines
    assert ours.count("@b[2]: 3") == 2 and ours == theirs


def test_a_027_tracer_without_self_probes_takes_sigusr1(tmp_path):
    # 0.27 catches the signal whatever the script: it runs on, prints nothing
    exe = build(tmp_path, 'BEGIN { @a = 1; } interval:ms:50 { @t = count(); if (@t == 1) { printf("tick\\n"); } }')
    out, rc = usr1_run([exe], tmp_path, "plyc", "tick", "tick")
    assert rc == 0 and out.startswith("tick\n\n\n@a: 1\n@t: ")


def test_self_takes_sigusr1_only(tmp_path):
    p = builds.run([sys.executable, "-m", "plyc", "check", "--lang", "bpftrace", "-e",
                    "self:signal:SIGUSR2 { }"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode != 0
    assert "a self probe is self:signal:SIGUSR1" in p.stderr and "Traceback" not in p.stderr
