"""How bench/run.py stops a tool: SIGINT, then SIGTERM, then SIGKILL, each
after a short grace, with the launcher's figures kept; and the launcher
(bench/launch.c) gives the tool SIGINT's default action even when the
harness runs with SIGINT ignored (a background job of a non-interactive
shell: bpftrace-aotrt 0.17 then outlived every SIGINT, 60 s a run)."""
import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench-build")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-static", "-o", str(d / "launch"),
                    str(ROOT / "bench" / "launch.c")], check=True)
    return d


def ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_the_tool_starts_with_sigint_default_under_a_harness_that_ignores_it(build, tmp_path):
    out = subprocess.run([str(build / "launch"), str(tmp_path / "info"), "grep", "SigIgn", "/proc/self/status"],
                         capture_output=True, text=True, check=True, preexec_fn=ignore_sigint).stdout
    assert not int(out.split()[1], 16) & (1 << (signal.SIGINT - 1)), out


# A tool that prints "ready", then ignores the signals named in argv.
STUBBORN = ("import signal, sys, time\n"
            "for name in sys.argv[1:]: signal.signal(getattr(signal, name), signal.SIG_IGN)\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")


def stop_stubborn(bench, build, tmp_path, *ignored):
    t = bench.Tool("reference", "count", build, tmp_path)
    t.cmd = [sys.executable, "-c", STUBBORN, *ignored]
    t.start()
    while "ready" not in t.out_path.read_text():
        time.sleep(0.01)
    t0 = time.monotonic()
    t.stop()
    return t, time.monotonic() - t0


@pytest.mark.parametrize("ignored,stopped_by,status", [
    ((), None, 128 + signal.SIGINT),
    (("SIGINT",), "SIGTERM", 128 + signal.SIGTERM),
    (("SIGINT", "SIGTERM"), "SIGKILL", 128 + signal.SIGKILL),
])
def test_a_tool_that_ignores_sigint_is_stopped_after_a_grace(bench, build, tmp_path, monkeypatch,
                                                               ignored, stopped_by, status):
    monkeypatch.setattr(bench, "STOP_GRACE", 1.0)
    t, secs = stop_stubborn(bench, build, tmp_path, *ignored)
    assert (t.stopped_by, t.status) == (stopped_by, status)
    assert secs < 1.0 * (1 + len(ignored)) + 2
    assert t.rss_kb and t.rss_kb > 1000 and t.cpu_s is not None    # the launcher's figures stayed
    assert not bench.Tool.live
