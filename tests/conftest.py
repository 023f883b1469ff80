import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import skips  # noqa: E402


def pytest_configure(config):
    skips.register(config)
    # The tests start plyc hundreds of times: with PYTHONDONTWRITEBYTECODE
    # (set on some machines, ours among them) each start compiled all of
    # plyc's modules again, a quarter of a small build's CPU time.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # The builds this run shares between its tests (tests/builds.py): made
    # here unless the caller gives one (make test gives its two runs one);
    # pytest-xdist's workers inherit it from the controller.
    if not os.environ.get("PLYC_TEST_BUILDS") and not hasattr(config, "workerinput"):
        os.environ["PLYC_TEST_BUILDS"] = config._plyc_builds = tempfile.mkdtemp(prefix="plyc-test-builds-")


def pytest_unconfigure(config):
    if getattr(config, "_plyc_builds", None):
        shutil.rmtree(config._plyc_builds, ignore_errors=True)
        del os.environ["PLYC_TEST_BUILDS"]


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "bpf" in item.keywords and os.geteuid() != 0:
            item.add_marker(pytest.mark.skip(reason="loads BPF: needs root"))
        # Under pytest-xdist's --dist loadgroup (make test), the qemu tests
        # are one unit: one worker boots the guests one after the other
        # while the others build and check.
        if "vm" in item.keywords:
            item.add_marker(pytest.mark.xdist_group("vm"))
    # The guests first: the longest unit, started while the builds run.
    items.sort(key=lambda item: "vm" not in item.keywords)


def build_helper(tmp_path_factory, name: str) -> str:
    out = tmp_path_factory.mktemp(name) / name
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(out),
                    str(ROOT / "tests" / "helpers" / f"{name}.c")], check=True)
    return str(out)


@pytest.fixture(scope="session")
def workload(tmp_path_factory) -> str:
    """The deterministic workload program (tests/helpers/workload.c)."""
    return build_helper(tmp_path_factory, "workload")


@pytest.fixture(scope="session")
def lab_kernel():
    """lab_kernel(arch, version): a Debian kernel of the qemu lab
    (tests/vm/lab.py), fetched on first use and cached. A test that needs
    one asks for it here, never decides from the cache at collection time:
    a fresh machine has an empty cache."""
    sys.path.insert(0, str(ROOT / "tests" / "vm"))
    import lab
    return lab.kernel


@pytest.fixture(scope="session")
def bpftrace27():
    """bpftrace 0.27 (Debian sid's), as a function: args, cwd -> argv
    (tests/bpftrace_sid.py). Its chroot is built on first use into the
    cache (~47 s and 400 MB here), once for all of pytest-xdist's workers;
    skipped, saying why, only where Debian's archive cannot be reached."""
    import bpftrace_sid
    try:
        chroot = bpftrace_sid.ensure()
    except bpftrace_sid.Unavailable as e:
        print(f"\nskipping the bpftrace 0.27 comparisons: {e}", file=sys.stderr)
        pytest.skip(str(e))
    # The cases hold what 0.27 prints (=== compare-0.27-stdout): a chroot
    # built after sid moved on must say so, not fail case by case.
    version = bpftrace_sid.version(chroot)
    if not version.startswith("bpftrace v0.27."):
        pytest.fail(f"{chroot} has {version!r}, not bpftrace 0.27: sid moved on; "
                    "the cases' compare-0.27 sections and docs/bpftrace.md need measuring again")
    return lambda args, cwd=None, **kw: bpftrace_sid.command(args, cwd=cwd, chroot=chroot, **kw)


@pytest.fixture(scope="session")
def usdt_prog(tmp_path_factory) -> str:
    """A program with USDT probes (tests/helpers/usdt_prog.c)."""
    return build_helper(tmp_path_factory, "usdt_prog")
