"""bpftrace 0.27's tseries() (plyc/aggregations.py's entry, its update in
plyc/codegen/aggregations.py, runtime-c/output/bttseries.c's chart): the IR
of a script, the C the probe runs per aggregator, each error. Behaviour on
a kernel, against bpftrace 0.27: tests/runtime/bt-tseries*.test; the chart's
exact text: tests/c/test_format.c (tests/test_runtime_c.py)."""
import re

import pytest

from plyc import driver
from plyc.codegen import loops, resources
from plyc.ir.dump import dump

from btlower import err, lower


def bpf_c(src: str) -> str:
    """The BPF C, its temporaries renamed: the value A, the argument X."""
    c = driver.compile_source(src, "tool.bt", driver.Options()).generated.bpf_c
    return re.sub(r"\bx\d+\b", "X", re.sub(r"\bagg\d+", "A", c))


def test_ir_and_layout():
    prog = lower('BEGIN { @t[1] = tseries(5, 100ms, 3, "avg"); @u = tseries(-1, 1s, 2); }')
    text = dump(prog)
    # params: the interval in ns, the intervals kept, the aggregator (0: the last value)
    assert "map @t aggregation [s64] -> tseries(s64) params=[100000000, 3, 1]" in text
    assert "map @u aggregation [] -> tseries(s64) params=[1000000000, 2, 0]" in text
    res = resources.build(prog, "tool", "tool.bt")
    t, u = res.map("@t"), res.map("@u")
    # a slot of 24 bytes per interval, per CPU (min/max and the last value can't be shared adds)
    assert (t.value_size, t.bpf_type, t.agg) == (72, "BPF_MAP_TYPE_PERCPU_HASH", "PLYC_A_TSERIES")
    # sized as a histogram's map (--hist-entries): before 6.1 the kernel preallocates it
    assert t.max_entries == resources.DEFAULT_HIST_ENTRIES
    assert (u.value_size, u.bpf_type) == (48, "BPF_MAP_TYPE_PERCPU_ARRAY")
    header = driver.compile_source('BEGIN { @t = tseries(-3, 10ms, 4); }', "tool.bt",
                                   driver.Options()).generated.header
    assert "\tstruct plyc_ts_slot s[4];" in header
    # TAI as bpftrace's sw_tai: the boot clock's helper, asked of the kernel before the load
    assert [(n["helper_name"], n["what"]) for n in loops.needs(res)] == \
        [("bpf_ktime_get_boot_ns", '"tseries()"')] * 2


@pytest.mark.parametrize("agg,lines", [
    ("", ["A_s->value = (__s64)X;", "A_s->meta = A_now;"]),
    ('"sum"', ["A_s->value += (__s64)X;"]),
    ('"avg"', ["A_s->value += (__s64)X;", "A_s->meta += 1;"]),
    ('"min"', ["if (!A_s->meta || (__s64)X < (__s64)A_s->value) {", "A_s->meta = 1;"]),
    ('"max"', ["if (!A_s->meta || (__s64)X > (__s64)A_s->value) {"]),
])
def test_update_per_aggregator(agg, lines):
    c = bpf_c(f'BEGIN {{ @t = tseries(-3, 10ms, 4{", " + agg if agg else ""}); }}')
    assert "__u64 A_now = bpf_ktime_get_boot_ns() + plyc_params.tai_offset;" in c
    assert "__u64 A_ep = A_now / (__u64)10000000LL;" in c and "__u32 A_i = A_ep % 4;" in c
    assert "A_s->epoch = A_ep;" in c
    for line in lines:
        assert line in c
    # an aggregator restarts an interval's slot that held an older one; the last value overwrites it
    assert ("if (A_s->epoch != A_ep) {" in c) == bool(agg)


def test_unsigned_min_compares_unsigned():
    c = bpf_c('kprobe:f { @t = tseries((uint64)arg0, 1s, 3, "min"); }')
    assert "if (!A_s->meta || (__u64)X < (__u64)A_s->value) {" in c


def test_config():
    assert "unstable_tseries=error is not supported by plyc yet" in \
        err('config = { unstable_tseries = error } BEGIN { @t = tseries(1, 1s, 3); }')
    for word in ("enable", "warn"):
        lower(f'config = {{ unstable_tseries = {word} }} BEGIN {{ @t = tseries(1, 1s, 3); }}')


@pytest.mark.parametrize("src,message", [
    ('@t = tseries(1, 1s);', "tseries() requires at least 3 arguments (2 provided)"),
    ('@t = tseries(1, 1s, 3, "sum", 5);', "tseries() requires at most 4 arguments (5 provided)"),
    ('$i = 1; @t = tseries(1, $i, 3);', "tseries: invalid interval_ns value (must be non-negative literal)"),
    ('@t = tseries(1, 1s, $1);', "tseries: invalid num_intervals value (must be non-negative literal)"),
    ('@t = tseries(1, 0, 3);', "tseries() interval_ns must be >= 1 (0 provided)"),
    ('@t = tseries(1, 1s, 0);', "tseries() num_intervals must be >= 1 (0 provided)"),
    ('@t = tseries(1, 1s, -1);', "tseries: invalid num_intervals value (must be non-negative literal)"),
    ('@t = tseries(1, 0x8000000000000000, 3);', "tseries: invalid interval_ns value (must be non-negative literal)"),
    ('@t = tseries(1, 1s, 1001);', "tseries() has more than 1000 intervals in plyc"),
    ('@t = tseries(1, 1s, 3, "stats");',
     'tseries() expects one of the following aggregation functions: avg, max, min, sum ("stats" provided)'),
    ('$a = "avg"; @t = tseries(1, 1s, 3, $a);', "tseries()'s aggregation function must be a string literal"),
    ('@t = tseries(1, 1s, 3); @t = tseries(1, 2s, 3);', "Different tseries bounds in a single map unsupported"),
    ('@t = tseries(1, 1s, 3); @t = tseries(1, 1s, 3, "sum");', "Different tseries bounds in a single map unsupported"),
    ('@t = tseries("a", 1s, 3);', "tseries() needs an integer, got char[8]"),
    ('tseries(1, 1s, 3);', "tseries() must be assigned to a map, e.g. @x = tseries(x)"),
    ('@t = tseries(1, 1s, 3); @t = count();', "@t is a tseries() aggregation elsewhere, not count()"),
    # bpftrace 0.27 refuses these too ("cannot be assigned to a scratch variable"; delete: its
    # BPF program fails to load)
    ('@t = tseries(1, 1s, 3); $x = @t;', "@t is a tseries() map, whose tseries_t has no value to read in a probe"),
    ('@t[1] = tseries(1, 1s, 3); delete(@t, 1);', "delete() from the tseries() map @t is refused: bpftrace 0.27 deletes nothing"),
])
def test_errors(src, message):
    assert message in err(f"BEGIN {{ {src} }}")
