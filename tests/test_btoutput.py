"""bpftrace's output style (runtime-c/output/bpftrace.c) against bpftrace itself.

Each case is a bpftrace script that `plyc build` compiles (a .bt file:
bpftrace's front end, whose tracers print as bpftrace does) and bpftrace
runs; both run here, and their stdout must be the same bytes, in text and
with -f json: a default build beside bpftrace 0.27 (Debian sid's,
tests/bpftrace_sid.py), whose "Attached N probes" line on stderr must be
the tracer's too, and a build with `--bpftrace-output 0.17` beside Debian
12's bpftrace 0.17. Values come from BEGIN, so nothing depends on the
workload. Skips (saying so) where bpftrace 0.17 is not installed;
tests/runtime/bt-output-*.test hold the same output for machines without
it. See docs/bpftrace.md, "Output".
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# Every aggregation and its sort order. No ties in any sort (bpftrace
# leaves ties in its hash map's order), no hist() value of 2^31 or more
# (bpftrace 0.17 counts those all in [2G, 4G)).
AGGS_BT = """
BEGIN {
	@a[1, "x"] = count();
	@a[2, "y"] = count();
	@a[2, "y"] = count();
	@s = stats(3);
	@s = stats(8);
	@st[1] = stats(10);
	@st[2] = stats(4);
	@st[2] = stats(4);
	@st[2] = stats(4);
	@st[3] = stats(11);
	@h = hist(5);
	@h = hist(-1);
	@h = hist(0);
	@h = hist(1500);
	@h = hist(1);
	@h = hist(1);
	@h = hist(2000000000);
	@g[1] = hist(3);
	@g[2] = hist(100);
	@g[2] = hist(100);
	@l = lhist(35, 0, 100, 10);
	@l = lhist(-5, 0, 100, 10);
	@l = lhist(250, 0, 100, 10);
	@l = lhist(100, 0, 100, 10);
	@k = lhist(3000, 0, 4096, 1024);
	@c = count();
	@su = sum(5);
	@su = sum(-12);
	@mi = min(-4);
	@ma = max(7);
	@av[1] = avg(10);
	@av[2] = avg(3);
	@str["b"] = sum(2);
	@str["a"] = sum(1);
	exit();
}
"""

# print() of a map, of values and a tuple; printf; clear; END; maps that
# END finds empty.
EVENTS_BT = """
BEGIN {
	@a[1] = count();
	@a[2] = count();
	@a[2] = count();
	print(@a);
	print(5);
	print("str");
	print(("hi", 3));
	printf("x %d %s\\n", 4, "a\\tb\\"c");
	clear(@a);
	@b[1] = sum(3);
	@z = count();
	clear(@z);
	exit();
}
END {
	printf("end\\n");
}
"""

CASES = {"aggregations": AGGS_BT, "events": EVENTS_BT}


def need_bpftrace():
    if not shutil.which("bpftrace"):
        pytest.skip("bpftrace is not installed: nothing to compare with (tests/runtime/bt-output-*.test "
                    "still check the output)")


VERSIONS = ("0.17", "0.27")


def build(tmp: Path, name: str, script: str, version: str = "0.17") -> Path:
    src = tmp / f"{name}.bt"
    src.write_text(script)
    out = tmp / name
    proc = builds.run([sys.executable, "-m", "plyc", "build", "--bpftrace-output", version, str(src), "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def run(cmd, stderr: bool = False):
    """The command's stdout (and its stderr's `Attached N probes` lines:
    bpftrace 0.27's warnings about this machine are left out)."""
    proc = subprocess.run(cmd, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = proc.stdout.decode(errors="replace")
    if not stderr:
        return out
    return out, [x for x in proc.stderr.decode(errors="replace").splitlines() if x.startswith("Attached")]


def bpftrace(version: str, request):
    """The argv prefix of bpftrace `version`."""
    if version == "0.17":
        need_bpftrace()
        return ["bpftrace"]
    return request.getfixturevalue("bpftrace27")([])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_same_as_bpftrace(case, fmt, version, tmp_path, request):
    bt = CASES[case]
    theirs = run([*bpftrace(version, request), "-f", fmt, "-e", bt], stderr=True)
    tracer = build(tmp_path, case, bt, version)
    ours = run([str(tracer), "-f", fmt], stderr=True)
    assert ours == theirs
    if version == "0.27" and fmt == "text":
        assert ours[1] == [{"aggregations": "Attached 1 probe", "events": "Attached 2 probes"}[case]]


@pytest.mark.parametrize("version", VERSIONS)
def test_quiet_same_as_bpftrace(version, tmp_path, request):
    bt = CASES["events"]
    theirs = run([*bpftrace(version, request), "-q", "-e", bt], stderr=True)
    tracer = build(tmp_path, "events", bt, version)
    assert run([str(tracer), "-q"], stderr=True) == theirs


def test_attaching_counts_each_match(tmp_path, request):
    """A tracepoint wildcard is as many probes as it matches, BEGIN and END
    one each, as bpftrace counts them: 0.17's line first on stdout, 0.27's
    on stderr."""
    bt = "tracepoint:syscalls:sys_enter_getp* { @c = count(); } BEGIN { exit(); } END { }"
    ours = run([str(build(tmp_path, "wild", bt))]).splitlines()[0]
    theirs = run(["bpftrace", "-e", bt]).splitlines()[0]
    assert ours == theirs
    n = len(list(Path("/sys/kernel/tracing/events/syscalls").glob("sys_enter_getp*")))
    assert ours == f"Attaching {n + 2} probes..."
    ours27 = run([str(build(tmp_path, "wild27", bt, "0.27"))], stderr=True)[1]
    assert ours27 == run([*bpftrace("0.27", request), "-e", bt], stderr=True)[1] == [f"Attached {n + 2} probes"]


def test_kstack_layouts_as_bpftrace(tmp_path):
    """print(kstack), printf's %s of it and a map keyed by it: frames
    indented by 8 in values, by 4 in keys, "sym+off" each. The frames of
    getppid's tracepoint are the same for every caller."""
    need_bpftrace()
    prog = tmp_path / "gp.py"
    prog.write_text("import os\nos.getppid()\n")
    cmd = f"{sys.executable} {prog}"
    bt = ("tracepoint:syscalls:sys_enter_getppid { @[kstack] = count(); "
          "print(kstack); printf(\"%s|\\n\", kstack); exit(); }")
    ours = run([str(build(tmp_path, "stk", bt)), "-c", cmd])
    theirs = run(["bpftrace", "-c", cmd, "-e", bt])

    def first_and_map(text):
        # the first print and printf (the probe may fire again before
        # exit() is seen, by both tracers), and the map without its count
        lines = text.split("|\n")[0]
        dump = text[text.index("\n\n\n@["):].rsplit(": ", 1)[0]
        return lines, dump
    assert first_and_map(ours) == first_and_map(theirs)
    assert "\n        do_syscall_64+" in ours and "\n    do_syscall_64+" in ours


def test_attaching_counts_perf_events_once(tmp_path):
    """profile, interval and software probes are one probe each, however
    many CPUs their perf events are opened on."""
    need_bpftrace()
    bt = ("profile:hz:99 { @p = count(); } interval:ms:300 { exit(); } "
          "software:cpu-clock:1000000 { @s = count(); }")
    ours = run([str(build(tmp_path, "perf", bt))]).splitlines()[0]
    theirs = run(["bpftrace", "-e", bt]).splitlines()[0]
    assert ours == theirs == "Attaching 3 probes..."
