"""Every example builds into a static tracer (clang and the C compiler run
with -Wall -Werror), and generated code is deterministic."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ply"))


def plyc(*args, **kw):
    return subprocess.run([sys.executable, "-m", "plyc", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, **kw)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_builds(example, tmp_path):
    out = tmp_path / example.stem
    proc = plyc("build", example, "-o", out)
    assert proc.returncode == 0, proc.stderr
    head = out.read_bytes()[:20]
    assert head[:4] == b"\x7fELF"
    # Statically linked: no program interpreter.
    readelf = subprocess.run(["readelf", "-l", str(out)], capture_output=True, text=True).stdout
    assert "INTERP" not in readelf
    help_out = subprocess.run([str(out), "-h"], capture_output=True, text=True)
    assert help_out.returncode == 0
    assert f"{example.name}:" in help_out.stdout


def test_generated_code_is_deterministic(tmp_path):
    example = ROOT / "examples" / "read-sizes.ply"
    first = plyc("emit", "--stage", "c", example)
    second = plyc("emit", "--stage", "c", example)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert str(ROOT) not in first.stdout and "/tmp" not in first.stdout


def test_generated_c_compiles_with_all_warnings(tmp_path):
    """The generated files alone, with plain -Wall -Werror (no -Wno- flags)."""
    keep = tmp_path / "gen"
    proc = plyc("build", ROOT / "examples" / "interval.ply", "-o", tmp_path / "t", "--keep", keep)
    assert proc.returncode == 0, proc.stderr
    rt = ROOT / "runtime-c"
    bpf = subprocess.run(["clang", "-target", "bpf", "-D__TARGET_ARCH_x86", "-O2", "-g", "-Wall", "-Werror",
                          "-I", rt / "bpf", "-I", keep, "-c", keep / "t.bpf.c", "-o", tmp_path / "x.o"],
                         capture_output=True, text=True)
    assert bpf.returncode == 0, bpf.stderr
    loader = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-I", rt, "-I", keep,
                             "-c", keep / "t.c", "-o", tmp_path / "y.o"], capture_output=True, text=True)
    assert loader.returncode == 0, loader.stderr
