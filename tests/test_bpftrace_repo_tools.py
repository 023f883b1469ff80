"""Constructs of bpftrace's own repository tools (tools/*.bt beyond
Debian's: genmakereq's `(bio *)`, softirqstat's `unroll($1)`, filelife's
`$d_name = $dentry->d_name`), each in a script of our own: the IR plyc
makes of it, or the error it is refused with. Their runs against bpftrace
0.27: tests/runtime/bt-unroll-param.test, bt-cast-bare-name.test."""
import pytest

from plyc.ir.dump import dump

from btlower import err, lower


def test_a_bare_name_cast_is_the_kernel_struct_it_names():
    prog = lower('kfunc:vmlinux:vfs_read { $f = (file *)args.file;\n'
                 '  @[((task_struct *)curtask)->pid] = $f->f_flags; }')
    assert dump(prog).split("probe 0", 1)[1] == """ kfunc:vmlinux:vfs_read -> kfunc vfs_read line 1
  local $f: struct file *
  $f = cast(args_file:struct file *):struct file *  @1
  @[cast(curtask:struct task_struct *):struct task_struct *->pid:s32] = $f:struct file *->f_flags:u32  @2
"""


def test_unroll_of_a_parameter_is_a_loop_of_at_most_100_turns():
    prog = lower('BEGIN { $i = 0; unroll($1) { $i += 2; } exit(); }')
    assert dump(prog).split("probe 0", 1)[1] == """ BEGIN -> BEGIN - line 1
  local $i: s64
  local $unroll@1:17: s64
  $i = 0:s64  @1
  $unroll@1:17 = 0:s64  @1
  while (($unroll@1:17:s64 < param.arg_num[1]:s64):s32 && ($unroll@1:17:s64 < 100:s64):s32):s32 cap=1024  @1
    step
      $unroll@1:17 = ($unroll@1:17:s64 + 1:s64):s64  @1
    $i = ($i:s64 + 2:s64):s64  @1
  emit exit 1 (0:s32)  @1
  return  @1
"""


@pytest.mark.parametrize("src,message", [
    ("BEGIN { while (1) { unroll($2) { break; } } }",
     "tool.bt:1:34: error: 'break' in the body of unroll($2) is not supported by plyc: "
     "it runs that body as a loop of its own"),
    ("BEGIN { unroll($x) { } }", "tool.bt:1:16: error: unroll's count must be a constant from 1 to 100"),
    ("BEGIN { $p = (nosuch_type_xyz *)0; }", "tool.bt:1:15: error: unknown type 'nosuch_type_xyz *'"),
    ("tracepoint:syscalls:sys_enter_openat { $n = curtask->fs->pwd; print($n.dentry); }",
     "tool.bt:1:45: error: a kernel struct path held by value in $n is not supported by plyc yet\n"
     "tracepoint:syscalls:sys_enter_openat { $n = curtask->fs->pwd; print($n.dentry); }\n"
     "                                            ^~~~~~~~~~~~~~~~\n"
     "note: read its members where it is, through the pointer: $d->d_name.name rather than "
     "$n = $d->d_name; $n.name"),
    ('BEGIN { $x = (uint16)pton("1.2.3.4"); }',
     "tool.bt:1:14: error: can't cast u8[4] to u16: an array casts to the integer of its size (4 bytes)"),
    ('BEGIN { $x = (uint32 *)pton("1.2.3.4"); }', "tool.bt:1:14: error: can't cast u8[4] to u32 *"),
    ("bench:count { @b = count(); }",
     "tool.bt:1:1: error: bench probes are not supported by plyc yet\n"
     "bench:count { @b = count(); }\n^~~~~~~~~~~\n"
     "note: bpftrace runs bench probes under `bpftrace --bench` only; a plyc tracer has no bench mode"),
    ("test:okay { print(1); }", "tool.bt:1:1: error: test probes are not supported by plyc yet"),
    ("tracepoint:syscalls:sys_enter_openat { @m = curtask->fs->root; }",
     "tool.bt:1:45: error: a kernel struct path held by value in @m is not supported by plyc yet"),
])
def test_refused(src, message):
    assert message in err(src)


def test_a_failed_assignment_is_one_error_not_one_per_read():
    text = err("BEGIN { $a = NOSUCH_NAME; $b = $a + 1; printf(\"%d %d\\n\", $a, $b); }")
    assert text.count("error:") == 1 and "unknown identifier 'NOSUCH_NAME'" in text
    # a map's too, read after it (old/biosnoop.bt's @disk of a member this kernel lacks)
    text = err('BEGIN { @d[1] = NOSUCH_NAME; printf("%d\\n", @d[1]); } END { print(@d[2]); }')
    assert text.count("error:") == 1 and "unknown identifier 'NOSUCH_NAME'" in text


def test_probe_counts_in_scientific_notation_and_long_suffixes():
    # bpftrace's docs write hardware:cache-misses:1e6; `interval:1m` is 0.27's
    probes = [line for line in dump(lower('interval:1m { exit(); } interval:s:1e1 { exit(); }\n'
                                          'software:faults:1e2 { exit(); }')).splitlines()
              if line.startswith("probe ")]
    assert [p.split(" -> ")[0] for p in probes] == [
        "probe 0 interval:60000000000ns", "probe 1 interval:10s", "probe 2 software:faults:100"]
