"""watchpoint:ADDRESS:LENGTH:MODE (plyc/providers/watchpoint.py): what the
build takes and refuses, as bpftrace 0.27 does; the kernel's side runs in
tests/runtime/bt-watchpoint*.test and tests/vm/cases/bt-watchpoint-kernel.test."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def check(tmp_path, script: str, *opts: str) -> subprocess.CompletedProcess:
    src = tmp_path / "w.bt"
    src.write_text(script)
    return subprocess.run([sys.executable, "-m", "plyc", "check", *opts, str(src)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("spec", ["watchpoint:0x10000000:8:w", "w:268435456:4:rw", "watchpoint:0x1000:1:wr",
                                  "watchpoint:0x10001000:2:x"])
def test_accepted(tmp_path, spec):
    p = check(tmp_path, spec + " { @ = count(); }\n")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("spec,error", [
    ("watchpoint:0:8:w", "watchpoint must be attached to a non-zero address"),
    ("watchpoint:0x1000:3:w", "watchpoint length must be one of (1,2,4,8)"),
    ("watchpoint:0x1000:16:w", "watchpoint length must be one of (1,2,4,8)"),
    ("watchpoint:0x1000:8:q", "watchpoint mode must be combination of (r,w,x)"),
    ("watchpoint:0x1000:8:ww", "watchpoint modes may not be duplicated"),
    ("watchpoint:0x1000:8:r", "invalid watchpoint mode: r"),
    ("watchpoint:0x1000:8:rwx", "invalid watchpoint mode: rwx"),
    ("watchpoint:zzz:8:w", "'zzz' is not an address"),
    ("watchpoint:0x10000000000000000:8:w", "is more than 64 bits"),
    ("watchpoint:vfs_read+arg1:8:w", "gone since bpftrace 0.25"),
    ("asyncwatchpoint:0x1000:8:w", "bpftrace dropped asyncwatchpoint probes in 0.25"),
])
def test_refused(tmp_path, spec, error):
    p = check(tmp_path, spec + " { @ = count(); }\n")
    assert p.returncode != 0 and error in p.stderr and "w.bt:1:1: error" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_modes_by_architecture(tmp_path):
    # x86's debug registers break on no read alone; ARM's do; riscv64 has none
    from plyc.diag import PlycError
    from plyc.ir import nodes as ir
    from plyc.providers import watchpoint as W
    assert "supported modes on x86_64: rw, w, x" in check(tmp_path, "w:0x1000:8:r {}\n").stderr
    t = W.PROVIDER.parse(ir.Spec("watchpoint", "0x1000:8:r"))
    W.for_arch(t, "aarch64")
    with pytest.raises(PlycError, match="watchpoints not supported on riscv64"):
        W.for_arch(t, "riscv64")
    with pytest.raises(PlycError, match="invalid watchpoint mode: r"):
        W.for_arch(W.PROVIDER.parse(ir.Spec("watchpoint", "0x1000:8:r")), "x86_64")
    with pytest.raises(PlycError, match="invalid watchpoint mode: x"):
        W.for_arch(W.PROVIDER.parse(ir.Spec("watchpoint", "0x1000:8:x")), "ppc64le")


def test_ply_spelling(tmp_path):
    src = tmp_path / "w.ply"
    src.write_text("watchpoint:0x10000000:8:w { @[comm] = count(); }\n")
    p = subprocess.run([sys.executable, "-m", "plyc", "check", str(src)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    src.write_text("watchpoint:0x10000000:8 { @[comm] = count(); }\n")
    p = subprocess.run([sys.executable, "-m", "plyc", "check", str(src)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert "watchpoint:ADDRESS:LENGTH:MODE" in p.stderr, p.stderr


# The tracer's banner comes before its probes attach; a timer's first tick
# after them (probes attach in the script's order) says they are.
READY = 'interval:ms:10 { if (@ready == 0) { printf("ready\\n"); } @ready = 1; }\n'


def tracer(tmp_path, script: str) -> str:
    src, out = tmp_path / "w.bt", tmp_path / "w"
    src.write_text(script + READY)
    p = subprocess.run([sys.executable, "-m", "plyc", "build", str(src), "-o", str(out)], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    return str(out)


def phases(tracer_path, workload, marker: str = ""):
    """`workload watchwait 5` watched with -p: its first phase (5 writes by
    its main thread) once the tracer has attached, its second (5 by a new
    thread) once the tracer printed `marker` (if any). The tracer's stdout
    (READY's lines left out) and stderr once it ends with the process."""
    work = subprocess.Popen([workload, "watchwait", "5"], stdin=subprocess.PIPE, text=True)
    t = subprocess.Popen([tracer_path, "-p", str(work.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        assert t.stdout.readline() == "ready\n"
        work.stdin.write("go\n")
        work.stdin.flush()
        out = []
        if marker:
            for line in t.stdout:
                out.append(line)
                if line.strip() == marker:
                    break
        work.stdin.write("go\n")
        work.stdin.close()
        assert work.wait(timeout=30) == 0
        rest, err = t.communicate(timeout=30)
        text = "".join(out) + rest
        return t.returncode, "".join(line for line in text.splitlines(True) if not line.startswith("@ready")), err
    finally:
        for p in (work, t):
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.bpf
def test_p_watches_every_thread(tmp_path, workload):
    # the main thread's writes (its event opened on the thread at attach)
    # and a thread started later (inherited from it)
    w = tracer(tmp_path, 'watchpoint:0x10000000:8:w { @[tid == pid ? "main" : "new thread"] = count(); }\n')
    rc, out, err = phases(w, workload)
    assert rc == 0, err
    assert out == "\n\n@[main]: 5\n@[new thread]: 5\n", out


@pytest.mark.bpf
def test_unwatch_stops_the_watchpoints_on_its_address(tmp_path, workload):
    # The fifth write unwatches; the tracer says so once it has (its events
    # are read in order), then the new thread's 5 writes go unseen by both
    # probes on that address; the other address's probe is left alone.
    w = tracer(tmp_path, 'watchpoint:0x10000000:8:w { @w = count(); if (@w == 5) { unwatch(0x10000000); '
                         'printf("unwatched\\n"); } }\n'
                         'watchpoint:0x10000000:8:rw { @rw = count(); }\n'
                         'watchpoint:0x10000008:8:w { @other = count(); }\n')
    rc, out, err = phases(w, workload, "unwatched")
    assert rc == 0, err
    assert out == "unwatched\n\n\n@rw: 5\n@w: 5\n", out
