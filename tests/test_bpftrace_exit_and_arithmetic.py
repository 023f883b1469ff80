"""exit() in probes and loops, pointer arithmetic, division by a run-time
zero and casts to bool in bpftrace scripts: each once ran to a wrong answer
without an error; what the lowering and the generated C do. Their runs
beside bpftrace are tests/runtime/bt-exit-*.test."""
import re

from plyc import driver
from plyc.ir.dump import dump

from btlower import err, lower
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
    assert "break;" in loop                 # the condition's; the cap's own after the count
    body = c[c.index("plyc_count_loopcap"):]
    assert "plyc_event_submit" in body and "\t\t\treturn 0;\n" in body


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
    assert len(re.findall(r"plyc_lc->ret = 1;\n\t+return 1;", c)) == 3
    # ... the outer one, seeing it, returns in its turn, and the probes too
    assert re.search(r"if \(c\d+\.ret\) \{\n(\t+plyc_lc->\w+ = \w+;\n)*\t+plyc_lc->ret = 1;\n\t+return 1;\n\t+\}", c)
    assert len(re.findall(r"if \(c\d+\.ret\) \{\n\t+return 0;", c)) == 2


def test_loops_that_do_not_return_keep_their_context():
    c = compiled('BEGIN { @m[1] = 1; for ($kv : @m) { @n = count(); } }').generated.bpf_c
    assert "ret" not in c[c.index("_ctx {"):c.index("};")]


def test_pointer_arithmetic_scales_by_the_pointees_size():
    prog = lower('struct sx { int a; char b[10]; }\n'
                 'BEGIN { $p = (uint16 *)1000; $q = $p + 1; $q++; $q -= 3; $w = (uint64 *)8; $w--;\n'
                 '  $r = (struct sx *)100; $t = curtask;\n'
                 '  printf("%d %d %d %d %d\\n", 2 + $p, $r - 1, $t + 1, (int8 *)$p + 1, (uint32 **)$p + 1); }')
    text = dump(prog)
    assert "$q = ($p:u16 * + (1:s64 * 2:s64):s64):u16 *" in text                 # + keeps the type
    assert "$q = ($q:u16 * + (1:s64 * 2:s64):s64):u16 *" in text                 # ++
    assert "$q = ($q:u16 * - (3:s64 * 2:s64):s64):u16 *" in text                 # -=
    assert "$w = ($w:u64 * - (1:s64 * 8:s64):s64):u64 *" in text                 # --
    assert "((2:s64 * 2:s64):s64 + $p:u16 *):u16 *" in text                      # int + pointer
    assert "($r:struct sx * - (1:s64 * 16:s64):s64):struct sx *" in text        # the script's struct
    size = prog.ktypes.btf.size(prog.ktypes.lookup(("struct", "task_struct")))
    assert f"($t:struct task_struct * + (1:s64 * {size}:s64):s64):struct task_struct *" in text   # BTF's
    assert "(cast($p:u16 *):s8 * + 1:s64):s8 *" in text                          # bytes: no scaling
    assert "(cast($p:u16 *):u32 * * + (1:s64 * 8:s64):s64):u32 * *" in text     # a pointer's size


def test_pointer_minus_pointer_counts_elements():
    text = dump(lower('BEGIN { $p = (uint32 *)1000; $q = (uint32 *)1040; printf("%d\\n", $q - $p); }'))
    assert "(($q:u32 * - $p:u32 *):s64 / 4:s64):s64" in text
    assert "can't subtract pointers to different types (u32 * and u16 *)" in \
        err('BEGIN { $p = (uint32 *)1000; $q = (uint16 *)1040; printf("%d\\n", $p - $q); }')
    assert "can't add two pointers" in err('BEGIN { $p = (uint32 *)1000; printf("%d\\n", $p + $p); }')
    assert "can't subtract a pointer (u32 *) from an integer" in \
        err('BEGIN { $p = (uint32 *)1000; printf("%d\\n", 5 - $p); }')


def test_pointer_arithmetic_compiles():
    compiled('struct s { int a; char b[10]; }\n'
             'kprobe:vfs_read { $p = (uint16 *)arg1; $p += 3; $r = (struct s *)arg2; $r--;\n'
             '  @[$p - (uint16 *)arg1, $r - 1, (uint64 *)arg0 - 6] = count(); }')


def test_division_by_a_run_time_zero_is_one():
    src = 'kprobe:vfs_read { $n = (int64)arg2; @[arg1 / arg2, arg1 % arg2, 7 / $n, -7 % $n, arg1 / 4] = count(); }'
    text = dump(lower(src))
    # a signed operand divides as unsigned, as bpftrace's (0.17 and 0.27: signs.py)
    assert "/(arg1:u64, arg2:u64):u64, %(arg1:u64, arg2:u64):u64, cast(/(7:s64, cast($n:s64):u64):u64):s64, " \
        "cast(%(cast(-7:s64):u64, cast($n:s64):u64):u64):s64, (arg1:u64 / 4:s64):u64" in text   # constant: plain
    c = compiled(src).generated.bpf_c
    assert re.search(r"__u64 (div\d+) = .*; \1 \? \(__u64\).* / \1 : 1; \}", c)
    assert re.search(r"__u64 (div\d+) = \(__u64\)v_n; \1 \? \(__u64\)\(-7LL\) % \1 : 1; \}", c)


def test_a_cast_to_bool_is_zero_or_one():
    text = dump(lower('BEGIN { $n = 256; printf("%d %d\\n", (bool)$n, (bool)5); }'))
    assert "cast(($n:s64 != 0:s64):s32):bool, cast((5:s64 != 0:s64):s32):bool)" in text
