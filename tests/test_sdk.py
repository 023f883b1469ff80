"""A board vendor's SDK (issue 32): Yocto's environment ($CC with its flags
and --sysroot, $SDKTARGETSYSROOT), Buildroot's (a $CROSS_COMPILE prefix
whose gcc wrapper has its sysroot built in) and OpenWrt's (a musl gcc,
--libc musl), each simulated by prefixed wrappers around this machine's
compilers and a flat sysroot that holds only the C library. plyc builds
libbpf, libelf and zlib with the SDK's compiler (plyc/sdklibs.py) and the
tracers run: aarch64 ones in the arm64 guest, the x86_64 OpenWrt one here."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "vm"))

SCRIPT = """BEGIN { printf("sdk %d\\n", 6 * 7); }
tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args.filename) == "/no-such-sdk-file"/ { @opens = count(); }
"""
# The workload: cat (run directly, as plain words) opens the file three times.
WORKLOAD = "cat /no-such-sdk-file /no-such-sdk-file /no-such-sdk-file"


def _sdk_home() -> Path:
    # A stable place (the plyc cache's, made as plyc makes its own): the
    # libraries plyc builds for an SDK are keyed by its compiler's path and
    # C library, so the same simulated SDK is built for once, not every run.
    from plyc.cachedir import cache_dir
    return cache_dir() / "test-sdks"


def _wrapper(path: Path, text: str):
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)


def _flat_sysroot(root: Path, triplet: str) -> Path:
    """The C library of Debian's cross toolchain laid out as an SDK's
    sysroot (usr/include, usr/lib, lib): nothing else in it."""
    if not (root / "usr/lib").is_dir():
        tmp = root.with_name(root.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "usr").mkdir(parents=True)
        shutil.copytree(f"/usr/{triplet}/include", tmp / "usr/include", symlinks=True)
        shutil.copytree(f"/usr/{triplet}/lib", tmp / "usr/lib", symlinks=True)
        os.symlink("usr/lib", tmp / "lib")
        os.rename(tmp, root)
    return root


@pytest.fixture(scope="module")
def yocto(tmp_path_factory) -> dict:
    """A Yocto-style aarch64 SDK: what `environment-setup-*` exports."""
    if not shutil.which("aarch64-linux-gnu-gcc"):
        pytest.fail("aarch64-linux-gnu-gcc is missing: scripts/setup.sh installs it")
    home = _sdk_home() / "yocto"
    sysroot = _flat_sysroot(home / "sysroots/cortexa53-poky-linux", "aarch64-linux-gnu")
    bindir = home / "sysroots/x86_64-pokysdk-linux/usr/bin/aarch64-poky-linux"
    for tool in ("gcc", "ar"):
        _wrapper(bindir / f"aarch64-poky-linux-{tool}", f'#!/bin/sh\nexec aarch64-linux-gnu-{tool} "$@"\n')
    return {"PATH": f"{bindir}:{os.environ['PATH']}", "SDKTARGETSYSROOT": str(sysroot),
            "CC": f"aarch64-poky-linux-gcc -mcpu=cortex-a53 -fstack-protector-strong --sysroot={sysroot}",
            "AR": "aarch64-poky-linux-ar", "CFLAGS": " -O2 -pipe -g", "LDFLAGS": "-Wl,-O1"}


@pytest.fixture(scope="module")
def buildroot() -> dict:
    """A Buildroot-style aarch64 toolchain: output/host/bin's prefixed
    tools, the gcc a wrapper that adds its sysroot (as Buildroot's
    toolchain-wrapper does), $CROSS_COMPILE naming the prefix."""
    home = _sdk_home() / "buildroot/output/host"
    sysroot = _flat_sysroot(home / "aarch64-buildroot-linux-gnu/sysroot", "aarch64-linux-gnu")
    bindir = home / "bin"
    _wrapper(bindir / "aarch64-buildroot-linux-gnu-gcc",
             f'#!/bin/sh\nfor a; do [ "$a" = -print-sysroot ] && {{ echo {sysroot}; exit 0; }}; done\n'
             f'exec aarch64-linux-gnu-gcc --sysroot={sysroot} "$@"\n')
    _wrapper(bindir / "aarch64-buildroot-linux-gnu-ar", '#!/bin/sh\nexec aarch64-linux-gnu-ar "$@"\n')
    return {"PATH": f"{bindir}:{os.environ['PATH']}", "CROSS_COMPILE": f"{bindir}/aarch64-buildroot-linux-gnu-"}


@pytest.fixture(scope="module")
def openwrt() -> dict:
    """An OpenWrt-style x86_64 SDK: a musl gcc and its ar (zig's cc and ar
    behind the SDK's names: OpenWrt's gcc has musl and its sysroot built in)."""
    from plyc import musl
    zig = musl.find_zig()
    if not zig:
        pytest.fail("zig is missing: scripts/setup.sh installs the ziglang package")
    bindir = _sdk_home() / "openwrt/staging_dir/toolchain-x86_64_gcc-12.3.0_musl/bin"
    _wrapper(bindir / "x86_64-openwrt-linux-musl-gcc",
             f'#!/bin/sh\nexec {zig} cc -target x86_64-linux-musl "$@"\n')
    _wrapper(bindir / "x86_64-openwrt-linux-musl-ar", f'#!/bin/sh\nexec {zig} ar "$@"\n')
    return {"PATH": f"{bindir}:{os.environ['PATH']}", "CC": "x86_64-openwrt-linux-musl-gcc"}


def plyc(args: list, env: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("CC", "AR", "CFLAGS", "LDFLAGS", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT",
                          "PLYC_LIBC")}
    return subprocess.run([sys.executable, "-m", "plyc", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env={**clean, **env}, timeout=timeout)


def _script(tmp_path: Path) -> Path:
    p = tmp_path / "sdk.bt"
    p.write_text(SCRIPT)
    return p


def _built(args: list, env: dict) -> None:
    proc = plyc(args, env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def _machine(path: Path) -> str:
    return subprocess.run(["file", "-b", str(path)], capture_output=True, text=True).stdout


@pytest.mark.vm
def test_yocto_and_buildroot_sdks_build_tracers_that_run_in_the_arm64_guest(yocto, buildroot, tmp_path):
    import lab
    script = _script(tmp_path)
    for name, env in (("yocto", yocto), ("buildroot", buildroot)):
        _built(["build", "--target", "aarch64", script, "-o", tmp_path / name], env)
        assert "ARM aarch64" in _machine(tmp_path / name) and "statically linked" in _machine(tmp_path / name)
    r = lab.run(["sh", "-c", f"for t in yocto buildroot; do ./$t -c '{WORKLOAD}' 2>/dev/null | grep -v '^$'; done"],
                files=[tmp_path / "yocto", tmp_path / "buildroot"], arch="arm64", kernel="6.1", timeout=300)
    assert r.status == 0, r.stderr
    assert r.stdout.decode().splitlines() == ["sdk 42", "@opens: 3"] * 2


@pytest.mark.bpf
def test_openwrt_musl_sdk_builds_with_its_own_compiler_and_runs(openwrt, tmp_path):
    out = tmp_path / "owrt"
    _built(["build", "--libc", "musl", _script(tmp_path), "-o", out], openwrt)
    assert "statically linked" in _machine(out)
    assert b"GLIBC" not in out.read_bytes()
    run = subprocess.run([out, "-c", WORKLOAD], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [x for x in run.stdout.splitlines() if x] == ["sdk 42", "@opens: 3"]
    assert run.stderr.startswith("Attached 2 probes\n")     # then cat's own complaints


def test_an_sdk_without_its_archiver_is_a_plain_error(tmp_path):
    bindir = tmp_path / "bin"
    _wrapper(bindir / "aarch64-none-linux-gcc", '#!/bin/sh\nexec aarch64-linux-gnu-gcc "$@"\n')
    proc = plyc(["build", "--target", "aarch64", _script(tmp_path), "-o", tmp_path / "t"],
                {"PATH": f"{bindir}:{os.environ['PATH']}", "CC": "aarch64-none-linux-gcc"})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "aarch64-none-linux-ar" in proc.stderr and "$AR" in proc.stderr


def test_libc_musl_with_a_glibc_cc_says_so(tmp_path):
    proc = plyc(["build", "--libc", "musl", _script(tmp_path), "-o", tmp_path / "t"], {"CC": "gcc"})
    assert proc.returncode == 1
    assert "links glibc, not musl" in proc.stderr, proc.stderr
    assert not (tmp_path / "t").exists()
