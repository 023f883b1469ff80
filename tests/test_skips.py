"""tests/skips.py: every run ends with its skips by reason; under CI=true
a skip whose reason is not allowed fails the run, with pytest-xdist too.
Each case runs pytest on a small suite of its own, with the plugin."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skips

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import skips

def pytest_configure(config):
    skips.register(config)
"""

SUITE = """
import pytest

def test_passes():
    pass

def test_skips_for_a_missing_tool():
    pytest.skip("frobtool is not installed here")

@pytest.mark.skipif(True, reason="frobtool is not installed here")
def test_skipped_by_its_marker():
    pass

@pytest.mark.skipif(True, reason="this kernel has no BTF (/sys/kernel/btf/vmlinux): needed here")
def test_skipped_for_an_allowed_reason():
    pass
"""


def pytest_run(tmp_path, suite: str, ci: bool, *args):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(suite)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args,
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)


def closing_line(out: str) -> str:
    return out.rstrip("\n").splitlines()[-1]


def test_skips_are_listed_by_reason_and_pass_outside_ci(tmp_path):
    proc = pytest_run(tmp_path, SUITE, False)
    assert proc.returncode == 0, proc.stdout
    assert re.search(r"1 passed, 3 skipped", closing_line(proc.stdout)), proc.stdout
    summary = proc.stdout[proc.stdout.index("skips by reason (3)"):]
    assert "    2  NOT ALLOWED: frobtool is not installed here\n" in summary
    assert ("    1  allowed (a kernel built without BTF): this kernel has no BTF "
            "(/sys/kernel/btf/vmlinux): needed here\n") in summary
    assert "under CI=true a skip not allowed fails its test" in summary


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_under_ci_a_skip_not_allowed_fails_the_run(tmp_path, xdist):
    proc = pytest_run(tmp_path, SUITE, True, *xdist)
    assert proc.returncode == 1, proc.stdout
    assert re.search(r"2 failed, 1 passed, 1 skipped", closing_line(proc.stdout)), proc.stdout
    assert "    2  NOT ALLOWED: failed: frobtool is not installed here\n" in proc.stdout
    assert "    1  allowed (a kernel built without BTF)" in proc.stdout
    # both the marker's skip and pytest.skip() are failed tests, not errors
    assert "error" not in closing_line(proc.stdout)
    assert "skipped under CI=true, for a reason not allowed (tests/skips.py): frobtool is not installed here" in proc.stdout


def test_under_ci_only_allowed_skips_pass(tmp_path):
    suite = SUITE.split("def test_skips_for_a_missing_tool")[0] + \
        SUITE[SUITE.index("@pytest.mark.skipif(True, reason=\"this kernel"):]
    proc = pytest_run(tmp_path, suite, True)
    assert proc.returncode == 0, proc.stdout
    assert re.search(r"1 passed, 1 skipped", closing_line(proc.stdout)), proc.stdout


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_under_ci_a_skipped_module_fails_the_run(tmp_path, xdist):
    suite = 'import pytest\npytest.skip("frobtool is not installed here", allow_module_level=True)\n'
    proc = pytest_run(tmp_path, suite, True, *xdist)
    assert proc.returncode != 0, proc.stdout
    assert "1 error" in closing_line(proc.stdout), proc.stdout
    assert "    1  NOT ALLOWED: failed: frobtool is not installed here\n" in proc.stdout


def test_a_run_without_skips_says_so(tmp_path):
    proc = pytest_run(tmp_path, "def test_passes():\n    pass\n", True)
    assert proc.returncode == 0, proc.stdout
    assert "skips: none" in proc.stdout


def test_the_allow_list_is_short_and_says_why():
    assert len(skips.ALLOWED) <= 5
    for pattern, why in skips.ALLOWED:
        re.compile(pattern)
        assert why
    for reason in ["bpftrace is not installed here (apt-get install bpftrace)", "loads BPF: needs root",
                   "no Debian 6.1 kernel in the VM lab's cache (tests/vm)"]:
        assert skips.allowed(reason) is None, reason
    # tests/test_compile.py's, on a kernel built without BTF
    assert skips.allowed("this kernel has no BTF (/sys/kernel/btf/vmlinux): fentry twins need the build kernel's")
