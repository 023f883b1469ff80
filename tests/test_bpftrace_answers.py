"""bpftrace scripts that plyc once ran to a wrong answer without an error
(issue 24): what the lowering and the generated C now do instead. Their
runs beside bpftrace are tests/runtime/bt-exit-*.test."""
import re

from plyc import driver
from plyc.ir.dump import dump

from btlower import lower
from cbuild import bpf_compile_error


def compiled(src: str) -> driver.Compiled:
    out = driver.compile_source(src, "tool.bt", driver.Options(frontend={"unsafe": False}))
    assert bpf_compile_error(out) == ""
    return out


def test_exit_returns_from_the_probe():
    text = dump(lower('BEGIN { @n = count(); if (pid > 0) { exit(); } else { exit(3); } @n = count(); }'))
    # each exit() is followed by the probe's return, as bpftrace's
    assert "    emit exit 1 (0:s32)  @1\n    return  @1\n" in text
    assert "    emit exit 2 (3:s64)  @1\n    return  @1\n" in text


def test_exit_in_a_while_loop_returns_not_breaks():
    c = compiled('BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 2) { exit(); } @w = count(); } }') \
        .generated.bpf_c
    loop = c[c.index("for (; n"):c.index("plyc_count_loopcap")]
    assert "plyc_event_submit" in loop and "\t\t\treturn 0;\n" in loop


def test_exit_in_a_for_loop_stops_the_iteration_and_the_probe():
    src = ('BEGIN { @m[1] = 1; @m[2] = 2;\n'
           '  for ($kv : @m) { for ($x : @m) { @inner = count(); exit(); } @outer = count(); }\n'
           '  @after = count(); }\n'
           'END { @m[3] = 3; for ($kv : @m) { $j = 0; while ($j < 3) { $j++; exit(); } } @end = count(); }')
    c = compiled(src).generated.bpf_c
    # the callbacks of loops that return carry a flag in their context
    assert c.count("\t__u64 ret;\n") == 3
    # the innermost returns 1 (stop iterating) with the flag set ...
    # (BEGIN's inner loop, END's in its while, and BEGIN's outer: below)
    assert len(re.findall(r"c->ret = 1;\n\t+return 1;", c)) == 3
    # ... the outer one, seeing it, returns in its turn, and the probes too
    assert re.search(r"if \(c\d+\.ret\) \{\n(\t+c->\w+ = \w+;\n)*\t+c->ret = 1;\n\t+return 1;\n\t+\}", c)
    assert len(re.findall(r"if \(c\d+\.ret\) \{\n\t+return 0;", c)) == 2


def test_loops_that_do_not_return_keep_their_context():
    c = compiled('BEGIN { @m[1] = 1; for ($kv : @m) { @n = count(); } }').generated.bpf_c
    assert "ret" not in c[c.index("_ctx {"):c.index("};")]
