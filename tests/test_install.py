"""plyc as users install it (issue 20): the sdist and the wheel, built from
a copy of the checkout, each installed into a fresh venv outside it; the
installed plyc, run from another folder with no PYTHONPATH, builds tracers
from each front end that run here, cross-builds for aarch64, and the
wheel's [musl] extra gives a working --libc musl build. Every other test
runs plyc from the checkout, so only this one sees what the packages lack.

Needs PyPI (pip fetches setuptools for the build and plyc's dependencies):
a network failure fails the test."""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.search(r'^__version__ = "([^"]+)"', (ROOT / "plyc/__init__.py").read_text(), re.M).group(1)

pytestmark = pytest.mark.bpf

# What a copy of the checkout leaves out: products of earlier builds (a
# stale build/ would put its files into the wheel) and caches.
IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                ".hypothesis", "out")


def run(cmd, timeout=600, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)


def deprecations(log: str) -> list:
    return [line for line in log.splitlines() if "deprecat" in line.lower()]


def package_files() -> set:
    """Every file of plyc/ as the package must carry it (through the links
    to templates/ and runtime-c/), as paths under site-packages."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(ROOT / "plyc", followlinks=True):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if not name.endswith((".pyc", ".pyo")):
                out.add((Path(dirpath) / name).relative_to(ROOT).as_posix())
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """The sdist (python -m build) and the wheel (pip wheel) of a copy of
    the checkout, and what building them printed."""
    base = tmp_path_factory.mktemp("dists")
    src, out = base / "src", base / "dist"
    shutil.copytree(ROOT, src, symlinks=True, ignore=IGNORE)
    # (cwd: base, where no build/ folder shadows the build package)
    sdist = run([sys.executable, "-m", "build", "--sdist", "--outdir", out, src], cwd=base)
    assert sdist.returncode == 0, sdist.stdout + sdist.stderr
    wheel = run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", out, src], cwd=base)
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    return dict(sdist=out / f"plyc-{VERSION}.tar.gz", wheel=out / f"plyc-{VERSION}-py3-none-any.whl",
                logs=sdist.stdout + sdist.stderr + wheel.stdout + wheel.stderr)


class Install:
    """A venv with plyc installed from one artefact; runs its plyc as a user
    would: from a folder outside the checkout, with no PYTHONPATH."""

    def __init__(self, venv: Path, cwd: Path):
        self.venv, self.cwd = venv, cwd
        self.log = ""   # what pip printed installing it
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "PYTHONHOME", "PLYC_ZIG", "VIRTUAL_ENV")}
        self.env["PATH"] = f"{venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"

    def plyc(self, *args, timeout=600):
        return run([self.venv / "bin/plyc", *args], timeout=timeout, cwd=self.cwd, env=self.env)

    def python(self, code: str):
        return run([self.venv / "bin/python", "-c", code], cwd=self.cwd, env=self.env)

    def tracer(self, path, *args, timeout=60):
        return run([path, *args], timeout=timeout, cwd=self.cwd, env=self.env)


def make_install(tmp_path_factory, spec: str, name: str) -> Install:
    base = tmp_path_factory.mktemp(name)
    assert not base.resolve().is_relative_to(ROOT.resolve())
    venv = base / "venv"
    proc = run([sys.executable, "-m", "venv", venv])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # pip's own cache serves the dependencies (ziglang: 50 MB) after the first run.
    # (-v: the sdist's wheel build shows what setuptools printed)
    proc = run([venv / "bin/python", "-m", "pip", "install", "-v", spec], timeout=900,
               env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (base / "work").mkdir()
    install = Install(venv, base / "work")
    install.log = proc.stdout + proc.stderr
    return install


@pytest.fixture(scope="module")
def wheel_install(dists, tmp_path_factory):
    """The wheel, with the [musl] extra (zig's cc)."""
    return make_install(tmp_path_factory, f"{dists['wheel']}[musl]", "wheel")


@pytest.fixture(scope="module")
def sdist_install(dists, tmp_path_factory):
    """The sdist: pip builds a wheel from it, then installs that."""
    return make_install(tmp_path_factory, str(dists["sdist"]), "sdist")


@pytest.fixture(params=["wheel_install", "sdist_install"])
def install(request) -> Install:
    return request.getfixturevalue(request.param)


def test_build_is_clean(dists, sdist_install):
    # setuptools warned that `license = {text = ...}` is deprecated.
    assert deprecations(dists["logs"]) == []
    assert "Building wheel for plyc" in sdist_install.log
    assert deprecations(sdist_install.log) == []


def test_sdist_and_wheel_carry_every_file(dists):
    want = package_files()
    assert "plyc/frontends/bpftrace/__init__.py" in want
    assert "plyc/runtime-c/compat/trixie-on-bookworm.c" in want
    assert "plyc/runtime-c/bpf/include/linux/errno.h" in want
    with tarfile.open(dists["sdist"]) as tar:
        prefix = f"plyc-{VERSION}/"
        members = {m.name[len(prefix):]: m for m in tar.getmembers()}
        # real files, not links back to a checkout that is not there
        assert {n for n, m in members.items() if n.startswith("plyc/") and m.isfile()} >= want
        assert not [n for n, m in members.items() if m.issym() or m.islnk()]
        assert "COPYING" in members and not any(n.startswith("tests/") for n in members)
    with zipfile.ZipFile(dists["wheel"]) as whl:
        names = set(whl.namelist())
        assert {n for n in names if n.startswith("plyc/")} == want
        assert {f"plyc-{VERSION}.data/data/share/man/man1/plyc.1",
                f"plyc-{VERSION}.data/data/share/bash-completion/completions/plyc"} <= names
        assert f"plyc-{VERSION}.dist-info/licenses/COPYING" in names
        meta = whl.read(f"plyc-{VERSION}.dist-info/METADATA").decode()
    assert "License-Expression: GPL-2.0-only" in meta and f"Version: {VERSION}" in meta


def test_version(install):
    proc = install.plyc("--version")
    assert (proc.returncode, proc.stdout) == (0, f"plyc v{VERSION}\n"), proc.stderr   # as bpftrace -V
    # the installed package, not the checkout; its metadata says the same version
    proc = install.python("import importlib.metadata as m, plyc; print(m.version('plyc')); print(plyc.__file__)")
    version, where = proc.stdout.split()
    assert version == VERSION
    assert Path(where).is_relative_to(install.venv), where


def test_man_page_and_completion_land_under_the_prefix(install):
    """`man plyc` and bash completion where the venv's (or pipx's) prefix
    keeps them: share/man/man1 (MANPATH finds it beside bin/ on PATH) and
    share/bash-completion/completions."""
    page = install.venv / "share/man/man1/plyc.1"
    comp = install.venv / "share/bash-completion/completions/plyc"
    assert page.is_file() and comp.is_file()
    assert page.read_text() == (ROOT / "share/man/man1/plyc.1").read_text()
    assert comp.read_text() == (ROOT / "share/bash-completion/completions/plyc").read_text()
    if shutil.which("man"):
        # man finds the page through PATH's bin/ (its ../share/man), as a user's shell does
        proc = run(["man", "-P", "cat", "plyc"], cwd=install.cwd, env={**install.env, "MANPATH": ""})
        assert proc.returncode == 0 and "plyc list" in proc.stdout, proc.stderr


def test_doctor(install):
    proc = install.plyc("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"plyc {VERSION}, building for x86_64"
    assert any(line.startswith("  ok       clang (BPF target): ") for line in lines)
    assert any(line.startswith("  ok       libbpf.a (x86_64): ") for line in lines)


COUNT_PLY = """tracepoint:syscalls/sys_enter_getppid / comm == "plyc-work" /
{
	@[comm] = count();
}
"""


def test_ply_script(install, workload):
    (install.cwd / "count.ply").write_text(COUNT_PLY)
    proc = install.plyc("build", "count.ply", "-o", "count-ply")
    assert proc.returncode == 0, proc.stderr
    traced = install.tracer("./count-ply", "-c", f"{workload} getppid 700")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == "\n@:\n{ plyc-work       }: 700\n"
    # the very tracer the checkout builds: nothing in it says where plyc is
    (install.cwd / "checkout").mkdir(exist_ok=True)
    proc = run([sys.executable, "-m", "plyc", "build", install.cwd / "count.ply", "-o", "count-ply"],
               cwd=install.cwd / "checkout", env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr
    assert (install.cwd / "checkout/count-ply").read_bytes() == (install.cwd / "count-ply").read_bytes()


def test_bt_scripts(install, workload):
    (install.cwd / "count.bt").write_text('tracepoint:syscalls:sys_enter_getppid /comm == "plyc-work"/\n'
                                          "{\n\t@calls = count();\n}\n")
    proc = install.plyc("build", "count.bt", "-o", "count-bt")
    assert proc.returncode == 0, proc.stderr
    traced = install.tracer("./count-bt", "-c", f"{workload} getppid 300")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == "\n\n@calls: 300\n"      # "Attached 1 probe" on stderr, as bpftrace 0.27
    # One of Debian's bpftrace tools, as a user would start with.
    proc = install.plyc("build", "/usr/sbin/opensnoop.bt", "-o", "opensnoop")
    assert proc.returncode == 0, proc.stderr
    traced = install.tracer("./opensnoop", "-c", f"{workload} open /nonexistent/plyc-install 2")
    assert traced.returncode == 0, traced.stderr
    assert "Attached 6 probes" in traced.stderr.splitlines()
    assert traced.stdout.startswith("Tracing open syscalls... Hit Ctrl-C to end.\n"
                                 "PID    COMM               FD ERR PATH\n")
    mine = [line.split() for line in traced.stdout.splitlines() if "/nonexistent/plyc-install" in line]
    assert [fields[1:] for fields in mine] == [["plyc-work", "-1", "2", "/nonexistent/plyc-install"]] * 2


def test_argdist(install, workload):
    proc = install.plyc("argdist", "-C", "t:syscalls:sys_enter_read():u64:args->count:args->count == 4321",
                        "-n", "1", "-i", "1", "-o", "reads")
    assert proc.returncode == 0, proc.stderr
    traced = install.tracer("./reads", "-c", f"{workload} read 5 4321; sleep 2")
    assert traced.returncode == 0, traced.stderr
    assert "t:syscalls:sys_enter_read():u64:args->count:args->count == 4321\n" \
           "\tCOUNT      EVENT\n\t5          args->count = 4321\n" in traced.stdout


def test_cross_build_aarch64(sdist_install):
    # compat/ of runtime-c is linked into cross builds against plyc's Debian sysroot
    (sdist_install.cwd / "count.ply").write_text(COUNT_PLY)
    proc = sdist_install.plyc("build", "--target", "aarch64", "count.ply", "-o", "count-arm64", timeout=900)
    assert proc.returncode == 0, proc.stderr
    kind = run(["file", "-b", sdist_install.cwd / "count-arm64"]).stdout
    assert kind.startswith("ELF 64-bit LSB executable, ARM aarch64") and "statically linked" in kind, kind


def test_musl_extra(wheel_install, workload):
    (wheel_install.cwd / "count.ply").write_text(COUNT_PLY)
    proc = wheel_install.plyc("build", "--libc", "musl", "count.ply", "-o", "count-musl", timeout=900)
    assert proc.returncode == 0, proc.stderr
    tracer = wheel_install.cwd / "count-musl"
    assert b"GLIBC" not in tracer.read_bytes()
    traced = wheel_install.tracer(tracer, "-c", f"{workload} getppid 500")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == "\n@:\n{ plyc-work       }: 500\n"
    # the zig that built it is the [musl] extra's, in the venv
    proc = wheel_install.plyc("doctor", "--libc", "musl")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = wheel_install.venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert f": {site / 'ziglang/zig'} cc -target x86_64-linux-musl " in proc.stdout, proc.stdout
