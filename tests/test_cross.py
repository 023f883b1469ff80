"""Cross builds: every example builds for aarch64 and armhf (a static
executable for that machine), with glibc and with musl, and the tracer
runs under qemu-user."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ply"))
MACHINE = {"aarch64": "AArch64", "armhf": "ARM"}
QEMU = {"aarch64": "qemu-aarch64-static", "armhf": "qemu-arm-static"}


@pytest.fixture(scope="module", params=[("aarch64", "glibc"), ("aarch64", "musl"), ("armhf", "glibc"),
                                        ("armhf", "musl")], ids="-".join)
def target_libc(request):
    # The first build prepares the sysroot (a download from Debian, once) or
    # the musl libraries (built from Debian's sources, once).
    target, libc = request.param
    proc = subprocess.run([sys.executable, "-m", "plyc", "sysroot", "--target", target, "--libc", libc],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return request.param


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_cross_builds(example, target_libc, tmp_path):
    target, libc = target_libc
    out = tmp_path / example.stem
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", "--target", target, "--libc", libc, str(example),
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (b"GLIBC" in out.read_bytes()) == (libc == "glibc")
    header = subprocess.run(["readelf", "-h", str(out)], capture_output=True, text=True).stdout
    assert f"Machine:                           {MACHINE[target]}" in header
    assert "INTERP" not in subprocess.run(["readelf", "-l", str(out)], capture_output=True, text=True).stdout
    qemu = shutil.which(QEMU[target])
    assert qemu, f"{QEMU[target]} is missing (scripts/setup.sh installs qemu-user-static)"
    help_out = subprocess.run([qemu, str(out), "-h"], capture_output=True, text=True, timeout=60)
    assert help_out.returncode == 0, help_out.stderr
    assert f"{example.name}:" in help_out.stdout
