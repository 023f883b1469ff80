"""Skips, counted (a pytest plugin; tests/conftest.py registers it).

Every run ends with its skips grouped by reason, a count each, each marked
allowed or not. Under CI=true a skip whose reason is not on ALLOWED fails
its test: a machine set up by scripts/setup.sh runs every test, and one
that cannot must say so in red, not pass green with fewer tests.

Only the controller counts: under pytest-xdist the workers' reports reach
it through the same hooks, where they are changed before the terminal and
the session count them, so the closing line and the exit status say failed.
"""
import os
import re
from collections import Counter

import pytest

# Reasons no setup can remove on a machine that runs the tests: each a
# regular expression the whole reason must match, and why it is allowed.
# Keep it short. A missing package, corpus or lab kernel is not here:
# scripts/setup.sh installs the packages, the lab fetches its kernels.
ALLOWED = [
    # BTF is built into the kernel (CONFIG_DEBUG_INFO_BTF): the machine's
    # kernel is what it is. Debian's and the usual CI runners' have it.
    (r"this kernel has no BTF \(/sys/kernel/btf/vmlinux\).*", "a kernel built without BTF"),
    # bpftrace 0.27 comes from Debian sid, debootstrapped once into the cache
    # (tests/bpftrace_sid.py): a machine that cannot reach the archive (no
    # network, a firewall) has no way to get it; one that has it cached runs.
    (r"Debian's archive cannot be reached \(\S+\): no bpftrace 0\.27 chroot.*", "no network to Debian's archive"),
]


def on_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def allowed(reason: str):
    """Why `reason` is allowed, or None."""
    for pattern, why in ALLOWED:
        if re.fullmatch(pattern, reason, re.DOTALL):
            return why
    return None


def skip_reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


class Ledger:
    def __init__(self):
        self.reasons = Counter()

    @pytest.hookimpl(tryfirst=True)     # before the terminal and the session count the report
    def pytest_runtest_logreport(self, report):
        self.see(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report):
        self.see(report)

    def see(self, report):
        # (an xfail is reported as skipped too; the project has none)
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = skip_reason(report)
        self.reasons[reason] += 1
        if on_ci() and allowed(reason) is None:
            report.outcome = "failed"
            if getattr(report, "when", None) == "setup":
                report.when = "call"    # a failed test, not an error of a fixture
            report.longrepr = f"skipped under CI=true, for a reason not allowed (tests/skips.py): {reason}"

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        if not self.reasons:
            tr.write_line("skips: none")
            return
        tr.write_sep("=", f"skips by reason ({sum(self.reasons.values())})")
        for reason, count in sorted(self.reasons.items(), key=lambda rc: (-rc[1], rc[0])):
            why = allowed(reason)
            mark = f"allowed ({why})" if why else ("NOT ALLOWED: failed" if on_ci() else "NOT ALLOWED")
            tr.write_line(f"{count:5d}  {mark}: {reason}")
        if not on_ci() and any(allowed(r) is None for r in self.reasons):
            tr.write_line("(under CI=true a skip not allowed fails its test: tests/skips.py)")


def register(config):
    """Counts on the controller only (a pytest-xdist worker's reports reach it)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Ledger(), "plyc-skips")
