"""Size as a feature: examples/syscall-count.ply's tracer, stripped, for
every target and C library, may not grow more than 5% past the size
recorded in tests/tracer_sizes.json (a shrink is fine: record it). The
builds are tests/test_cross.py's (the same command through tests/builds.py,
so a run of both builds each once); the musl ones are also held to the
512 KB that routers' flash asks for (docs/toolchain.md, "Sizes")."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RECORDED = json.loads((ROOT / "tests" / "tracer_sizes.json").read_text())
EXAMPLE = ROOT / "examples" / "syscall-count.ply"
GROWTH = 1.05
MUSL_LIMIT = 512 * 1024

CASES = [(t, libc) for t in RECORDED for libc in RECORDED[t]]


def test_every_target_is_recorded():
    sys.path.insert(0, str(ROOT))
    from plyc import arch as A, musl
    assert set(RECORDED) == set(A.ARCHES)
    assert {t for t in RECORDED if "musl" in RECORDED[t]} == set(musl.TARGETS)


@pytest.mark.parametrize("target,libc", CASES, ids=["-".join(c) for c in CASES])
def test_tracer_size(target, libc, tmp_path):
    out = tmp_path / EXAMPLE.stem
    # the command test_cross.py's check_cross_build runs, word for word
    proc = builds.run([sys.executable, "-m", "plyc", "build", "--target", target, "--libc", libc, str(EXAMPLE),
                       "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    size, recorded = out.stat().st_size, RECORDED[target][libc]
    assert size <= recorded * GROWTH, \
        (f"{target} {libc}: the tracer is {size:,} bytes, {size / recorded - 1:.1%} past the {recorded:,} "
         "recorded in tests/tracer_sizes.json: find what grew (python3 bench/sizes.py --target "
         f"{target}), or record the new size if it is worth it")
    if libc == "musl":
        assert size <= MUSL_LIMIT, f"{target}: the musl tracer is {size:,} bytes, over {MUSL_LIMIT:,}"
