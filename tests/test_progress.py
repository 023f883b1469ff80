"""Long first-time steps say so on a terminal (issue 30, plyc/progress.py):
one line when a step starts, one with its time when it ends; nothing when
stderr is no terminal or with -q. The terminal is a pty (python's pty
module); the step, the tracer runtime's build into a fresh cache."""
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from plyc.arch import host_target  # noqa: E402

STEP = f"building the tracer runtime for {host_target() or 'x86_64'} (glibc), once"


def on_a_terminal(argv, env, timeout=600):
    """(exit status, what argv wrote to stderr, a pty)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                                env=env, cwd=ROOT)
    finally:
        os.close(slave)
    out = b""
    try:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:         # EIO: every writer closed the pty
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    return proc.wait(timeout=timeout), out.decode().replace("\r\n", "\n")


def fresh(tmp_path, name):
    return dict(os.environ, PLYC_CACHE=str(tmp_path / name), PYTHONPATH=str(ROOT))


def build(tmp_path, *opts):
    return [sys.executable, "-m", "plyc", *opts, "build", "examples/syscall-count.ply", "-o", str(tmp_path / "t")]


def test_a_long_step_says_so_on_a_terminal_only(tmp_path):
    rc, err = on_a_terminal(build(tmp_path), fresh(tmp_path, "tty"))
    assert rc == 0, err
    lines = err.splitlines()
    assert lines[0] == f"plyc: {STEP}...", err
    assert re.fullmatch(rf"plyc: {re.escape(STEP)}: done in \d+\.\d s", lines[1]), err
    assert len(lines) == 2, err
    # the same on a pipe: nothing
    proc = subprocess.run(build(tmp_path), capture_output=True, text=True, env=fresh(tmp_path, "pipe"), cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert os.path.isdir(tmp_path / "pipe") and any(p.name.startswith("rt-") for p in (tmp_path / "pipe").iterdir())


PROBE = """
import sys, time
from plyc import cli, progress
if sys.argv[1:2] == ["cli"]:
    assert cli.main(sys.argv[2:]) == 0      # plyc [-q] doctor [-q]: sets progress.quiet or not
with progress.step("a step"):
    time.sleep(0.01)
try:
    with progress.step("a failing step"):
        raise KeyError
except KeyError:
    pass
"""


@pytest.mark.parametrize("how, env, shown", [
    ([], {}, True), (["cli", "-q", "doctor"], {}, False), (["cli", "doctor", "-q"], {}, False),
    (["cli", "doctor"], {}, True), ([], {"PLYC_QUIET": "1"}, False)])
def test_quiet_and_the_lines(how, env, shown):
    rc, err = on_a_terminal([sys.executable, "-c", PROBE, *how], dict(os.environ, PYTHONPATH=str(ROOT), **env))
    assert rc == 0, err
    if not shown:
        assert err == ""
        return
    lines = err.splitlines()
    assert lines[0] == "plyc: a step..." and re.fullmatch(r"plyc: a step: done in 0\.\d s", lines[1]), err
    assert lines[2] == "plyc: a failing step..." and re.fullmatch(r"plyc: a failing step: failed after 0\.\d s",
                                                                  lines[3]), err
