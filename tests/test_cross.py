"""Cross builds: every example builds for aarch64, armhf and riscv64 (a
static executable for that machine), with glibc and with musl, and the
tracer runs under qemu-user. The newer targets (MIPS, POWER, s390x: the
big-endian ones included) build a few examples each, to keep the time down."""
import re
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
# ARMv6 (musl only: Debian's armhf is ARMv7) and ARMv5TE: run under qemu-user
# on such a CPU model (arm1176, arm926), which faults on any newer instruction.
NEW_BUILDS += [("armv6", "musl"), ("armel", "musl"), ("armel", "glibc")]


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
    cpu = ["-cpu", A.get(target).qemu_cpu] if A.get(target).qemu_cpu else []
    help_out = subprocess.run([qemu, *cpu, str(out), "-h"], capture_output=True, text=True, timeout=60)
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


# Instructions an older ARM core lacks, as objdump spells them: ARMv7's
# (and Thumb-2's wide forms) for ARMv6; ARMv6's too, and any VFP, for the
# soft-float ARMv5TE. qemu-user's CPU model catches only what runs; this
# catches what -h did not reach.
ARMV7_ONLY = {"movw", "movt", "bfi", "bfc", "ubfx", "sbfx", "rbit", "sdiv", "udiv", "mls", "dmb", "dsb",
              "isb", "ldrexd", "strexd", "pli"}
ARMV6_ONLY = {"ldrex", "strex", "ldrexb", "strexb", "ldrexh", "strexh", "clrex", "rev", "rev16", "revsh",
              "uxtb", "uxth", "sxtb", "sxth", "uxtab", "uxtah", "sxtab", "sxtah", "sel", "usat", "ssat",
              "pkhbt", "pkhtb", "umaal", "cps", "wfe", "wfi", "sev", "yield"}
TOO_NEW = {"armv6": ARMV7_ONLY, "armel": ARMV7_ONLY | ARMV6_ONLY}


@pytest.mark.parametrize("target", ["armv6", "armel"])
def test_old_arm_tracers_use_only_their_cores_instructions(target, tmp_path):
    out = tmp_path / "t"
    proc = builds.run([sys.executable, "-m", "plyc", "build", "--target", target, "--libc", "musl", "--no-strip",
                       str(ROOT / "examples/syscall-count.ply"), "-o", str(out)],
                      capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    # Symbols kept: objdump reads the mapping symbols ($a code, $d data), so
    # literal pools are not read as instructions.
    dis = subprocess.run(["arm-linux-gnueabihf-objdump", "-d", str(out)], capture_output=True, text=True,
                         check=True).stdout
    found, function = {}, ""
    for line in dis.splitlines():
        if line.endswith(">:"):
            function = line.split("<", 1)[1][:-2]
        parts = line.split("\t")
        # musl's atomics for ARMv6 and v7 cores, which it picks at run time
        # by the kernel's helpers' version: never reached on older cores.
        if len(parts) < 3 or not parts[0].strip().endswith(":") or re.match(r"__a_\w+_v[67]$", function):
            continue
        op = parts[2].split()[0] if parts[2].split() else ""
        base = op.split(".")[0]
        wide = op.endswith(".w")
        vfp = target == "armel" and (base.startswith("v") or base.startswith(("fld", "fst", "fmrx", "fmxr")))
        for name in (TOO_NEW[target] | ({base} if wide or vfp else set())):
            if base == name or base.startswith(name) and base[len(name):] in COND:
                found.setdefault(op, line.strip())
    assert not found, found
    assert "Thumb" not in subprocess.run(["file", "-b", str(out)], capture_output=True, text=True).stdout


# ARM's condition suffixes (movwne, revhi, ...).
COND = {"", "eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"}


@pytest.mark.vm
def test_old_arm_tracers_run_on_an_armv6_core(tmp_path):
    # The lab's Raspberry Pi Zero (qemu's raspi0: an ARM1176, ARMv6) with
    # Debian's armel rpi kernel: the ARMv6 tracer on the core it is built
    # for, the ARMv5TE one on a core that runs ARMv5TE code, and a static
    # tracer needs no C library of the board's: both load and count.
    sys.path.insert(0, str(ROOT / "tests" / "vm"))
    import lab
    script = tmp_path / "opens.bt"
    script.write_text('tracepoint:syscalls:sys_enter_openat /pid == cpid && '
                      'str(args.filename) == "/no-such-arm-file"/ { @opens = count(); }\n')
    for target in ("armv6", "armel"):
        proc = builds.run([sys.executable, "-m", "plyc", "build", "--target", target, "--libc", "musl",
                           str(script), "-o", str(tmp_path / target)],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
        assert proc.returncode == 0, proc.stderr
    work = "cat /no-such-arm-file /no-such-arm-file"
    r = lab.run(["sh", "-c", f"for t in armv6 armel; do ./$t -c '{work}' 2>/dev/null | grep -v '^$'; done"],
                files=[tmp_path / "armv6", tmp_path / "armel"], arch="armel", kernel="6.1", timeout=400)
    assert r.status == 0, r.stderr
    assert r.stdout.decode().splitlines() == ["@opens: 2"] * 2
