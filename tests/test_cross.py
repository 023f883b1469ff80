"""Cross builds: every example builds for aarch64, armhf and riscv64 (a
static executable for that machine), with glibc and with musl, and the
tracer runs under qemu-user. The newer targets (MIPS, POWER, s390x: the
big-endian ones included) build a few examples each, to keep the time down."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from plyc import arch as A  # noqa: E402

EXAMPLES = sorted((ROOT / "examples").glob("*.ply"))


@pytest.fixture(scope="module", params=[(t, libc) for t in ("aarch64", "armhf", "riscv64")
                                        for libc in ("glibc", "musl")], ids="-".join)
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
    check_cross_build(example, *target_libc, tmp_path)


# Tracepoints with fields, kprobes with arguments past the registers
# (opensnoop's), a histogram, stacks, profile.
FEW = ["syscall-count", "opensnoop", "read-dist", "profile", "manual-xmit-offset", "syscalls-by-caller"]
NEW_TARGETS = ["mipsel", "mips64el", "ppc64le", "s390x", "mips"]


# musl for big-endian MIPS (OpenWrt's routers) only: each target's first musl
# build takes 1-2 minutes (docs/toolchain.md); s390x's runs in its guest.
NEW_BUILDS = [(t, "glibc") for t in NEW_TARGETS] + [("mips", "musl")]


@pytest.fixture(scope="module", params=NEW_BUILDS, ids="-".join)
def new_target(request):
    target, libc = request.param
    proc = subprocess.run([sys.executable, "-m", "plyc", "sysroot", "--target", target, "--libc", libc],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return request.param


@pytest.mark.parametrize("example", FEW)
def test_new_target_builds(example, new_target, tmp_path):
    check_cross_build(ROOT / "examples" / f"{example}.ply", *new_target, tmp_path)


def check_cross_build(example, target, libc, tmp_path):
    out = tmp_path / example.stem
    proc = builds.run([sys.executable, "-m", "plyc", "build", "--target", target, "--libc", libc, str(example),
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (b"GLIBC" in out.read_bytes()) == (libc == "glibc")
    header = subprocess.run(["readelf", "-h", str(out)], capture_output=True, text=True).stdout
    assert f"Machine:                           {A.get(target).elf_machine}" in header
    assert "INTERP" not in subprocess.run(["readelf", "-l", str(out)], capture_output=True, text=True).stdout
    qemu = shutil.which(A.get(target).qemu_user)
    assert qemu, f"{A.get(target).qemu_user} is missing (scripts/setup.sh installs qemu-user-static)"
    help_out = subprocess.run([qemu, str(out), "-h"], capture_output=True, text=True, timeout=60)
    assert help_out.returncode == 0, help_out.stderr
    assert f"{example.name}:" in help_out.stdout


def test_big_endian_mips_loads_nothing_under_qemu_user(tmp_path):
    # No Debian kernel runs big-endian MIPS, and qemu-user has no bpf
    # syscall: the tracer gets as far as loading and says why it stops
    # (docs/kernels.md).
    proc = subprocess.run([sys.executable, "-m", "plyc", "sysroot", "--target", "mips"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "begin"
    proc = builds.run([sys.executable, "-m", "plyc", "build", "--target", "mips", "-e",
                       'BEGIN { printf("hi\\n"); exit(); }', "-o", str(out)],
                      capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([shutil.which("qemu-mips-static"), str(out)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "hi" not in run.stdout
    assert "loading the BPF programs failed: Function not implemented" in run.stderr
