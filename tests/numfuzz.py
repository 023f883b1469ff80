"""The differential fuzzer of numbers, run as tests (tests/test_numfuzz.py)
or by hand for longer:

    python3 tests/numfuzz.py [ply|bt] [--seed N] [--batches N] [--count N]

A batch is one program of `count` printf lines (tests/numgen.py), built once
by plyc and run once: a ply tracer's output is held to what
tests/numply.py computes under docs/language.md's integer rule; a bpftrace
tracer's to what bpftrace 0.27 (tests/bpftrace_sid.py) prints for the same
script. $PLYC_NUMFUZZ_SEED, $PLYC_NUMFUZZ_BATCHES and $PLYC_NUMFUZZ_COUNT set
the tests' first seed, number of batches and lines a batch."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import numgen  # noqa: E402
import numply  # noqa: E402

COUNT = 250          # printf lines a batch of ply
# of bpftrace: 250 lines reading maps (seed 1) load in 0.27, while the
# verifier walks more than its million instructions in plyc's tracer (its
# map reads' lookups: the same program without them loads); a limit of its
# own, not a number
BT_COUNT = 100
SHOWN = 5            # mismatches reported


def build(script: str, name: str, folder: Path) -> Path:
    """plyc's tracer of the script (an AssertionError with plyc's words if
    the build fails: every generated program is well typed)."""
    src = folder / name
    src.write_text(script)
    out = folder / (name.rsplit(".", 1)[0])
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", str(src), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"plyc build {src} failed:\n{proc.stderr[-3000:]}"
    return out


def run(argv: list, timeout: float = 120) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{argv[0]} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc.stdout


def mismatches(program, lang: str, got: str, want: str, what: str) -> list:
    """The first lines that differ, each with its statement."""
    got_l, want_l = got.split("\n"), want.split("\n")
    out = []
    for i in range(max(len(got_l), len(want_l))):
        g = got_l[i] if i < len(got_l) else "<nothing>"
        w = want_l[i] if i < len(want_l) else "<nothing>"
        if g != w:
            head = w.split(" ", 1)[0] if w[:1].isdigit() else g.split(" ", 1)[0]
            stmt = numgen.line_of(program, lang, int(head)) if head.isdigit() else "(a map dump)"
            out.append(f"  {stmt}\n    plyc: {g!r}\n    {what}: {w!r}")
            if len(out) == SHOWN:
                break
    return out


def ply_batch(seed, count: int = COUNT, folder: Path = None) -> list:
    """Mismatches of one ply program against numply's evaluation."""
    program = numgen.Gen(seed, "ply", mixed=MIXED_PLY).program(count)
    want = numply.settle(program)
    with tempfile.TemporaryDirectory(prefix="numfuzz-", dir=folder) as d:
        tracer = build(numgen.script(program, "ply"), f"nf{seed}.ply", Path(d))
        got = run([str(tracer), "--", *map(str, program.params)])
    return mismatches(program, "ply", got, want, "rule")


ATTACHING = ("Attaching 1 probe...",)


def bt_split(text: str):
    """printf lines in order, the map dumps' lines sorted (bpftrace's
    order of a map's entries is its own hash's)."""
    # (and without blank lines: plyc prints 0.17's after a map, 0.27 none,
    # docs/bpftrace.md)
    lines = [ln for ln in text.rstrip("\n").split("\n") if ln not in ATTACHING and ln]
    prints = [ln for ln in lines if ln[:1].isdigit()]
    rest = sorted(ln for ln in lines if not ln[:1].isdigit())
    return "\n".join(prints + rest)


def bt_batch(seed, bpftrace27, count: int = COUNT, folder: Path = None) -> list:
    """Mismatches of one bpftrace program between plyc and bpftrace 0.27
    (bpftrace27: args, cwd -> argv, the fixture's)."""
    program = numgen.Gen(seed, "bt", mixed=MIXED_BT).program(count)
    with tempfile.TemporaryDirectory(prefix="numfuzz-", dir=folder or "/tmp") as d:
        tracer = build(numgen.script(program, "bt"), f"nf{seed}.bt", Path(d))
        got = run([str(tracer)])
        want = run(bpftrace27([f"{d}/nf{seed}.bt"], cwd=d), timeout=300)
    return mismatches(program, "bt", bt_split(got), bt_split(want), "bpftrace 0.27")


# Signed and unsigned types meeting (docs/language.md's merge rule)
MIXED_PLY = True
MIXED_BT = True


def main(argv) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lang", choices=("ply", "bt"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--count", type=int)
    a = ap.parse_args(argv)
    a.count = a.count or (COUNT if a.lang == "ply" else BT_COUNT)
    bpftrace27 = None
    if a.lang == "bt":
        import bpftrace_sid
        chroot = bpftrace_sid.ensure()
        bpftrace27 = lambda args, cwd=None: bpftrace_sid.command(args, cwd=cwd, chroot=chroot)  # noqa: E731
    bad = 0
    for seed in range(a.seed, a.seed + a.batches):
        found = ply_batch(seed, a.count) if a.lang == "ply" else bt_batch(seed, bpftrace27, a.count)
        print(f"seed {seed}: {a.count} expressions, {'differ' if found else 'same'}", flush=True)
        for m in found:
            print(m)
        bad += bool(found)
    print(f"{a.batches * a.count} expressions in {a.batches} batches; {bad} batches differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
