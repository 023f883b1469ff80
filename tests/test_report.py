"""The periodic report (plyc/ir/report.py, runtime-c/output/bccreport.c) as any front
end asks for it (ir.Program.report): here over a ply script's IR, with no
argdist in sight."""
import re
import subprocess
import time
from dataclasses import replace

import pytest

from plyc import aggregations as AGG
from plyc import driver
from plyc import types as T
from plyc.diag import PlycError
from plyc.ir import nodes as ir
from plyc.ir.report import Report, ReportError, Section, check

SCRIPT = """\
tracepoint:syscalls/sys_enter_read / comm == "plyc-report" /
{
	@sizes[data->count] = count();
	@reads = count();
}
"""
MAPS = {"@sizes": "count", "@reads": "count", "@hist": "log2"}
WORK = "WORKLOAD_COMM=plyc-report"   # a name of its own: other tests' workloads may run meanwhile


def sections(top_labels=("size",)):
    return (Section("@sizes", "counts", "read sizes", top_labels),
            Section("@reads", "counts", "reads", keyless_row="total reads"),
            Section("@hist", "log2", "bytes"))


@pytest.mark.parametrize("report, message", [
    (Report(0, ()), "report interval 0: must be at least 1 s"),
    (Report(1, (Section("@nope", "counts", "h"),)), "report section @nope: no such map"),
    (Report(1, (Section("@sizes", "table", "h"),)), "report section @sizes: unknown style 'table'"),
    (Report(1, (Section("@hist", "counts", "h"),)),
     "report section @hist: a counts section shows a count map, not log2"),
])
def test_check_refuses(report, message):
    with pytest.raises(ReportError, match=re.escape(message) + "$"):
        check(report, MAPS)


def program(report):
    """The script's IR, with a log2 histogram of the same values (which ply
    can't name: a front end that wants one makes its IR) and the report."""
    opts = driver.Options()
    prog = driver.analyze(driver.parse(SCRIPT, "t.ply"), SCRIPT, "t.ply", opts)
    cond = prog.probes[0].body.stmts[0]
    sizes = next(s for s in ir.walk(cond) if isinstance(s, ir.Aggregate))
    log2 = AGG.AGGREGATIONS["log2"]
    prog.maps["@hist"] = ir.Map("@hist", len(prog.maps), ir.AGGREGATION, sizes.span, [], T.U64, log2,
                                written=True)
    cond.then.stmts.append(ir.Aggregate("@hist", [], log2, [replace(sizes.keys[0])], span=sizes.span))
    prog.report = report
    return prog, opts


def test_the_core_checks_the_request():
    """A section of a map that isn't there is a front end's bug, which the
    core's passes catch before code generation."""
    from plyc.ir import passes
    prog, _ = program(Report(1, (Section("@nope", "counts", "h"),)))
    with pytest.raises(ReportError, match="report section @nope: no such map"):
        passes.run(passes.CORE, prog)


def test_loader_tables():
    """The request becomes the loader's tables; no report, no tables, and
    the maps are dumped at exit as usual."""
    report = Report(5, sections(), count=3, top=2, cumulative=True, duration=7.5, default_pid=42)
    prog, opts = program(report)
    loader = driver.compile_ir(prog, SCRIPT, "t.ply", opts).generated.loader_c
    assert '''static const struct plyc_report_section report_sections[] = {
	{
		.map = 0,
		.style = PLYC_REPORT_COUNTS,
		.header = "read sizes",
		.key_labels = report_labels0,
		.keyless_row = NULL,
	},
	{
		.map = 1,
		.style = PLYC_REPORT_COUNTS,
		.header = "reads",
		.key_labels = report_labels1,
		.keyless_row = "total reads",
	},
	{
		.map = 2,
		.style = PLYC_REPORT_LOG2,
		.header = "bytes",
		.key_labels = report_labels2,
		.keyless_row = NULL,
	},
};

static const struct plyc_report report = {
	.sections = report_sections,
	.nsections = 3,
	.interval = 5,
	.count = 3,
	.top = 2,
	.cumulative = 1,
	.duration = 7.5,
};
''' in loader
    assert ".report = &report," in loader and ".default_pid = 42," in loader
    plain = driver.compile_source(SCRIPT, "t.ply", driver.Options()).generated.loader_c
    assert "plyc_report" not in plain.replace("plyc_report.h", "") and ".report = NULL," in plain


@pytest.mark.parametrize("name", ["log2", "_log2"])
def test_ply_does_not_name_log2(name):
    with pytest.raises(PlycError, match=r"@maps hold aggregations: assign count\(\)/sum\(\)/min\(\)/max\(\)/"
                                        r"avg\(\)/quantize\(\)/lquantize\(\)"):
        driver.compile_source(f"BEGIN {{ @h = {name}(1); }}", "t.ply", driver.Options())


def build(tmp_path, report):
    out = tmp_path / "t"
    prog, opts = program(report)
    driver.build_ir(prog, SCRIPT, "t.ply", str(out), opts)
    return str(out)


@pytest.mark.bpf
def test_report_at_the_end(tmp_path, workload):
    """A long interval: the one report is the last, when the -c command
    ends; the top 1 row of a counts section; no map dump."""
    tracer = build(tmp_path, Report(60, sections(), top=1))
    proc = subprocess.run([tracer, "-c", f"{WORK} {workload} read 3 16; {WORK} {workload} read 2 100; "
                                         f"{WORK} {workload} read 1 5"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"\[\d\d:\d\d:\d\d\]\n", proc.stdout[:11]), proc.stdout
    assert proc.stdout[11:] == (
        "read sizes\n"
        "\tCOUNT      EVENT\n"
        "\t3          size = 16\n"
        "reads\n"
        "\tCOUNT      EVENT\n"
        "\t6          total reads\n"
        "     bytes               : count     distribution\n"
        "         0 -> 1          : 0        |                                        |\n"
        "         2 -> 3          : 0        |                                        |\n"
        "         4 -> 7          : 1        |*************                           |\n"
        "         8 -> 15         : 0        |                                        |\n"
        "        16 -> 31         : 3        |****************************************|\n"
        "        32 -> 63         : 0        |                                        |\n"
        "        64 -> 127        : 2        |**************************              |\n")


@pytest.mark.bpf
def test_report_count_ends_the_run(tmp_path, workload):
    """Every second, cleared between reports; after the second one the
    tracer exits 0 by itself, long before its command ends."""
    tracer = build(tmp_path, Report(1, sections()[1:2], count=2))
    start = time.monotonic()
    proc = subprocess.run([tracer, "-c", f"{WORK} {workload} read 4 1; sleep 30"], capture_output=True, text=True,
                          timeout=60)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    reports = re.split(r"^\[\d\d:\d\d:\d\d\]\n", proc.stdout, flags=re.M)
    assert reports == ["", "reads\n\tCOUNT      EVENT\n\t4          total reads\n", "reads\n\tCOUNT      EVENT\n"], \
        proc.stdout
    assert 1.5 < took < 10, took
