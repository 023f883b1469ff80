"""`plyc doctor --target T` checks what a build for T uses: clang's BPF
target, T's C compiler, the sysroot and T's static libraries in it, and
says how to get what is missing (exactly, asserted here)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TRIPLET = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "armhf": "arm-linux-gnueabihf",
           "riscv64": "riscv64-linux-gnu", "s390x": "s390x-linux-gnu", "mips": "mips-linux-gnu"}
CC = {"x86_64": "/usr/bin/gcc", "aarch64": "aarch64-linux-gnu-gcc", "armhf": "arm-linux-gnueabihf-gcc",
      "riscv64": "riscv64-linux-gnu-gcc", "s390x": "s390x-linux-gnu-gcc", "mips": "mips-linux-gnu-gcc"}
LIBC = {"x86_64": "/usr/lib/x86_64-linux-gnu/libc.a", "aarch64": "/usr/aarch64-linux-gnu/lib/libc.a",
        "armhf": "/usr/arm-linux-gnueabihf/lib/libc.a", "riscv64": "/usr/riscv64-linux-gnu/lib/libc.a",
        "s390x": "/usr/s390x-linux-gnu/lib/libc.a", "mips": "/usr/mips-linux-gnu/lib/libc.a"}
# The user's build environment, which doctor follows as plyc build does.
BUILD_ENV = ("CC", "AR", "CFLAGS", "LDFLAGS", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT", "PLYC_CLANG", "PLYC_LIBC", "PLYC_ZIG")


def doctor(*args, **env) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in BUILD_ENV}
    e.update(env)
    return subprocess.run([sys.executable, "-m", "plyc", "doctor", *args], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=120)


def lines(out: str, state: str) -> dict:
    """{what: detail} of the report's lines in `state` (ok, missing, note)."""
    return dict(re.findall(rf"^  {state} +(.*?): (.*)$", out, re.M))


def debian_sysroot(target: str) -> Path:
    # The first call downloads it (once), as the cross-build tests do.
    proc = subprocess.run([sys.executable, "-m", "plyc", "sysroot", "--target", target],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


# s390x: big-endian; mips: big-endian, its libraries built from sources.
@pytest.mark.parametrize("target", ["x86_64", "aarch64", "armhf", "riscv64", "s390x", "mips"])
def test_doctor_checks_what_a_build_for_the_target_uses(target):
    root = Path("/") if target == "x86_64" else debian_sysroot(target)
    p = doctor("--target", target)
    assert p.returncode == 0, p.stdout + p.stderr
    ok = lines(p.stdout, "ok")
    assert not lines(p.stdout, "missing")
    assert ok["clang (BPF target)"].startswith("/")
    assert ok[f"C compiler for {target}"].startswith(CC[target] + " (")
    assert ok[f"libc.a ({target})"] == LIBC[target]
    for lib in ("libbpf.a", "libelf.a", "libz.a"):
        # The target's own libraries: x86_64's for x86_64, the sysroot's otherwise.
        assert ok[f"{lib} ({target})"] == str(root / "usr/lib" / TRIPLET[target] / lib)
    assert ok[f"bpf/libbpf.h ({target})"] == str(root / "usr/include/bpf/libbpf.h")
    if target != "x86_64":
        assert ok["sysroot (plyc's Debian sysroot)"] == str(root)
        assert "this kernel's BTF" not in p.stdout  # the build machine's kernel is not T's
    assert "bpftool (for --btf)" in p.stdout and "pahole" in p.stdout
    # riscv64's libraries are trixie's, with bookworm's C library: said, not missing.
    assert ("trixie's libraries" in lines(p.stdout, "note")) == (target == "riscv64")


def test_an_empty_sysroot_lacks_the_libraries(tmp_path):
    p = doctor("--target", "armhf", SYSROOT=str(tmp_path))
    assert p.returncode == 1
    assert lines(p.stdout, "ok")["sysroot ($SYSROOT)"] == str(tmp_path)
    missing = lines(p.stdout, "missing")
    lib = tmp_path / "usr/lib/arm-linux-gnueabihf"
    assert missing["libbpf.a (armhf)"] == (
        f"no libbpf.a in {lib} or {tmp_path}/usr/lib: install armhf's libbpf-dev into {tmp_path} "
        "(Debian: libbpf-dev:armhf), or unset $SYSROOT to use plyc's Debian sysroot "
        "(plyc sysroot --target armhf)")
    assert missing["libz.a (armhf)"].startswith(f"no libz.a in {lib} or")
    assert missing["bpf/libbpf.h (armhf)"].startswith(f"no bpf/libbpf.h in {tmp_path}/usr/include: "
                                                      "install armhf's libbpf-dev")
    assert sorted(missing) == ["bpf/libbpf.h (armhf)", "libbpf.a (armhf)", "libelf.a (armhf)",
                               "libz.a (armhf)"]
    # Each fix once, at the end.
    tail = p.stdout.split("\nTo get what is missing:\n")[1].splitlines()
    assert len(tail) == 4 and tail[0] == "  " + missing["libbpf.a (armhf)"]


def test_a_sysroot_that_is_not_there(tmp_path):
    p = doctor("--target", "aarch64", "--sysroot", str(tmp_path / "nowhere"))
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"sysroot (--sysroot)": (
        f"{tmp_path}/nowhere is not a directory: give the target's sysroot, or leave out "
        "--sysroot to use plyc's Debian sysroot (plyc sysroot --target aarch64)")}


def test_a_cc_that_does_not_exist(tmp_path):
    p = doctor("--target", "aarch64", CC="/nonexistent/cc")
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"C compiler for aarch64": (
        "/nonexistent/cc is not installed (apt-get install gcc-aarch64-linux-gnu; "
        "or set $CC or $CROSS_COMPILE)")}


def test_the_build_machines_gcc_is_not_a_cross_compiler():
    # What doctor used to call "ok" for armhf: x86_64's gcc.
    p = doctor("--target", "armhf", CC="gcc")
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"C compiler for armhf": (
        "gcc compiles for x86_64-linux-gnu, not armhf: apt-get install gcc-arm-linux-gnueabihf, "
        "or set $CC or $CROSS_COMPILE to armhf's compiler")}


def test_no_debian_sysroot_yet(tmp_path):
    p = doctor("--target", "armhf", PLYC_CACHE=str(tmp_path))
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"sysroot (plyc's Debian sysroot)": (
        f"plyc sysroot --target armhf (downloads libbpf, libelf and zlib for armhf into "
        f"{tmp_path}/sysroot/armhf/root; plyc build also does it on first use), or give one "
        "with --sysroot or $SYSROOT")}


def test_riscv64_without_a_sysroot_says_where_it_comes_from(tmp_path):
    p = doctor("--target", "riscv64", PLYC_CACHE=str(tmp_path))
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"sysroot (plyc's Debian sysroot)": (
        f"plyc sysroot --target riscv64 (downloads libbpf, libelf and zlib for riscv64 from "
        f"Debian trixie into {tmp_path}/sysroot/riscv64/root; plyc build also does it on first "
        "use), or give one with --sysroot or $SYSROOT")}


def test_a_cross_compiler_without_its_c_library(tmp_path):
    # gcc-riscv64-linux-gnu without libc6-dev-riscv64-cross: a compiler that
    # finds no libc.a (a wrapper that says it has none).
    fake = tmp_path / "riscv64-linux-gnu-gcc"
    fake.write_text('#!/bin/sh\ncase "$1" in -print-file-name=*) echo libc.a;; '
                    '*) exec riscv64-linux-gnu-gcc "$@";; esac\n')
    fake.chmod(0o755)
    p = doctor("--target", "riscv64", CC=str(fake), AR="riscv64-linux-gnu-ar")
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"libc.a (riscv64)": "apt-get install libc6-dev-riscv64-cross"}


def test_an_sdk_compiler_without_its_archiver(tmp_path):
    # A vendor SDK's prefixed gcc without the prefixed ar beside it: the
    # build would stop there, so the doctor says so, naming the tool.
    fake = tmp_path / "aarch64-vendor-linux-gcc"
    fake.write_text('#!/bin/sh\nexec aarch64-linux-gnu-gcc "$@"\n')
    fake.chmod(0o755)
    p = doctor("--target", "aarch64", CC=str(fake))
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"archiver": (
        f"the archiver beside {fake} ({tmp_path / 'aarch64-vendor-linux-ar'}) is not installed; "
        "set $AR to the SDK's ar (or binutils' ar)")}


def test_a_clang_without_the_bpf_target(tmp_path):
    fake = tmp_path / "clang"
    fake.write_text("#!/bin/sh\necho 'fake clang 1.0'\nexit 1\n")
    fake.chmod(0o755)
    p = doctor("--target", "x86_64", PLYC_CLANG=str(fake))
    assert p.returncode == 1
    assert lines(p.stdout, "missing") == {"clang's BPF target": (
        f"{fake} cannot compile for -target bpf: install Debian's clang (apt-get install clang "
        "llvm) or set $PLYC_CLANG to one that can")}


def musl_libraries(target: str) -> Path:
    proc = subprocess.run([sys.executable, "-m", "plyc", "sysroot", "--libc", "musl", "--target", target],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


ZIG_TRIPLE = {"x86_64": "x86_64-linux-musl", "aarch64": "aarch64-linux-musl", "armhf": "thumb-linux-musleabihf",
              "riscv64": "riscv64-linux-musl"}


@pytest.mark.parametrize("target", list(ZIG_TRIPLE))
def test_doctor_checks_a_musl_build(target):
    root = musl_libraries(target)
    p = doctor("--target", target, "--libc", "musl")
    assert p.returncode == 0, p.stdout + p.stderr
    assert not lines(p.stdout, "missing")
    ok = lines(p.stdout, "ok")
    cc = ok[f"C compiler for {target} (musl)"]
    assert re.fullmatch(rf"/\S+/zig cc -target {ZIG_TRIPLE[target]}( \S+)* \(zig [0-9.]+\S*\)", cc), cc
    for lib in ("libbpf.a", "libelf.a", "libz.a"):
        assert ok[f"{lib} ({target}, musl)"] == str(root / "lib" / lib)
    assert ok[f"bpf/libbpf.h ({target}, musl)"] == str(root / "include/bpf/libbpf.h")
    assert f"C compiler for {target}:" not in p.stdout   # glibc's gcc is not what a musl build uses
    assert not (ROOT / "-.o").exists()   # its compile check leaves nothing behind


def test_no_musl_libraries_yet(tmp_path):
    p = doctor("--target", "armhf", "--libc", "musl", PLYC_CACHE=str(tmp_path))
    assert p.returncode == 1
    missing = lines(p.stdout, "missing")
    assert list(missing) == ["libbpf.a, libelf.a, libz.a (armhf, musl)"]
    assert re.fullmatch(
        r"plyc sysroot --libc musl --target armhf \(builds libbpf, libelf and zlib from Debian bookworm's "
        rf"sources with zig into {re.escape(str(tmp_path))}/musl/armhf-[0-9a-f]{{12}}; plyc build also does it "
        r"on first use\)", missing["libbpf.a, libelf.a, libz.a (armhf, musl)"])


def test_no_zig(tmp_path):
    p = doctor("--target", "aarch64", "--libc", "musl", PLYC_ZIG=str(tmp_path / "zig"))
    assert p.returncode == 1
    assert lines(p.stdout, "missing")["C compiler for aarch64 (musl)"] == (
        "pip install ziglang (zig's C compiler builds the musl tracers), or set $PLYC_ZIG")


def test_a_reader_that_leaves_early_gets_no_traceback():
    # `plyc doctor | head -1`: the pipe's reader gone before plyc writes
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "plyc", "doctor"], stdout=write, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, timeout=120)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (0, "")
