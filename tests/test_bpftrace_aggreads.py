"""An aggregation's value read in a probe (bpftrace 0.27: `@c > 5`,
`(int64)@s`, printf's %s, a `for` over @c, delete()): the IR the front end
makes (frontends/bpftrace/aggreads.py), the C that combines the CPUs'
values (codegen/aggread.py) and the tracer's start-up check for
bpf_map_lookup_percpu_elem, and what is refused with 0.27's words. On a
kernel: tests/runtime/bt-agg-read.test (compared with 0.27) and
tests/vm/cases/bt-agg-read-old-kernel.test (5.10)."""
import pytest

from plyc import driver
from plyc.codegen import aggread
from plyc.ir.dump import dump

from btlower import err, lower


def compiled(src: str):
    return driver.compile_source(src, "tool.bt", driver.Options(frontend={"unsafe": False}))


def test_a_read_is_a_map_read_typed_as_the_aggregated_values():
    prog = lower('BEGIN { @c[1] = count(); @s = sum(-1); @u = max((uint32)3);\n'
                 '  @x = @c[1] + 1; $v = (int64)@s; if (@u > 2) { printf("%s %s\\n", @c[2], @s); } }')
    lines = dump(prog).splitlines()
    for line in ["map @x hash [] -> u64",
                 # %s of a value is the number: %u of count()'s, %d of a signed sum
                 'event 1 printf "%llu %lld\\n" (u64, s64) line 2',
                 "  @x[] = (@c[1:s64]:u64 + 1:s64):u64  @2",
                 "  $v = cast(@s[]:s64):s64  @2",
                 "  if (@u[]:u64 > 2:s64):bool  @2",
                 "    emit printf 1 (@c[2:s64]:u64, @s[]:s64)  @2"]:
        assert line in lines


def test_printf_keeps_flags_and_width_and_other_arguments():
    prog = lower('BEGIN { @c = count(); printf("%% %-5s|%3s %s\\n", @c, @c, "x"); }')
    # the dump shows the parts: "%%" is a literal "%"
    assert 'printf "% %-5llu|%3llu %s\\n" (u64, u64, char[8])' in dump(prog)


def test_the_c_combines_every_cpu_and_the_tracer_asks_for_the_helper():
    c = compiled('tracepoint:syscalls:sys_enter_getppid { @c[tid] = count(); @m = min(-1); @a = avg(2);\n'
                 '  if (@c[tid] > 2 && @m < 0) { printf("%s\\n", @a); } }\n'
                 'END { for ($kv : @c) { printf("%d\\n", (int64)$kv.1); } delete(@m); }')
    bpf = c.generated.bpf_c
    assert "#define PLYC_AGG_READ" in bpf
    assert "plyc_agg_sum(&c, &" in bpf
    assert "plyc_agg_extreme(&m, &" in bpf and ", 1, 1)" in bpf     # min, signed
    assert "plyc_agg_avg(&a, &" in bpf
    assert "plyc_agg_sum(plyc_map, plyc_key, " in bpf                 # the loop's entry
    assert "plyc_agg_zero(&m, 16, " in bpf                            # the key-less delete
    assert [d[0] for d in c.resources.device_consts] == ["ncpus"]
    needs = [(n["line"], n["what"], n["helper"], n["since"]) for n in aggread.needs(c.resources)]
    assert needs == [(2, '"reading the aggregation @c"', 195, "5.19"),
                     (2, '"reading the aggregation @m"', 195, "5.19"),
                     (2, '"reading the aggregation @a"', 195, "5.19"),
                     (3, '"a for loop over the aggregation @c"', 195, "5.19"),
                     (3, '"deleting from the aggregation @m"', 195, "5.19")]
    assert '"bpf_map_lookup_percpu_elem"' in c.generated.loader_c


def test_a_script_without_reads_asks_for_nothing():
    c = compiled('BEGIN { @c[1] = count(); @m[1] = 5; delete(@c, 1); printf("%d\\n", @m[1]); }')
    assert aggread.needs(c.resources) == []
    assert "PLYC_AGG_READ" not in c.generated.bpf_c
    assert "bpf_map_delete_elem(&c, " in c.generated.bpf_c


def test_a_map_named_like_a_callbacks_local_is_read_in_a_loop():
    c = compiled('BEGIN { @c[1] = 5; @key[1] = 6; @m[1] = 1;\n'
                 '  for ($kv : @m) { printf("%d %d\\n", @c[1], @key[1]); } }')
    bpf = c.generated.bpf_c
    assert "*plyc_lc = plyc_cx;" in bpf
    assert "bpf_map_lookup_elem(&c, " in bpf and "(void *plyc_map, const void *plyc_key" in bpf


@pytest.mark.parametrize("src,message", [
    ('BEGIN { @a = count(); printf("%d\\n", @a); }',
     "tool.bt:1:23: error: unsupported format specifier for type 'count_t': d"),
    ('BEGIN { @a = sum(pid); printf("%s %x\\n", 1, @a); }',
     "tool.bt:1:24: error: unsupported format specifier for type 'usum_t': x"),
    ('BEGIN { @a[1] = avg(1); for ($kv : @a) { printf("%d\\n", $kv.1); } }',
     "error: unsupported format specifier for type 'avg_t': d"),
    ("BEGIN { @a = count(); $x = !@a; }",
     "tool.bt:1:28: error: The ! operator can not be used on expressions of type 'count_t'"),
    ("BEGIN { @a = sum(-1); $x = -@a; }",
     "tool.bt:1:28: error: The - operator can not be used on expressions of type 'sum_t'"),
    ("BEGIN { @a = min(1); $x = ~@a; }",
     "tool.bt:1:27: error: The ~ operator can not be used on expressions of type 'min_t'"),
    ("BEGIN { @a = count(); if (@a) { } }", "tool.bt:1:23: error: Invalid condition: count_t"),
    ("BEGIN { @a = count(); $x = @a ? 1 : 2; }", "tool.bt:1:28: error: Invalid condition: count_t"),
    ("BEGIN { @a = max(1); @y = @a; }",
     "tool.bt:1:22: error: Map value 'max_t' cannot be assigned from one map to another. The function that "
     "returns this type must be called directly e.g. `@y = max(retval);`."),
    ("BEGIN { @a = stats(1); @y = 1; @y = @a; }",
     "error: Map value 'stats_t' cannot be assigned from one map to another. The function that returns this "
     "type must be called directly e.g. `@y = stats(arg2);`."),
    ("BEGIN { @a = lhist(1, 0, 10, 1); $x = (int64)@a; }",
     "error: @a is a lhist() map, whose lhist_t has no value to read in a probe"),
    ("BEGIN { @a = stats(1); if (@a > 1) { } }",
     "error: @a is a stats() map, whose stats_t has no value to read in a probe"),
    ("BEGIN { @a[1] = stats(1); for ($kv : @a) { } }", "error: Loop expression does not support type: stats_t"),
    ("BEGIN { @a[1] = lhist(1, 0, 10, 1); delete(@a, 1); }",
     "error: delete() from the lhist() map @a is refused: bpftrace 0.27 deletes nothing from hist(), "
     "lhist() and tseries() maps"),
    ("BEGIN { @a[1] = tseries(1, 1s, 10); delete(@a, 1); }",
     "error: delete() from the tseries() map @a is refused"),
    ("BEGIN { @a = tseries(1, 1s, 10); $x = (int64)@a; }",
     "error: @a is a tseries() map, whose tseries_t has no value to read in a probe"),
    ("BEGIN { @a[1] = tseries(1, 1s, 10); for ($kv : @a) { } }",
     "error: Loop expression does not support type: tseries_t"),
    ("BEGIN { @a = tseries(1, 1s, 10); @y = @a; }",
     "error: Map value 'tseries_t' cannot be assigned from one map to another. The function that returns this "
     "type must be called directly e.g. `@y = tseries(rand %10, 10s, 1);`."),
    ('BEGIN { @a = count(); printf("%.3s\\n", @a); }',
     "error: a precision in '%.3s' of @a's value is not supported by plyc yet"),
])
def test_refused_as_bpftrace_refuses(src, message):
    assert message in err(src)


def test_a_copy_into_a_map_of_integers_is_its_value():
    """0.27 takes `@y = @a` where @y holds integers assigned elsewhere, and
    `@y = (int64)@a` anywhere; the hint says so."""
    assert "  @y[] = @a[]:u64  @1" in dump(lower("BEGIN { @a = count(); @y = 5; @y = @a; }")).splitlines()
    text = dump(lower("BEGIN { @a = count(); @y = (int64)@a; @z[@a] = 1; $v = @a; @w = 1; @w += @a; }"))
    assert "  @z[@a[]:u64] = 1:s64  @1" in text.splitlines()
    assert "note: Add a cast to integer if you want the value of the aggregate, e.g. `@y = (int64)@a;`." in \
        err("BEGIN { @a = count(); @y = @a; }")
