"""bpftrace's lowering to the IR (plyc/frontends/bpftrace/lower.py): the
IR it makes (as `plyc emit --stage ir` prints it), and what it refuses, by
name and with its span. Behaviour on a kernel: tests/runtime/bt-*.test and
tests/test_bpftrace_compat.py."""
import re

import pytest

from plyc import driver
from plyc.frontends.bpftrace import cdefs
from plyc.diag import PlycError
from plyc.ir.dump import dump


from btlower import err, lower


def test_language_from_the_file_name():
    assert driver.language("tool.bt") == "bpftrace"
    assert driver.language("tool.ply") == "ply"
    assert driver.language("<command-line>") == "ply"
    assert driver.language("<command-line>", "bpftrace") == "bpftrace"


def test_ir_of_a_tracepoint_script():
    prog = lower('tracepoint:syscalls:sys_enter_openat /pid == cpid/ {\n'
                 '  @n[comm] = count(); @last = args.flags; $x = 2; $x *= 3; @c++;\n'
                 '  printf("%s %d %d\\n", str(args->filename), $x, tid);\n'
                 '  delete(@last); delete(@c[]); }\n'
                 'BEGIN { unroll(2) { @c = 1; } exit(); }')
    assert dump(prog) == """\
map @n aggregation [char[16]] -> count(u64)
map @last hash [] -> s32
map @c hash [] -> s64
event 1 printf "%s %d %d\\n" (char[1024], s64, u32) line 3
event 2 exit (s64) line 5
program strsize=1024 arch=x86_64 target
probe 0 tracepoint:syscalls:sys_enter_openat -> tracepoint syscalls/sys_enter_openat line 1
  local $x: s64
  field flags: s32
  field filename: char *
  if (nspid:u32 == param.target:u32):bool  @1
    @n[comm:char[16]] <- count()  @2
    @last[] = field.flags:s32  @2
    $x = 2:s64  @2
    $x = ($x:s64 * 3:s64):s64  @2
    @c[] = (@c[]:s64 + 1:s64):s64  @2
    emit printf 1 (str(field.filename:char *):char[1024], $x:s64, nstid:u32)  @3
    delete @last[]  @4
    delete @c[]  @4
probe 1 BEGIN -> BEGIN - line 5
  @c[] = 1:s64  @5
  @c[] = 1:s64  @5
  emit exit 2 (0:s32)  @5
  return  @5
"""


REFUSED = [
    ("BEGIN { @x = skboutput(1); }",
     "tool.bt:1:14: error: skboutput() is not supported by plyc yet\n"
     "BEGIN { @x = skboutput(1); }\n             ^~~~~~~~~"),
    ("uprobe:/bin/sh:cpp:f { }\nprofile:ms:7 { }\ninterval:hz:7 { }",
     "tool.bt:1:1: error: uprobes with a language (cpp) are not supported by plyc yet\n"
     "uprobe:/bin/sh:cpp:f { }\n^~~~~~~~~~~~~~~~~~~~\n"
     "tool.bt:2:1: error: profile:ms:7 is not a whole number of samples a second; plyc's profile "
     "probes take a frequency (profile:hz:N)\nprofile:ms:7 { }\n^~~~~~~~~~~~\n"
     "tool.bt:3:1: error: interval:hz:7 is not a whole number of nanoseconds\n"
     "interval:hz:7 { }\n^~~~~~~~~~~~~"),

]


@pytest.mark.parametrize("src,message", REFUSED, ids=range(len(REFUSED)))
def test_refused_by_name(src, message):
    assert err(src) == message


TYPE_ERRORS = [
    ("BEGIN { $y = $x; foo(1); $z = FOO; $a = args; $c = arg0; }",
     "tool.bt:1:14: error: $x is read before it is assigned\n"
     "BEGIN { $y = $x; foo(1); $z = FOO; $a = args; $c = arg0; }\n             ^~\n"
     "tool.bt:1:18: error: unknown function 'foo'\n"
     "BEGIN { $y = $x; foo(1); $z = FOO; $a = args; $c = arg0; }\n                 ^~~\n"
     "note: functions plyc lowers: printf, exit, str, print, clear, ksym, uptr, delete, find, time, zero, bswap, "
     "kptr, strncmp, memcmp, join, ntop, socket_cookie, ustack, kstack, usym, cat, system, unwatch, signal, signal_thread, override, write_user, buf, path, "
     "kaddr, cgroupid, percpu_kaddr, "
     "uaddr, reg, has_key, macaddr, strftime, cgroup_path, len, strlen, strstr, str_concat, pid, tid, has_cpid, probetype, strcontains, nsecs, ppid, pcomm, leader_tid, leader_comm, usermode, comm, strerror, signal_name, syscall_name, getopt, pton, fail, is_err, cgroup, cpid, cpu, curtask, elapsed, func, gid, jiffies, ncpus, numaid, probe, rand, retval, uid, username, errorf, warnf, is_str, is_ptr, is_array, is_integer, "
     "is_unsigned_integer, is_literal, static_assert, assert, container_of, assert_str, strcap, "
     "default_str_length, count, sum, min, max, avg, hist, lhist, stats, tseries\n"
     "tool.bt:1:31: error: unknown identifier 'FOO'\n"
     "BEGIN { $y = $x; foo(1); $z = FOO; $a = args; $c = arg0; }\n                              ^~~\n"
     "note: not #define'd by the script, which #includes no header\n"
     "tool.bt:1:41: error: BEGIN probes have no 'args'\n"
     "BEGIN { $y = $x; foo(1); $z = FOO; $a = args; $c = arg0; }\n                                        ^~~~\n"
     "note: args holds a tracepoint's, kfunc's or rawtracepoint's arguments; kprobes and uprobes have arg0, arg1, ...\n"
     "tool.bt:1:52: error: unknown variable 'arg0'\n"
     "BEGIN { $y = $x; foo(1); $z = FOO; $a = args; $c = arg0; }\n"
     "                                                   ^~~~\n"
     "note: 'arg0' is a variable of kprobe, uprobe, usdt, rawtracepoint probes"),
    ("BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }",
     "tool.bt:1:28: error: @c is a hist() map, whose hist_t has no value to read in a probe\n"
     "BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }\n"
     "                           ^~\n"
     "note: bpftrace reads the values of count(), sum(), min(), max() and avg() maps only\n"
     "tool.bt:1:37: error: @c holds an aggregation elsewhere; it can't be assigned a value here\n"
     "BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }\n"
     "                                    ^\n"
     "tool.bt:1:40: error: count() must be assigned to a map, e.g. @x = count()\n"
     "BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }\n"
     "                                       ^~~~~~~\n"
     "tool.bt:1:49: error: delete() from the hist() map @c is refused: bpftrace 0.27 deletes nothing from "
     "hist(), lhist() and tseries() maps (it keys each bucket or interval apart)\n"
     "BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }\n"
     "                                                ^~~~~~~~~~\n"
     "tool.bt:1:61: error: delete() takes a map element: delete(@m[key]) or delete(@m, key)\n"
     "BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }\n"
     "                                                            ^~~~~~~~~\n"
     "tool.bt:1:79: error: unroll's count must be a constant from 1 to 100\n"
     "BEGIN { @c = hist(1); $v = @c; @c = 1; count(); delete(@c); delete(1); unroll($x) { } }\n"
     "                                                                              ^~"),
    ('tracepoint:sched:sched_switch { printf("%s %d\\n", args.prev_comm, args->nosuch); }',
     "tool.bt:1:67: error: tracepoint sched:sched_switch has no field 'nosuch'\n"
     'tracepoint:sched:sched_switch { printf("%s %d\\n", args.prev_comm, args->nosuch); }\n'
     "                                                                  ^~~~~~~~~~~~\n"
     "note: its fields are: prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio"),
    # a field the C library cannot count in an int (0.27 aborts: std::out_of_range from stoi)
    ('BEGIN { printf("%99999999999d|\\n", 1); }',
     "tool.bt:1:16: error: the width of '%99999999999d' is more than 2147483647 (C's INT_MAX), "
     "the most the C library can write\n"
     'BEGIN { printf("%99999999999d|\\n", 1); }\n'
     "               ^~~~~~~~~~~~~~~~~~"),
]


@pytest.mark.parametrize("src,message", TYPE_ERRORS, ids=range(len(TYPE_ERRORS)))
def test_type_errors(src, message):
    assert err(src) == message


def test_kernel_types_through_btf():
    """Casts to kernel structs, and '.' and '->' alike through pointers."""
    prog = lower('kprobe:vfs_read { $f = (struct file *)arg0; @[comm] = count();\n'
                 '  printf("%d %s\\n", $f->f_flags, str($f.f_path.dentry->d_name.name)); }\n'
                 'kretprobe:vfs_read { @r = sum(retval); }')
    assert [str(p.spec.provider) + ":" + p.spec.arg for p in prog.probes] == \
        ["kprobe:vfs_read", "kretprobe:vfs_read"]


def test_preamble_as_with_btf():
    """`#ifndef BPFTRACE_HAVE_BTF` branches drop out, #define'd numbers and
    strings are constants, #include lines are not read."""
    prog = lower('#ifndef BPFTRACE_HAVE_BTF\n#include <linux/sched.h>\nstruct cfs_rq { int x; };\n'
                 '#else\n#include <sys/socket.h>\n#endif\n#define LIMIT 0x10\n#define NAME "bash"\n'
                 '#define EMPTY\n#ifdef EMPTY\n#define ON 1\n#endif\n#if !defined(EMPTY)\n#define ON 2\n#endif\n'
                 'BEGIN { printf("%d %s %d\\n", LIMIT + 1, NAME, ON); exit(); }')
    assert dump(prog).splitlines()[-3] == \
        '  emit printf 1 ((16:s64 + 1:s64):s64, "bash":char[8], 1:s64)  @16'


def test_constants_from_included_headers(tmp_path):
    """An identifier a #define of an #include'd header names (runqlat's
    TASK_RUNNING) takes its value, from the kernel headers bpftrace would
    read ($BPFTRACE_KERNEL_SOURCE here); where none has it, the note says
    which files were read. A header clang can't read (here its #error)
    has its `#define NAME number` lines read; a missing one is left out."""
    (tmp_path / "include/linux").mkdir(parents=True)
    (tmp_path / "include/linux/sched.h").write_text(
        "#define TASK_RUNNING\t\t\t0x00000000\n#define TASK_DEAD 0x80 /* dead */\n#define F(x) x\n"
        "#error kernel only\n")
    src = ('#include <linux/sched.h>\n#include <no/such.h>\n'
           'BEGIN { printf("%d %d\\n", TASK_RUNNING, TASK_DEAD); exit(); }')
    opts = driver.Options(env={"BPFTRACE_KERNEL_SOURCE": str(tmp_path)})
    prog = driver.lower(src, "tool.bt", opts)
    assert dump(prog).splitlines()[-3] == '  emit printf 1 (0:s64, 128:s64)  @3'
    with pytest.raises(PlycError) as info:
        driver.lower(src.replace("TASK_DEAD", "TASK_GONE"), "tool.bt", opts)
    assert info.value.render() == (
        "tool.bt:3:41: error: unknown identifier 'TASK_GONE'\n"
        'BEGIN { printf("%d %d\\n", TASK_RUNNING, TASK_GONE); exit(); }\n'
        "                                        ^~~~~~~~~\n"
        f"note: clang could not read the headers ({tmp_path}/include/linux/sched.h:4:2: error: kernel only); "
        "plyc read `#define NAME "
        f"number` lines of the #include'd files themselves: {tmp_path}/include/linux/sched.h, "
        "<no/such.h> (not found)")


def test_kernel_header_macros_through_the_preprocessor(tmp_path):
    """With kernel headers clang can read, a macro's value is C's: nested
    macros and expressions (the kernel's own headers need not compile as a
    user program: the expansion is compiled alone)."""
    (tmp_path / "include/linux").mkdir(parents=True)
    (tmp_path / "include/linux/sched.h").write_text(
        "#include <linux/bits.h>\n#define TASK_RUNNING 0x0000\n#define TASK_DEAD (TASK_X << 2)\n"
        "#define TASK_X 0x20\nstruct s { undeclared_t x; };\n")
    (tmp_path / "include/linux/bits.h").write_text("#define BIT(n) (1UL << (n))\n#define TOP BIT(63)\n")
    src = '#include <linux/sched.h>\nBEGIN { printf("%d %d %lu\\n", TASK_RUNNING, TASK_DEAD, TOP); exit(); }'
    opts = driver.Options(env={"BPFTRACE_KERNEL_SOURCE": str(tmp_path)})
    assert dump(driver.lower(src, "tool.bt", opts)).splitlines()[-3] == \
        '  emit printf 1 (0:s64, 128:s64, 9223372036854775808:u64)  @2'


def test_preamble_refusals():
    assert err('#define F(x) x\n#if LINUX_VERSION_CODE > 5\n#endif\nstruct s { int a; };\n'
               '#if 0\n#else\n#elif 1\n#else\n#endif\n#endif\n#ifdef X\n#pragma once\nBEGIN { }') == (
        "tool.bt:1:1: error: a function-like #define is not supported by plyc yet\n#define F(x) x\n"
        "^~~~~~~~~~~~~~\n"
        "tool.bt:2:1: error: #if with an expression other than defined(NAME) is not supported by plyc yet\n"
        "#if LINUX_VERSION_CODE > 5\n^~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "tool.bt:7:1: error: #elif after #else\n#elif 1\n^~~~~~~\n"
        "tool.bt:8:1: error: a second #else\n#else\n^~~~~\n"
        "tool.bt:10:1: error: #endif without #if\n#endif\n^~~~~~\n"
        "tool.bt:11:1: error: this conditional has no #endif\n#ifdef X\n^~~~~~~~")


def test_func_is_the_probed_functions_name():
    prog = lower('kprobe:vfs_read+4 { printf("%s\\n", func); } kretprobe:vfs_write { @[func] = count(); }')
    assert dump(prog).splitlines()[-4:] == [
        "probe 0 kprobe:vfs_read+4 -> kprobe vfs_read line 1",
        '  emit printf 1 ("vfs_read":char[16])  @1',
        "probe 1 kretprobe:vfs_write -> kretprobe vfs_write line 1",
        '  @["vfs_write":char[16]] <- count()  @1']
    assert err('tracepoint:sched:sched_switch { printf("%s\\n", func); }') == (
        "tool.bt:1:48: error: 'func' in tracepoint probes is not supported by plyc yet\n"
        'tracepoint:sched:sched_switch { printf("%s\\n", func); }\n'
        "                                               ^~~~")


def test_func_in_a_kprobe_wildcard_is_the_symbol_that_fired():
    """A kprobe glob's func is the probed address as a symbol (bpftrace's ksym
    type), read from the registers (no fentry twin); an exact kprobe sharing
    the body with a glob too, so that func has one type."""
    prog = lower('kprobe:vfs_rea*, kprobe:vfs_fsync { @[func] = count(); }')
    assert [line for line in dump(prog).splitlines() if line.startswith(("probe", "  @"))] == [
        "probe 0 kprobe:vfs_rea* -> kprobe vfs_rea* line 1 regs",
        "  @[caller:u64 (sym)] <- count()  @1",
        "probe 1 kprobe:vfs_fsync -> kprobe vfs_fsync line 1 regs",
        "  @[caller:u64 (sym)] <- count()  @1"]
    # a kretprobe glob's, from the kernel: bpf_get_func_ip (tests/test_bpftrace_probes.py)
    assert "@[func:u64 (sym)] <- count()" in dump(lower('kretprobe:vfs_rea* { @[func] = count(); }'))


def test_func_stored_where_a_map_holds_ksym_values_is_the_symbol():
    """sid's xfsdist.bt: @name holds ksym(0) (BEGIN) and func (an exact
    kprobe): func is then the probed address's symbol, as in 0.27, not the
    name written in the probe."""
    prog = dump(lower('BEGIN { @name[0] = ksym(0); } kprobe:vfs_read { @name[tid] = func; }\n'
                      'kretprobe:vfs_read { @us[@name[tid]] = count(); }'))
    assert "@name[nstid:u32] = caller:u64 (sym)" in prog, prog
    assert "@us[@name[nstid:u32]:u64 (sym)] <- count()" in prog, prog
    # elsewhere an exact kprobe's func is its name
    assert '"vfs_read"' in dump(lower('kprobe:vfs_read { @f[func] = count(); }'))


def test_curtask_typed_through_btf():
    prog = lower('BEGIN { printf("%d\\n", curtask->pid); exit(); }')
    assert "curtask:struct task_struct *" in dump(prog)


def test_lang_overrides_the_extension():
    """--lang ply on a .bt name reads ply (kpid is a ply variable), --lang bpftrace -e text bpftrace."""
    ply = driver.lower('BEGIN { print(kpid); exit(0); }', "tool.bt", driver.Options(lang="ply"))
    assert [p.spec.provider for p in ply.probes] == ["BEGIN"]
    with pytest.raises(PlycError) as info:
        driver.lower('BEGIN { print(kpid); }', "<command-line>", driver.Options(lang="bpftrace"))
    assert info.value.render().startswith("<command-line>:1:15: error: unknown identifier 'kpid'")


def test_time_is_an_event():
    prog = lower('BEGIN { time("%H:%M "); time(); exit(); }')
    assert dump(prog).splitlines()[:2] == ['event 1 time "%H:%M " () line 1',
                                           'event 2 time "%H:%M:%S\\n" () line 1']
    assert err('BEGIN { $f = "%H"; time($f); $x = time(); }') == (
        "tool.bt:1:25: error: time()'s format must be a string literal\n"
        'BEGIN { $f = "%H"; time($f); $x = time(); }\n                        ^~\n'
        "tool.bt:1:35: error: time() has no value\n"
        'BEGIN { $f = "%H"; time($f); $x = time(); }\n                                  ^~~~~~')


def test_print_of_a_tuple_prints_its_values():
    """print((a, b)) is the shared print() of a and b, which bpftrace's style
    prints as "(a, b)" (test_btoutput.py); a tuple inside it is a value."""
    prog = lower('BEGIN { print(("a", 3)); print(((1, "b"), 3)); }')
    assert [line for line in dump(prog).splitlines() if "emit" in line] == [
        '  emit print 1 ("a":char[8], 3:s64)  @1',
        '  emit print 2 (tuple(1:s64, "b":char[8]):(s64, char[8]), 3:s64)  @1']


def test_config_block():
    """The config block's honoured variables reach the build (resources), a
    build option given otherwise than its default wins; the others are
    refused by name, each at its span."""
    from plyc import driver
    from plyc.codegen import resources
    src = ("config = { max_strlen = 16; BPFTRACE_MAX_MAP_KEYS = 2; perf_rb_pages = 16; "
           "on_stack_limit = 8; print_maps_on_exit = false }\nBEGIN { @[comm] = 1; }")
    prog = lower(src)
    # 0.27's string of max_strlen 16: 17 bytes, one of 16 printed as cut
    assert prog.strsize == 17 and prog.limits == dict(map_entries=2, buffer_size=65536, stack_temp_max=8,
                                                     print_maps_on_exit=False)
    res = resources.build(prog, "t", "tool.bt", driver.build_limits(prog, driver.Options()))
    assert (res.maps[0].max_entries, res.buffer_size, res.stack_temp_max, res.print_maps_on_exit) == \
        (2, 65536, 8, False)
    limits = driver.build_limits(prog, driver.Options(map_entries=100))
    assert limits["map_entries"] == 100 and limits["buffer_size"] == 65536
    src = ('config = { max_strlen = 0; license = "GPL"; stack_mode = fast; foo = 1; perf_rb_pages = 3; '
           'print_maps_on_exit = maybe; strlen = 9; str_trunc_trailer = "' + "." * 64 + '"; missing_probes = error }\n'
           "BEGIN { }")
    line = src.splitlines()[0]
    messages = [m for m in err(src).splitlines() if m.startswith(("tool.bt", "note"))]
    assert messages == [
        "tool.bt:1:25: error: max_strlen must be from 1 to 32768, not 0",
        "tool.bt:1:58: error: invalid value for stack_mode: valid values are bpftrace, raw, perf and build_id",
        "tool.bt:1:64: error: unknown config variable 'foo'",
        "note: bpftrace's: cache_user_symbols, cpp_demangle, lazy_symbolication, license, log_size, "
        "max_bpf_progs, max_cat_bytes, max_map_keys, max_probes, max_strlen, max_type_res_iterations, "
        "missing_probes, on_stack_limit, perf_rb_pages, print_maps_on_exit, show_debug_info, stack_mode, "
        "str_trunc_trailer, unstable_addr, unstable_import, unstable_macro, unstable_map_decl, unstable_tseries",
        "tool.bt:1:89: error: perf_rb_pages must be a power of two (the ring buffer's size)",
        "tool.bt:1:113: error: print_maps_on_exit takes true or false",
        "tool.bt:1:120: error: config variable max_strlen is set twice",
        "tool.bt:1:152: error: str_trunc_trailer is longer than the 63 bytes plyc's tracers keep for it"]
    assert err(src).splitlines()[1] == line


def test_tuples_are_values():
    """A tuple is a value of the IR's tuple type: a $local, a member read
    with .N, a map's value, a lone tuple key naming its members as keys."""
    prog = lower('BEGIN { $t = (1, "ab", comm); @m[$t.0] = ($t, (int8)2); $u = @m[1]; @k[$u.0] = 1; }')
    assert dump(prog).splitlines()[:2] == [
        "map @m hash [s64] -> ((s64, char[8], char[16]), s8)",
        "map @k hash [s64, char[8], char[16]] -> s64"]
    body = [line.strip() for line in dump(prog).splitlines() if line.endswith("@1")]
    assert body[:2] == [
        '$t = tuple(1:s64, "ab":char[8], comm:char[16]):(s64, char[8], char[16])  @1',
        "@m[$t:(s64, char[8], char[16]).0:s64] = tuple($t:(s64, char[8], char[16]), "
        "cast(2:s64):s8):((s64, char[8], char[16]), s8)  @1"]


def test_tuples_in_a_ternary():
    """Both branches of one tuple type (bpftrace 0.17 refuses tuples in ?:)."""
    prog = lower('BEGIN { $t = (1, "a"); $u = pid > 0 ? $t : (2, "b"); }')
    assert dump(prog).splitlines()[-1].strip().startswith("$u = ((nspid:u32 > 0:s64):bool ? $t:(s64, char[8]) : tuple(")
    assert err('BEGIN { $u = 1 ? (1, "a") : ("b", 2); }') == (
        "tool.bt:1:14: error: the branches of '?:' have different types: (s64, char[8]) and (char[8], s64)\n"
        'BEGIN { $u = 1 ? (1, "a") : ("b", 2); }\n' + " " * 13 + "^~~~~~~~~~~~~~~~~~~~~~~")


def test_tuple_layout_is_bpftraces():
    """Members at their natural alignment (strings 1, integers their size,
    3 to 4 bytes at 4, a tuple its widest member's), the size rounded up."""
    from plyc import types as T
    t = T.Tuple([T.Int(1), T.Str(3), T.Int(2), T.Int(8)])
    assert T.tuple_layout(t.items) == ([0, 1, 4, 8], 16)
    assert T.tuple_layout([T.Str(5), T.Int(4)]) == ([0, 8], 12)
    assert T.tuple_layout([T.Int(1), T.Tuple([T.Int(2), T.Int(1)])]) == ([0, 2], 6)
    assert T.unify(T.Tuple([T.Str(8), T.Int(2)]), T.Tuple([T.Str(16), T.Int(2)])) == \
        T.Tuple([T.Str(16), T.Int(2)])
    assert T.unify(T.Tuple([T.Int(8)]), T.Tuple([T.Int(8), T.Int(8)])) is None


def test_tuple_errors():
    src = 'BEGIN { $t = (1, 2); print($t.2); $x = 5; print($x.0); $e = (); $q = (1, args); }'
    assert err(src) == (
        "tool.bt:1:28: error: this tuple has 2 members (.0 to .1), no .2\n" + src + "\n" + " " * 27 + "^~~~\n"
        "tool.bt:1:49: error: '.0' reads a member of a tuple, not of a value of type s64\n" + src + "\n"
        + " " * 48 + "^~~~\n"
        "tool.bt:1:61: error: an empty tuple '()' has no value\n" + src + "\n" + " " * 60 + "^~\n"
        "tool.bt:1:74: error: BEGIN probes have no 'args'\n" + src + "\n" + " " * 73 + "^~~~\n"
        "note: args holds a tracepoint's, kfunc's or rawtracepoint's arguments; kprobes and uprobes have arg0, arg1, ...")


def test_probe_is_the_probes_name():
    prog = lower('t:syscalls:sys_enter_sync, i:s:1 { printf("%s\\n", probe); }')
    assert [line for line in dump(prog).splitlines() if "emit" in line] == [
        '  emit printf 1 ("tracepoint:syscalls:sys_enter_sync":char[40])  @1',
        '  emit printf 1 ("interval:s:1":char[16])  @1']
    # a tracepoint wildcard's: the matched event's name, from the table the tracer fills
    prog = lower('t:syscalls:sys_enter_sync* { printf("%s\\n", probe); }')
    assert [line for line in dump(prog).splitlines() if "emit" in line] == [
        '  emit printf 1 (_tp_name():char[128])  @1']
    assert prog.probes[0].bpf_defines == {"PLYC_TP_NAMES"}
    # a kprobe's and a kfunc's wildcard the same way (tests/test_bpftrace_probes.py);
    # exact kfuncs and rawtracepoints as 0.27 names them, with their module
    prog = lower('f:vfs_rea* { printf("%s\\n", probe); }\n'
                 'fr:vfs_read, kfunc:vmlinux:vfs_write, rawtracepoint:sched_switch, rt:vmlinux:sys_enter '
                 '{ printf("%s\\n", probe); }')
    assert [line for line in dump(prog).splitlines() if "emit" in line] == [
        '  emit printf 1 (_tp_name():char[128])  @1',
        '  emit printf 2 ("fexit:vmlinux:vfs_read":char[24])  @2',
        '  emit printf 2 ("fentry:vmlinux:vfs_write":char[32])  @2',
        '  emit printf 2 ("rawtracepoint:vmlinux:sched_switch":char[40])  @2',
        '  emit printf 2 ("rawtracepoint:vmlinux:sys_enter":char[32])  @2']
    assert [p.bpf_defines for p in prog.probes] == [{"PLYC_TP_NAMES"}] + [set()] * 4
    # a usdt wildcard's is refused when building
    assert err('U:/bin/true:p* { printf("%s\\n", probe); }') == (
        "tool.bt:1:33: error: 'probe' in a usdt wildcard probe is not supported by plyc yet\n"
        'U:/bin/true:p* { printf("%s\\n", probe); }\n'
        "                                ^~~~~")


def test_fields_of_a_tracepoint_wildcard():
    """A field every matched event has, of one type (read where each event
    has it: the tracer fills the table); otherwise an error naming the event."""
    prog = lower('t:syscalls:sys_enter_exec* { printf("%s\\n", str(args->filename)); }')
    assert [line for line in dump(prog).splitlines() if "emit" in line] == [
        '  emit printf 1 (str(field.filename:char *):char[1024])  @1']
    assert err('t:syscalls:sys_enter_exec* { @ = args->fd; }') == (
        "tool.bt:1:34: error: tracepoint syscalls:sys_enter_execve, which syscalls:sys_enter_exec* "
        "matches, has no field 'fd'\n"
        "t:syscalls:sys_enter_exec* { @ = args->fd; }\n"
        "                                 ^~~~~~~~")
    assert err('t:syscalls:sys_enter_[cd][ou]p[3y]* { @ = args->flags; }') == (
        "tool.bt:1:43: error: field 'flags' is unsigned int in syscalls:sys_enter_copy_file_range and "
        "int in syscalls:sys_enter_dup3\n"
        "t:syscalls:sys_enter_[cd][ou]p[3y]* { @ = args->flags; }\n"
        "                                          ^~~~~~~~~~~")


def test_ntop_is_an_inet_value():
    """ntop() of a tracepoint's u8[4] and u8[16] fields and of an integer: the
    family given or taken from the address; AF_INET6 from <sys/socket.h>,
    TCP_CLOSE a kernel enumerator (BTF)."""
    prog = lower('#include <sys/socket.h>\n'
                 'tracepoint:sock:inet_sock_set_state { @a[ntop(args->saddr)] = count();\n'
                 '  $s = ntop(AF_INET6, args->saddr_v6); printf("%s %d\\n", $s, TCP_CLOSE);'
                 ' @l = ntop(0x0100007f); }')
    assert dump(prog) == """\
map @a aggregation [inet] -> count(u64)
map @l hash [] -> inet
event 1 printf "%s %d\\n" (inet, u64 (enum)) line 3
program strsize=1024 arch=x86_64
probe 0 tracepoint:sock:inet_sock_set_state -> tracepoint sock/inet_sock_set_state line 2
  local $s: inet
  field saddr: u8[4]
  field saddr_v6: u8[16]
  @a[ntop(2:u64, field.saddr:u8[4]):inet] <- count()  @2
  $s = ntop(10:s64, field.saddr_v6:u8[16]):inet  @3
  emit printf 1 ($s:inet, 7:u64 (enum))  @3
  @l[] = ntop(2:u64, 16777343:s64):inet  @3
"""


def test_ntop_of_a_kernel_array_through_an_anonymous_union():
    prog = lower('kprobe:tcp_connect { $sk = (struct sock *)arg0;\n'
                 '  printf("%s\\n", ntop($sk->__sk_common.skc_v6_daddr.in6_u.u6_addr8)); }')
    assert "ntop(10:u64, " in dump(prog)


def test_ntop_errors():
    assert err('BEGIN { $a = ntop("x"); $b = ntop(comm); $c = ntop("a", 1); $d = AF_INET; }') == (
        "tool.bt:1:19: error: ntop() needs an integer or an array of 4 or 16 bytes, got char[8]\n"
        'BEGIN { $a = ntop("x"); $b = ntop(comm); $c = ntop("a", 1); $d = AF_INET; }\n'
        "                  ^~~\n"
        "tool.bt:1:35: error: ntop() needs an integer or an array of 4 or 16 bytes, got char[16]\n"
        'BEGIN { $a = ntop("x"); $b = ntop(comm); $c = ntop("a", 1); $d = AF_INET; }\n'
        "                                  ^~~~\n"
        "tool.bt:1:52: error: ntop()'s address family must be an integer, got char[8]\n"
        'BEGIN { $a = ntop("x"); $b = ntop(comm); $c = ntop("a", 1); $d = AF_INET; }\n'
        "                                                   ^~~\n"
        "tool.bt:1:66: error: unknown identifier 'AF_INET'\n"
        'BEGIN { $a = ntop("x"); $b = ntop(comm); $c = ntop("a", 1); $d = AF_INET; }\n'
        "                                                                 ^~~~~~~\n"
        "note: AF_INET is defined in <sys/socket.h>: #include it")


def test_c_library_constants_are_the_compilers():
    """Constants of the C library's headers, computed by clang: nested macros
    (AF_INET is PF_INET), glibc's enumerators (IPPROTO_ICMPV6, SOCK_STREAM);
    a name the headers lack, or that is no integer, is an unknown identifier."""
    prog = lower('#include <sys/socket.h>\n#include <netinet/in.h>\n#include <errno.h>\n#include <dirent.h>\n'
                 'BEGIN { printf("%d %d %d %d %d %d\\n", AF_INET, AF_INET6, EPERM, DT_REG, IPPROTO_ICMPV6, '
                 'SOCK_STREAM); exit(); }')
    assert dump(prog).splitlines()[-3] == '  emit printf 1 (2:s64, 10:s64, 1:s64, 8:s64, 58:s64, 1:s64)  @5'
    for name in ("EPERX", "stdout"):
        assert err(f'#include <errno.h>\n#include <stdio.h>\nBEGIN {{ $x = {name}; }}') == (
            f"tool.bt:3:14: error: unknown identifier '{name}'\n"
            f"BEGIN {{ $x = {name}; }}\n"
            f"             ^{'~' * (len(name) - 1)}\n"
            f"note: the #include'd headers, read by clang, define no integer constant {name}")


def test_a_member_of_an_anonymous_union_is_defined_in_place():
    """`skc_v6_daddr.in6_u.u6_addr8`: struct in6_addr's in6_u is a named
    member of an anonymous union; the local definition holds that union in
    place (a separate `union { ... };` declares nothing, and clang refuses it)."""
    import re
    from plyc.kernel_types import KernelTypes
    kt = KernelTypes()
    in6 = kt.lookup(("struct", "in6_addr"))
    (path, _), = [kt.member(in6, "in6_u")]
    union = kt.btf.strip(path[-1].type)
    kt.member(union, "u6_addr8")
    text = "\n".join(kt.definitions())
    assert re.search(r"struct in6_addr \{\n\tunion \{\n\t\t__u8 u6_addr8\[16\];\n\t\} in6_u;\n\}", text), text
    assert "union  {" not in text


STRUCTS = '''struct file { int fake; char c; };
union u { char b[3]; long l; };
struct sx { int a; struct file *f; struct task_struct *t; char *name; union u v; int arr[3]; };
enum e { A = 1 << 3, B, C = B * 2 };
kprobe:vfs_read { $s = (struct sx *)arg0; @[$s->a, $s->arr[2], $s->v.l, str($s->name), C] = count();
  print(($s->f->c, $s->t->pid, sizeof(struct file), sizeof(union u), sizeof(struct sx), (enum e)arg1)); }'''


def test_script_structs_are_read_at_the_scripts_offsets():
    """The script's definitions (pycparser): its layout, not CO-RE; its
    `struct file` wins over the kernel's for its members, while its size
    is the kernel's, as in bpftrace 0.27 (tests/test_bpftrace_semantics.py); a member
    pointing to a kernel struct goes on through BTF; enumerators are
    constants, 64-bit as 0.27's (sizeof(A) is 8)."""
    from plyc.kernel_types import KernelTypes
    kt = KernelTypes()
    file_size = kt.btf.size(kt.lookup(("struct", "file")), 8)
    prog = lower(STRUCTS)
    lines = dump(prog).splitlines()
    assert lines[0] == "map @ aggregation [s32, s32, s64, char[1024], u64 (enum)] -> count(u64)"
    assert lines[-2] == (
        "  @[member(cast($s:struct sx *):void *):s32, member(($s:struct sx * + 48:s64):void *):s32, "
        "member(cast(($s:struct sx * + 32:s64):void *):void *):s64, "
        "str(member(($s:struct sx * + 24:s64):void *):char *):char[1024], cast(18:s64):u64 (enum)] <- count()  @5")
    assert lines[-1] == (
        "  emit print 1 (member((member(($s:struct sx * + 8:s64):void *):struct file * + 4:s64):void *):s8, "
        "member(($s:struct sx * + 16:s64):void *):struct task_struct *->pid:s32, "
        f"{file_size}:u64, 8:u64, 56:u64, "
        "cast(arg1:u64):u64 (enum))  @6")


def test_script_struct_layout_follows_the_target():
    """long and pointers are 4 bytes on armhf: the same struct is smaller."""
    src = "struct sx { char c; long l; void *p; };\nBEGIN { print(sizeof(struct sx)); }"
    assert dump(lower(src)).splitlines()[-1] == "  emit print 1 (24:u64)  @2"
    prog = driver.lower(src, "tool.bt", driver.Options(target="armhf"))
    assert dump(prog).splitlines()[-1] == "  emit print 1 (12:u64)  @2"


def test_script_struct_errors():
    src = "struct s {\n\tint a;\n\tfoo b; };\nBEGIN { }"
    assert err(src) == (
        "tool.bt:3:2: error: unknown type name 'foo'\n        foo b; };\n        ^~~\n"
        "note: types plyc knows in definitions besides C's: " + ", ".join(sorted(cdefs.TYPEDEFS)))
    # pycparser's own words vary by version; the place is the script's
    first = err("struct s { int a; int b c; };\nBEGIN { }").splitlines()
    assert first[0].startswith("tool.bt:1:25: error: this definition is not C that plyc can read (")
    assert first[1:] == ["struct s { int a; int b c; };", " " * 24 + "^"]
    # the last member's ';' may be left out, as clang (and bpftrace) take it
    assert cdefs.last_semicolons("struct s { int a; int b }") == "struct s { int a; int b;}"
    assert cdefs.last_semicolons("struct s { struct { int b\n} c\n}") == "struct s { struct { int b\n;} c\n;}"
    assert cdefs.last_semicolons("enum e { A, B }") == "enum e { A, B }"
    assert err("struct t { long x : 65; };\nstruct u { int a; };\nstruct u { int b; };\n"
               "struct w { char n[]; };\nBEGIN { }") == (
        "tool.bt:1:17: error: bit-field 'x' has width 65: from 1 to 64 bits for its type\n"
        "struct t { long x : 65; };\n                ^\n"
        "tool.bt:3:8: error: struct u is defined twice\nstruct u { int b; };\n       ^\n"
        "tool.bt:4:17: error: array 'n' needs a size\nstruct w { char n[]; };\n                ^")
    src = ("struct s { char n[2]; struct i { int z; } in; };\nstruct q { int a; };\n"
           "kprobe:f { $s = (struct q *)arg0; print($s->b); $x = (struct q)arg0; $t = (struct s *)arg1; "
           "print($t->in); print($t->n[2]); }")
    line = src.splitlines()[-1]
    assert err(src) == (
        f"tool.bt:3:41: error: struct q has no member 'b'\n{line}\n" + " " * 40 + "^~~~~\n"
        "note: its members: a\n"
        f"tool.bt:3:55: error: casts to 'struct q' are not supported: cast to one pointer, (struct q *)\n"
        f"{line}\n" + " " * 54 + "^~~~~~~~\n"
        f"tool.bt:3:120: error: index 2 is out of 'n' (2 elements)\n{line}\n" + " " * 119 + "^")


def test_script_struct_anonymous_members():
    # an unnamed member type and an anonymous member: offsets as C's (the
    # printed value beside 0.27: bt-struct-anonymous-members)
    text = dump(lower("struct anonmix { char c; union { int i; char b[8]; }; struct { short h; } n; };\n"
                      "BEGIN { print((offsetof(struct anonmix, b), offsetof(struct anonmix, n.h), sizeof(struct anonmix))); }"))
    assert "(4:u64, 12:u64, 16:u64)" in text
    assert err("struct s { int a; union { int a; }; };\nBEGIN { }").startswith(
        "tool.bt:1:25: error: duplicate member 'a'")
    assert "error: a member needs a name" in err("struct anonmix2 { int a; int; };\nBEGIN { }")


def test_script_struct_comments_packed_and_kernel_members():
    """Comments inside a definition, `__attribute__((packed))` after it
    (current bpftrace); an attribute plyc does not know and a kernel type
    held by value are refused by name (bpftrace: field has incomplete type)."""
    src = ("struct p { char c; // one\n long l; /* eight */ } __attribute__((packed));\n"
           "struct q { char c; struct p in; };\nBEGIN { print((sizeof(struct p), sizeof(struct q))); }")
    assert dump(lower(src)).splitlines()[-1] == "  emit print 1 (9:u64, 10:u64)  @4"
    assert err("struct a { int x; } __attribute__((aligned(3)));\nBEGIN { }") == (
        "tool.bt:1:21: error: an __attribute__ other than packed or aligned(N) (N a power of two) after the "
        "closing brace is not supported by plyc yet\nstruct a { int x; } __attribute__((aligned(3)));\n"
        + " " * 20 + "^" + "~" * 26)
    assert "error: an __attribute__ other than packed" in err("struct a { int x; } __attribute__((cold));\nBEGIN { }")
    # each definition's attributes are its own, also on one line (before:
    # foo, on packed bar's line, was laid out packed too, 9 bytes)
    src = ("struct foo { int x; char y; int z; } struct bar { int x; char y; int z; } __attribute__((packed)) "
           "struct al { char c; } /**/ __attribute__ /**/ ((aligned(8))) __attribute__((packed))\n"
           "BEGIN { print((sizeof(struct foo), sizeof(struct bar), sizeof(struct al))); }")
    assert dump(lower(src)).splitlines()[-1] == "  emit print 1 (12:u64, 9:u64, 8:u64)  @2"
    assert err("struct a { int x; struct list_head l; };\nBEGIN { }") == (
        "tool.bt:1:26: error: struct list_head is held by value before the script defines it: a member's "
        "type must be defined above it, and a kernel type can only be reached through a pointer, as in "
        "bpftrace (clang: field has incomplete type)\nstruct a { int x; struct list_head l; };\n" + " " * 25 + "^")


def test_macros_expand_in_the_tree():
    """Macros (current bpftrace) are gone before the lowering: a $x parameter
    is the caller's variable, @m its map, x the expression at each use; the
    body's own variables are renamed per expansion."""
    prog = lower("macro twice(x) { x * 2 }\nmacro bump($v, @m) { $t = twice($v); @m = $t; }\n"
                 "BEGIN { $a = 3; bump($a, @out); print(twice($a + 1)); }")
    body = [line.strip() for line in dump(prog).splitlines() if line.endswith("@1") or line.endswith("@2")
            or line.endswith("@3")]
    assert body == [
        "$a = 3:s64  @3",
        "$__bump_1_t = ($a:s64 * 2:s64):s64  @2",
        "@out[] = $__bump_1_t:s64  @2",
        "emit print 1 ((($a:s64 + 1:s64):s64 * 2:s64):s64)  @3"]


def test_macro_errors():
    src = ("macro bad() { @x++ }\nmacro wants_var($x) { $x++ }\nmacro val(x) { let $y = x; }\n"
           "macro rec(x) { rec(x) }\n"
           "BEGIN { bad(); wants_var(@m); wants_var(1 + 1); $v = val(2); rec(1); $w = wants_var(); }")
    lines = src.splitlines()
    assert err(src) == (
        "tool.bt:1:15: error: Unhygienic access to map: @x. Maps must be passed into the macro as arguments."
        f"\n{lines[0]}\n" + " " * 14 + "^~\nnote: in macro bad: 0.27's words\n"
        f"tool.bt:5:26: error: Mismatched arg. wants_var() expects a variable for arg $x but got a map.\n{lines[4]}\n"
        + " " * 25 + "^~\n"
        f"tool.bt:5:41: error: Mismatched arg. wants_var() expects a variable for arg $x but got an expression.\n"
        f"{lines[4]}\n" + " " * 40 + "^~~~~\n"
        "tool.bt:5:54: error: macro val is used as a value, but its body does not end with a value"
        f"\n{lines[4]}\n" + " " * 53 + "^~~~~~\n"
        "note: end its body with an expression, e.g. { let $y = x; $y + 1 }\n"
        f"tool.bt:4:16: error: macro rec expands into itself\n{lines[3]}\n" + " " * 15 + "^~~~~~\n"
        f"tool.bt:5:75: error: macro wants_var takes 1 argument, got 0\n{lines[4]}\n" + " " * 74 + "^~~~~~~~~~~")


def test_a_macro_parameter_named_twice_is_refused_as_0_27_refuses_it():
    # even where the macro is never used; `a` and `$a` are two names
    src = "macro m($a, b, $a, @c, @c, b) { $a }\nBEGIN { exit(); }"
    line = src.splitlines()[0]
    assert err(src) == (
        f"tool.bt:1:16: error: Variable for macro argument has already been used: $a\n{line}\n" + " " * 15 + "^~\n"
        f"tool.bt:1:24: error: Map for macro argument has already been used: @c\n{line}\n" + " " * 23 + "^~\n"
        f"tool.bt:1:28: error: Ident for macro argument has already been used: b\n{line}\n" + " " * 27 + "^")
    assert "emit print" in dump(lower("macro m(a, $a) { a + $a }\nBEGIN { $a = 1; print(m(1, $a)); }"))

# --- loops (frontends/bpftrace/loops.py) -----------------------------------------

def test_ir_of_loops():
    prog = lower('BEGIN { @m[1, "a"] = 2; $n = 0;\n'
                 '  while ($n < 3) { $n++; if ($n == 1) { continue; } }\n'
                 '  for ($i : 0..$n) { if ($i > 1) { break; } }\n'
                 '  for ($kv : @m) { $n += $kv.0.0 + $kv.1; printf("%s\\n", $kv.0.1); } }')
    assert dump(prog).split("probe 0", 1)[1] == """ BEGIN -> BEGIN - line 1
  local $i: s64
  local $i.end: s64
  local $kv@4:3.0.0: s64
  local $kv@4:3.0.1: char[8]
  local $kv@4:3.1: s64
  local $n: s64
  @m[1:s64, "a":char[8]] = 2:s64  @1
  $n = 0:s64  @1
  while ($n:s64 < 3:s64):bool cap=1024  @2
    $n = ($n:s64 + 1:s64):s64  @2
    if ($n:s64 == 1:s64):bool  @2
      continue  @2
  $i = 0:s64  @3
  $i.end = $n:s64  @3
  while ($i:s64 < $i.end:s64):s32 cap=1024  @3
    step
      $i = ($i:s64 + 1:s64):s64  @3
    if ($i:s64 > 1:s64):bool  @3
      break  @3
  for [$kv@4:3.0.0, $kv@4:3.0.1], $kv@4:3.1 in @m  @4
    $n = ($n:s64 + ($kv@4:3.0.0:s64 + $kv@4:3.1:s64):s64):s64  @4
    emit printf 1 ($kv@4:3.0.1:char[8])  @4
"""


@pytest.mark.parametrize("src,message", [
    ("BEGIN { break; }", "tool.bt:1:9: error: 'break' outside a loop"),
    ("BEGIN { @a[1] = hist(1); for ($kv : @a) { } }",
     "tool.bt:1:37: error: Loop expression does not support type: hist_t"),
    ("BEGIN { @m[1] = (1, 2); for ($kv : @m) { print($kv.1.5); } }",
     "tool.bt:1:48: error: this tuple has 2 members (.0 to .1), no .5"),
    ("BEGIN { @m[1] = 1; for ($kv : @m) { print($kv.2); } }",
     "tool.bt:1:43: error: $kv is (key, value) of @m: no element 2"),
    ("BEGIN { $kv = 1; @m[1] = 1; for ($kv : @m) { } }",
     "tool.bt:1:34: error: the loop variable $kv is already a variable here"),
    ("BEGIN { for ($i : 0..5000) { } }",
     "tool.bt:1:19: error: this range has 5000 values; plyc runs a loop at most 1024 times"),
    ("BEGIN { @m = 1; for ($kv : @m) { } }",
     "tool.bt:1:28: error: @m has no keys: a for loop needs a map with keys"),
    ("BEGIN { $t = 1; print($t.0); }",
     "tool.bt:1:23: error: '.0' reads a member of a tuple, not of a value of type s64"),
])
def test_loop_errors(src, message):
    assert message in err(src)


def test_for_loop_probe_has_no_fentry_twin():
    """A for loop's callback can't be told which twin runs it: the kprobe stays."""
    from plyc.codegen import resources
    prog = lower("kprobe:vfs_read { @m[1] = 1; for ($kv : @m) { } }")
    assert not resources.build(prog, "t", "t.bt").probes[0].fentry


def test_config_license_is_the_bpf_objects():
    """bpftrace 0.27's license: a GPL-compatible one (the GPL-only helpers
    plyc calls need it) goes into the BPF object; another is refused."""
    from plyc import driver
    src = 'config = { license = "Dual BSD/GPL" }\nBEGIN { exit(); }'
    assert lower(src).license == "Dual BSD/GPL"
    c = driver.compile_source(src, "tool.bt", driver.Options()).generated.bpf_c
    assert 'char LICENSE[] SEC("license") = "Dual BSD/GPL";' in c
    assert lower("BEGIN { exit(); }").license == "GPL"
    assert err('config = { license = "Proprietary" }\nBEGIN { }').startswith(
        "tool.bt:1:22: error: license=Proprietary is not a license the kernel lets the BPF helpers plyc calls "
        "run under\n")


def test_config_limits_are_the_command_lines():
    """config's sizes have the ranges of plyc's options (plyc/bounds.py),
    each refused at its value with the range, as the option would be."""
    from plyc import bounds
    assert lower("config = { max_strlen = 32768; max_map_keys = 16777216; perf_rb_pages = 262144 }\n"
                 "BEGIN { }").limits == dict(map_entries=1 << 24, buffer_size=1 << 30)
    src = "config = { max_strlen = 65536; max_map_keys = 67108864; perf_rb_pages = 524288; on_stack_limit = 999 }\n" \
          "BEGIN { }"
    messages = [m for m in err(src).splitlines() if m.startswith("tool.bt")]
    assert messages == [
        f"tool.bt:1:25: error: max_strlen must be from 1 to {bounds.STRSIZE[1]}, not 65536",
        f"tool.bt:1:47: error: max_map_keys must be from 1 to {bounds.MAP_ENTRIES[1]}, not 67108864",
        "tool.bt:1:73: error: perf_rb_pages must be from 1 to 262144, not 524288",
        "tool.bt:1:98: error: on_stack_limit must be from 0 to 256, not 999"]


def test_map_declarations_give_the_bpf_type_and_size():
    """`let @m = lruhash(N)`: the IR's Map carries it, resources.py makes the
    map of that type and size; an undeclared map keeps plyc's."""
    from plyc.codegen import resources
    prog = lower("let @l = lruhash(2); let @h = hash(3); let @c = percpulruhash(5); let @p = percpuhash(7);\n"
                 "BEGIN { @l[1] = 1; @h[1] = 1; @c[1] = count(); @p[1] = sum(2); @u[1] = 1; }")
    assert [(m.name, m.lru, m.max_entries) for m in prog.maps.values()] == [
        ("@l", True, 2), ("@h", False, 3), ("@c", True, 5), ("@p", False, 7), ("@u", False, None)]
    res = {m.name: (m.bpf_type, m.max_entries) for m in resources.build(prog, "t", "t.bt").maps}
    assert res == {"@l": ("BPF_MAP_TYPE_LRU_HASH", 2), "@h": ("BPF_MAP_TYPE_HASH", 3),
                   "@c": ("BPF_MAP_TYPE_LRU_PERCPU_HASH", 5), "@p": ("BPF_MAP_TYPE_PERCPU_HASH", 7),
                   "@u": ("BPF_MAP_TYPE_HASH", resources.DEFAULT_MAP_ENTRIES)}


@pytest.mark.parametrize("src,message", [
    ("let @a = hashx(0); BEGIN { @a[1] = 1; }",
     "tool.bt:1:1: error: invalid bpf map type: hashx\n"
     "let @a = hashx(0); BEGIN { @a[1] = 1; }\n^~~~~~~~~~~~~~~~~\n"
     "note: valid map types: hash, lruhash, percpuhash, percpulruhash\n"
     "tool.bt:1:16: error: a map's size must be from 1 to 4294967295\n"
     "let @a = hashx(0); BEGIN { @a[1] = 1; }\n" + " " * 15 + "^"),
    ("let @a = percpuhash(2); BEGIN { @a[1] = 1; }",
     "tool.bt:1:33: error: incompatible map types: @a is declared percpuhash, its values need hash\n"
     "let @a = percpuhash(2); BEGIN { @a[1] = 1; }\n" + " " * 32 + "^~~~~\n"
     "note: percpuhash and percpulruhash hold aggregations (count(), sum(), hist(), ...); "
     "hash and lruhash other values"),
])
def test_map_declaration_errors(src, message):
    assert err(src) == message


def test_typed_let_keeps_its_type():
    """`let $x: uint8 = v`: v and every later value converted to u8."""
    prog = lower("kprobe:f { let $x: uint8 = 5; $x = arg0; let $s: string[4]; }")
    text = dump(prog)
    assert "local $x: u8" in text and "local $s: char[4]" in text
    assert "$x = cast(arg0:u64):u8" in text


def test_typeof_in_casts_and_sizeof():
    """0.27's typeof(): a cast to an expression's type, its size, and
    typeof(TYPE) as TYPE."""
    text = dump(lower("kprobe:f { $x = (uint8)1; @m = (int16)2; $y = (typeof($x))arg0; "
                      "$z = sizeof(typeof(@m)); $w = (typeof(uint32))arg1; let $v: typeof(int16) = 1; }"))
    assert "$y = cast(arg0:u64):u8" in text and "$z = 2:u64" in text
    assert "$w = cast(arg1:u64):u32" in text and "local $v: s16" in text


@pytest.mark.parametrize("src,message", [
    ("BEGIN { let $x: uint8 = 300; }",
     "tool.bt:1:25: error: type mismatch for $x: 300 does not fit in its type, u8\n"
     "BEGIN { let $x: uint8 = 300; }\n" + " " * 24 + "^~~"),
    ('BEGIN { let $x: int16; $x = "a"; }',
     "tool.bt:1:29: error: type mismatch for $x: a char[8] assigned to a s16\n"
     'BEGIN { let $x: int16; $x = "a"; }\n' + " " * 28 + "^~~"),
    ('BEGIN { let $s: string[2] = "abc"; }',
     "tool.bt:1:29: error: type mismatch for $s: a string of 4 bytes does not fit in its char[2]\n"
     'BEGIN { let $s: string[2] = "abc"; }\n' + " " * 28 + "^~~~~"),
    ("BEGIN { $a = 1; $b = typeof($a); }",
     "tool.bt:1:22: error: typeof() outside a cast, sizeof() or 'let $x: typeof(e)' is not supported by plyc yet\n"
     "BEGIN { $a = 1; $b = typeof($a); }\n" + " " * 21 + "^~~~~~"),
    ('BEGIN { $s = "a"; $b = (typeof($s))1; }',
     "tool.bt:1:25: error: can't cast to typeof() of a value of type char[2]\n"
     'BEGIN { $s = "a"; $b = (typeof($s))1; }\n' + " " * 24 + "^~~~~~~~~~\n"
     "note: a cast's type is an integer or a pointer"),
])
def test_typed_let_errors(src, message):
    assert err(src) == message


def test_delete_value_is_read_before_its_statement():
    """`if (delete(@m, 1))`: has_key()'s test into a bool local, the delete,
    then the statement reading the local; refused in a while condition,
    which would run it once."""
    text = dump(lower("BEGIN { @m[1] = 1; if (delete(@m, 1)) { print(1); } }"))
    assert "  local $delete@1:24: bool\n" in text
    assert text.index("$delete@1:24 = has") < text.index("delete @m[1:s64]") < text.index("if $delete@1:24")
    assert err("BEGIN { @m[1] = 1; while (delete(@m, 1)) { } }") == (
        "tool.bt:1:27: error: delete()'s value in a while condition is not supported by plyc yet\n"
        "BEGIN { @m[1] = 1; while (delete(@m, 1)) { } }\n" + " " * 26 + "^~~~~~")


def _module_btf(folder, base):
    """A module's split BTF over `base`: struct plyc_mod_thing { int x;
    struct plyc_mod_thing *next; }, its ids and strings after the base's."""
    import struct as S
    from plyc import btf as B
    first, sb = len(base.types), len(base.strings)
    strs = b"\0plyc_mod_thing\0x\0next\0"
    off = lambda n: sb + strs.index(n.encode() + b"\0")  # noqa: E731
    types = (S.pack("<III", off("plyc_mod_thing"), (B.STRUCT << 24) | 2, 16)
             + S.pack("<III", off("x"), base.find(B.INT, "int"), 0)
             + S.pack("<III", off("next"), first + 1, 64)
             + S.pack("<III", 0, B.PTR << 24, first))
    hdr = S.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strs))
    (folder / "plyc_mod").write_bytes(hdr + types + strs)


def test_types_of_a_loaded_module(tmp_path, monkeypatch):
    """A type no kernel BTF has but a module's does (/sys/kernel/btf/MODULE,
    split BTF over vmlinux's): casts and member reads through it, defined in
    the generated C for CO-RE as a kernel type is; a name no module has
    stays unknown."""
    import os
    from plyc import btf as B
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        pytest.skip("this kernel has no BTF (/sys/kernel/btf/vmlinux): no base for a module's")
    (tmp_path / "vmlinux").symlink_to("/sys/kernel/btf/vmlinux")
    _module_btf(tmp_path, B.load("/sys/kernel/btf/vmlinux"))
    monkeypatch.setenv("PLYC_BTF", str(tmp_path / "vmlinux"))
    src = 'kprobe:vfs_read { $t = (struct plyc_mod_thing *)arg0; printf("%d %d\\n", $t->x, $t->next->x); }'
    assert dump(lower(src)).splitlines()[-1] == (
        "  emit printf 1 ($t:struct plyc_mod_thing *->x:s32, "
        "$t:struct plyc_mod_thing *->next:struct plyc_mod_thing *->x:s32)  @1")
    c = driver.compile_source(src, "tool.bt", driver.Options()).generated.bpf_c
    assert "struct plyc_mod_thing {\n\t__s32 x;\n\tvoid *next;\n} __attribute__((preserve_access_index));" in c
    assert err(src.replace("plyc_mod_thing", "plyc_mod_nothing")).splitlines()[:4] == [
        "tool.bt:1:25: error: the kernel has no type 'struct plyc_mod_nothing'",
        'kprobe:vfs_read { $t = (struct plyc_mod_nothing *)arg0; printf("%d %d\\n", $t->x, $t->next->x); }',
        " " * 24 + "^" + "~" * 24,
        "note: types come from the kernel's BTF (/sys/kernel/btf/vmlinux) and the loaded modules' "
        "(/sys/kernel/btf/MODULE)"]


def test_records_are_named_tuples():
    """bpftrace 0.27's records: a tuple type with its members' names, read
    by name; assigned its members in another order, by name (the variable's
    type keeps the first order: codegen converts); a record key is one key;
    `$t[1]` is `$t.1`; == of two records compares member by member."""
    prog = lower('BEGIN { $r = (a=1, b="x"); $r = (b="long", a=2); @m[(k=1)] = $r; print($r.b); '
                 '$t = (1, 2); print($t[1]); print($r == (b="y", a=3)); }')
    lines = dump(prog).splitlines()
    assert lines[0] == "map @m hash [record { .k = s64 }] -> record { .a = s64, .b = char[8] }"
    body = [line.strip() for line in lines if line.endswith("@1")]
    assert body[1] == '$r = tuple("long":char[8], 2:s64):record { .b = char[8], .a = s64 }  @1'
    assert body[3] == "emit print 1 ($r:record { .a = s64, .b = char[8] }.1:char[8])  @1"
    assert body[5] == "emit print 2 ($t:(s64, s64).1:s64)  @1"
    # the record literal's .b (its member 0) against $r's .b (member 1)
    assert ".1:char[8] == tuple(" in body[6] and ".a = s64 }.0:char[8]):s32" in body[6]
    from plyc import types as T
    r = T.Tuple([T.Int(8), T.Str(8)], ("a", "b"))
    assert T.matched(r, T.Tuple([T.Str(16), T.Int(8)], ("b", "a"))) == [1, 0]
    assert T.unify(r, T.Tuple([T.Str(16), T.Int(8)], ("b", "a"))) == T.Tuple([T.Int(8), T.Str(16)], ("a", "b"))
    assert T.unify(r, T.Tuple([T.Int(8), T.Str(8)])) is None    # a record is no tuple
    assert T.unify(r, T.Tuple([T.Int(8), T.Str(8)], ("a", "c"))) is None


def test_record_and_tuple_index_errors():
    """Refused by name, with bpftrace 0.27's reasons (its words where it has them)."""
    src = ('BEGIN { $r = (a=1, b="x"); print($r.c); print($r.0); $t = (1, 2); print($t.a); $i = 0; '
           'print($t[$i]); $r = (a=1, c=2); print($r < $r); print($t == (1, 2, 3)); print($r[0]); }')
    heads = [line for line in err(src).splitlines() if line.startswith(("tool.bt", "note"))]
    assert heads == [
        "tool.bt:1:34: error: Record does not contain a field named 'c'",
        "note: its members: a, b",
        "tool.bt:1:47: error: Can not access index '0' on expression of type 'record { .a = s64, .b = char[8] }'",
        "note: a record's members are read by name ($r.a)",
        "tool.bt:1:73: error: Can not access field 'a' on expression of type '(s64, s64)'",
        "tool.bt:1:94: error: Array-style access for tuples only valid for integer literals",
        "tool.bt:1:108: error: $r was record { .a = s64, .b = char[8] } and can't now hold record { .a = s64, .c = s64 }",
        "tool.bt:1:126: error: operator '<' can't compare record { .a = s64, .b = char[8] } "
        "with record { .a = s64, .b = char[8] }",
        "tool.bt:1:142: error: operator '==' can't compare (s64, s64) with (s64, s64, s64)",
        "note: tuples and records compare with == and != to one of their shape",
        "tool.bt:1:166: error: The array index operator [] can only be used on arrays, pointers, and tuples, "
        "found record { .a = s64, .b = char[8] }",
        "note: a record's members are read by name ($r.a)"]


def test_script_struct_values():
    """A script struct held by value as a value: a record of its members,
    each read at its C offset; a union, and a struct with an array of other
    than char, are refused by name (bpftrace 0.27 aborts on the one, prints
    the other as a list)."""
    src = ("struct i { short z; char t[3]; };\nstruct s { int a; struct i in; };\n"
           "kprobe:f { $t = (struct s *)arg1; print($t->in); @m = *$t; }")
    body = [line.strip() for line in dump(lower(src)).splitlines() if line.endswith("@3")]
    assert body[0].startswith("$t = cast(arg1:u64):struct s *")
    assert body[1].endswith(":record { .z = s16, .t = char[3] })  @3")
    assert body[2].startswith("@m[] = tuple(member(cast($t:struct s *):void *):s32, tuple(") and body[2].endswith(
        ":record { .a = s32, .in = record { .z = s16, .t = char[3] } }  @3")
    src = ("union u { int a; char b[4]; };\nstruct v { int n[2]; union u w; };\n"
           "kprobe:f { $v = (struct v *)arg1; print($v->w); print(*$v); }")
    heads = [line for line in err(src).splitlines() if line.startswith(("tool.bt", "note"))]
    assert heads == [
        "tool.bt:3:41: error: a union u held by value as a value is not supported by plyc: read one of its members",
        "note: bpftrace 0.27 aborts printing a union (std::bad_alloc)",
        "tool.bt:3:55: error: a struct v as a value is not supported by plyc yet: its member 'n' is an array "
        "of other than char",
        "note: bpftrace 0.27 prints it as a list, [1,2]; read its elements ($s->a[0])"]


def test_kernel_struct_values():
    """A kernel struct held by value as a value: a record of CO-RE reads of
    its members; on the way to a member, a place read through. What plyc
    can't make a record of is refused by name, with the member."""
    prog = lower('BEGIN { print(curtask->se.load); print(curtask->se.load.weight); }')
    lines = [line.strip() for line in dump(prog).splitlines()]
    emits = [line for line in lines if "emit" in line]
    # the pointer its members are read through is read once, before the statement
    assert "$kbase0@1:15 = curtask:struct task_struct *  @1" in lines
    assert emits == [
        "emit print 1 (tuple($kbase0@1:15:struct task_struct *->se:struct.load:struct.weight:u64, "
        "$kbase0@1:15:struct task_struct *->se:struct.load:struct.inv_weight:u32)"
        ":record { .weight = u64, .inv_weight = u32 })  @1",
        "emit print 2 (curtask:struct task_struct *->se:struct.load:struct.weight:u64)  @1"]
    # anonymous members in their holder's place, arrays as lists, bit-fields, enums by name
    prog = lower('BEGIN { print(curtask->se); print(curtask->cpus_mask); print(curtask->dl); '
                 '$k = (struct kqid *)curtask->cred; print(*$k); }')
    types = [ev.arg_types[0] for ev in prog.events]
    assert types[0].names[types[0].names.index("vlag") + 1] == "vprot"
    assert types[1].items[0].denotes == "array" and str(types[1].items[0]) == "u64[4]"
    assert types[2].names[types[2].names.index("dl_throttled")] == "dl_throttled"
    assert types[3].names == ("uid", "gid", "projid", "type") and types[3].items[3].denotes == "enum"
    heads = [line for line in err('BEGIN { print(*(struct zonelist *)curtask); }').splitlines()
             if line.startswith("tool.bt")]
    assert heads == ["tool.bt:1:15: error: a struct zonelist as a value is not supported by plyc: it has "
                     "more than 1536 members, nested ones and array elements counted"]
    # a kernel array as a value: a list, indexed by [] (as 0.27: not by .0)
    heads = [line for line in err('BEGIN { $b = curtask->cpus_mask.bits; print($b[1]); print($b[4]); '
                                  'print($b.0); }').splitlines() if line.startswith("tool.bt")]
    assert heads == ["tool.bt:1:62: error: index 4 is out of bounds for u64[4]",
                     "tool.bt:1:73: error: Can not access index '0' on expression of type 'u64[4]'"]
    # a probe's struct values together (one BPF program); each probe its own
    src = ('BEGIN { print(*(struct io_bitmap *)curtask); @m = *(struct io_bitmap *)curtask; } '
           'END { print(*(struct io_bitmap *)curtask); }')
    heads = [line for line in err(src).splitlines() if line.startswith("tool.bt")]
    assert heads == ["tool.bt:1:51: error: the kernel structs this probe holds by value have more than 1536 "
                     "members together, nested ones and array elements counted: plyc's limit for one BPF "
                     "program"]


def test_record_keys_in_delete_and_has_key():
    """A record given to delete() or has_key() is one key (a tuple's members
    are the key's parts)."""
    prog = lower('BEGIN { @h[(a=2)] = 5; $x = has_key(@h, (a=2)); delete(@h, (a=2)); }')
    assert dump(prog).splitlines()[0] == "map @h hash [record { .a = s64 }] -> s64"


# --- block expressions, ++/-- as a value, &$x (frontends/bpftrace/blocks.py, effects.py) ----

def test_values_with_effects_run_first():
    """x++ keeps the value before in a local of its own, ++x the value
    after; a block's statements run before the statement using its value,
    its own variables renamed (two blocks, two types of $x)."""
    prog = lower('BEGIN { $x = 1; $y = $x++; @c[1] = ++@c[2]; }')
    assert [line.strip() for line in dump(prog).splitlines() if line.endswith("@1")] == [
        "$x = 1:s64  @1",
        "$incdec0@1:22 = $x:s64  @1",
        "$x = ($x:s64 + 1:s64):s64  @1",
        "$y = $incdec0@1:22:s64  @1",
        "@c[2:s64] = (@c[2:s64]:s64 + 1:s64):s64  @1",
        "$incdec1@1:36 = @c[2:s64]:s64  @1",
        "@c[1:s64] = $incdec1@1:36:s64  @1"]
    prog = lower('BEGIN { $a = { let $x = 2; $x + 1 }; $b = { let $x = "s"; $x }; }')
    assert [line.strip() for line in dump(prog).splitlines() if line.endswith("@1")] == [
        "$x = 2:s64  @1",
        "$a = ($x:s64 + 1:s64):s64  @1",
        '$x\'2 = "s":char[8]  @1',
        "$b = $x'2:char[8]  @1"]


def test_address_of_a_variable():
    prog = lower('config = { unstable_addr = error }\nBEGIN { $x = 1; $p = &$x; }')
    assert "$p = _addr($x:s64):__s64 *  @2" in dump(prog)


EFFECTS_REFUSED = [
    ("BEGIN { $x = 1; $a = 1 && $x++; }",
     "tool.bt:1:27: error: '++' used as a value in the right of '&&' (runs only when the condition lets it): "
     "not supported by plyc\nBEGIN { $x = 1; $a = 1 && $x++; }\n" + " " * 26 + "^~~~\n"
     "note: assign it to a $variable in a statement of its own first"),
    ("BEGIN { $x = 1; $b = $x > 0 ? 1 : { $y = 2; 3 }; }",
     "tool.bt:1:35: error: a block expression in a branch of '?:' (runs only when the condition lets it): "
     "not supported by plyc\nBEGIN { $x = 1; $b = $x > 0 ? 1 : { $y = 2; 3 }; }\n" + " " * 34 + "^~~~~~~~~~~~~\n"
     "note: use an if statement"),
    ("BEGIN { $x = 1; $c = sizeof($x++); }",
     "tool.bt:1:29: error: '++' used as a value in sizeof() (typed, never run): not supported by plyc\n"
     "BEGIN { $x = 1; $c = sizeof($x++); }\n" + " " * 28 + "^~~~\n"
     "note: assign it to a $variable in a statement of its own first"),
    ("BEGIN { $x = 1; @m[$x++]++; }",
     "tool.bt:1:20: error: '++' used as a value in the key of '++' (the key is read, then written): "
     "not supported by plyc\nBEGIN { $x = 1; @m[$x++]++; }\n" + " " * 19 + "^~~~\n"
     "note: assign it to a $variable in a statement of its own first"),
    # (a $variable read before its `++` is taken first: effects.py's snapshots)
    ("BEGIN { @x = 1; $z = @x + @x++; }",
     "tool.bt:1:22: error: @x is read before '++' that changes it in the same statement: not supported by "
     "plyc (bpftrace reads the value before the change, plyc after it)\n"
     "BEGIN { @x = 1; $z = @x + @x++; }\n" + " " * 21 + "^~\n"
     "note: do the change in a statement of its own first"),
    # delete()'s value runs before its statement: where 0.27 would not run
    # it, or would read the map before it, plyc refuses (it printed
    # `(false, true)` for 0.27's `(true, true)`, and deleted under `?:`)
    ("BEGIN { @a[1] = 5; print((has_key(@a, 1), delete(@a, 1))); }",
     "tool.bt:1:35: error: @a is read before delete()'s value that changes it in the same statement: not "
     "supported by plyc (bpftrace reads the value before the change, plyc after it)\n"
     "BEGIN { @a[1] = 5; print((has_key(@a, 1), delete(@a, 1))); }\n" + " " * 34 + "^~\n"
     "note: do the change in a statement of its own first"),
    ("BEGIN { @a[1] = 5; $x = pid == 0 ? delete(@a, 1) : false; }",
     "tool.bt:1:36: error: delete()'s value in a branch of '?:' (runs only when the condition lets it): "
     "not supported by plyc\nBEGIN { @a[1] = 5; $x = pid == 0 ? delete(@a, 1) : false; }\n" + " " * 35
     + "^~~~~~~~~~~~~\nnote: use an if statement"),
    ("BEGIN { $x = 1; $a = { let $x = 2; $x }; }",
     "tool.bt:1:24: error: variable $x was already declared: bpftrace 0.27 does not allow shadowing it in a "
     "block\nBEGIN { $x = 1; $a = { let $x = 2; $x }; }\n" + " " * 23 + "^~~~~~~~~~\n"
     "note: $x was first assigned at line 1, column 9"),
    ("BEGIN { $b = { $y = 1; 2 }; print($y); }",
     "tool.bt:1:35: error: $y is not defined here: a variable first assigned in a block is that block's own\n"
     "BEGIN { $b = { $y = 1; 2 }; print($y); }\n" + " " * 34 + "^~\n"
     "note: $y was assigned at line 1, in a block that has ended (bpftrace 0.27 scopes a variable by block): "
     "assign it, or 'let $y;', before that block, or build with --bpftrace-output 0.17 (0.17's variables are "
     "the probe's)"),
    ('BEGIN { @m = 1; $s = kstack; $a = &@m; $b = &@m[1]; $c = &$s; return "x"; }',
     "tool.bt:1:35: error: the address of a map (&@m: bpftrace's BPF map object in the kernel) is not supported by plyc yet\n"
     'BEGIN { @m = 1; $s = kstack; $a = &@m; $b = &@m[1]; $c = &$s; return "x"; }\n'
     '                                  ^~~\n'
     "tool.bt:1:45: error: '&' takes a scratch variable ($x) or a map (@m), as bpftrace 0.27's grammar has it\n"
     'BEGIN { @m = 1; $s = kstack; $a = &@m; $b = &@m[1]; $c = &$s; return "x"; }\n'
     '                                            ^~~~~~\n'
     'tool.bt:1:58: error: the address of $s, a stack, is not supported by plyc yet (only of an integer, a pointer, a string or a tuple)\n'
     'BEGIN { @m = 1; $s = kstack; $a = &@m; $b = &@m[1]; $c = &$s; return "x"; }\n'
     '                                                         ^~~\n'
     "tool.bt:1:70: error: probe return values can only be integers (as bpftrace 0.27's), not char[8]\n"
     'BEGIN { @m = 1; $s = kstack; $a = &@m; $b = &@m[1]; $c = &$s; return "x"; }\n'
     '                                                                     ^~~'),
]


@pytest.mark.parametrize("src,message", EFFECTS_REFUSED, ids=range(len(EFFECTS_REFUSED)))
def test_effects_refused_by_name(src, message):
    assert err(src) == message


def test_hist_with_buckets_per_power_of_two():
    from plyc.codegen import resources as RES
    prog = lower('BEGIN { @h = hist(1, 2); @g = hist(2); @g = hist(3, 0); }')
    maps = {m.name: m for m in prog.maps.values()}
    assert maps["@h"].params == (2,) and maps["@g"].params == (0,)
    res = {m.name: m for m in RES.build(prog, "tool", "tool.bt").maps}
    # (65 - k) * 2^k buckets above the negative one: k is read back from it
    assert res["@h"].nbuckets == 253 and res["@g"].nbuckets == 66
    c = driver.compile_source('BEGIN { @h = hist(1, 2); @g = hist(2); }', "tool.bt", driver.Options()).generated.bpf_c
    # hist(x) is hist(x, 0): one bucket function
    assert "plyc_bt_hist_bucket_k((__u64)(" in c and ", 1, 2);" in c and ", 1, 0);" in c
    assert "plyc_bt_hist_bucket(" not in c
    assert "hist: bits 6 must be 0..5" in err('BEGIN { @h = hist(1, 6); }')
    assert "Different bits in a single hist unsupported" in err('BEGIN { @h = hist(1, 1); @h = hist(1, 2); }')
    assert "hist()'s second argument must be a constant integer" in err('BEGIN { $k = 1; @h = hist(1, $k); }')
    assert "hist() takes 1 or 2 arguments, got 3" in err('BEGIN { @h = hist(1, 2, 3); }')


def test_c_type_names_and_sizeof_of_arrays():
    text = dump(lower('BEGIN { print(((uint64_t)1, (int8_t)2, (__u16)3, (__s32)4)); }'))
    assert "cast(1:s64):u64, cast(2:s64):s8, cast(3:s64):u16, cast(4:s64):s32" in text
    text = dump(lower('BEGIN { print((sizeof(uint32 *[10]), sizeof(uint8[3]), sizeof(struct task_struct *))); }'))
    assert "(80:u64, 3:u64, 8:u64)" in text
    assert "(sizeof(struct sock)" in dump(lower('BEGIN { print(sizeof(struct sock[2])); }'))   # CO-RE, times 2
    # a block expression is typed, never run: its statement is not in the probe
    text = dump(lower('BEGIN { print(sizeof({ $b = (uint16)1; $b })); }'))
    assert "emit print 1 (2:u64)" in text and "$b = cast(1:s64):u16" not in text
    # what it assigns would be typed by a statement never run
    assert "$b assigned in sizeof() (typed, never run)" in \
        err('BEGIN { $b = 0; print(sizeof({ $b = (uint16)1; $b })); print($b); }')
    assert "@m assigned in sizeof() (typed, never run)" in err('BEGIN { print(sizeof({ @m = 1; 2 })); }')
    assert "a block expression in sizeof() (typed, never run)" in err('BEGIN { $x = 1; print(sizeof({ $x++ })); }')


def test_array_casts_both_ways():
    text = dump(lower('BEGIN { $a = (int16[2])(uint32)0x10002; print(($a, (uint32)$a)); }'))
    assert "$a = tuple(cast((cast(cast(65538:s64):u32):u64 >> 0:u64):u64):s16, " \
           "cast((cast(cast(65538:s64):u32):u64 >> 16:u64):u64):s16):s16[2]" in text
    assert "(cast(cast($a:s16[2].1:s16):u16):u64 << 16:u64)" in text
    # big-endian targets: the first element is the high bytes
    assert ">> 16:u64):u64):s16, cast((" in dump(lower('BEGIN { print((int16[2])(uint32)1); }', target="s390x"))
    assert "can't cast s64 to u8[4]: an integer casts to an array of its size (8 bytes)" in \
        err('BEGIN { $x = 1; print((uint8[4])$x); }')
    assert "an array cast's elements must be integers" in err('BEGIN { print((struct task_struct[2])1); }')
    assert "an array casts to the integer of its size (4 bytes)" in \
        err('BEGIN { $a = (int8[4])(uint32)1; print((uint64)$a); }')
    # a string literal: its bytes and NUL, folded; its count as 0.27's (string[6])
    assert "tuple(104:s8, 105:s8, 0:s8):s8[3]" in dump(lower('BEGIN { print((int8[])"hi"); }'))
    assert 'Cannot cast from "string[6]" to "int8[8]"' in err('BEGIN { print((int8[8])"hello"); }')
    assert "Cannot determine array size" in err('BEGIN { print((int16[])"hell"); }')
    assert "plyc sizes a string held elsewhere otherwise than 0.27" in \
        err('BEGIN { $s = "hi"; print((int8[])$s); }')


def test_a_positional_only_printed_is_its_text():
    text = dump(lower('BEGIN { print(($1, $2)); printf("%s %d\\n", $3, $4); @m = $2; }'))
    # $1 only printed: its text; $2 also stored, $4 printed by %d: numbers
    assert "str(param.arg_str[1]:char[1024]):char[1024]" in text
    assert "param.arg_num[2]" in text and "param.arg_num[4]" in text
    assert "str(param.arg_str[3]:char[1024])" in text and "str(param.arg_str[2]" not in text
    # one not given prints 0, as 0.27's number
    assert '(param.arg_count:u64 >= 1:u64):s32 ? str(param.arg_str[1]:char[1024]):char[1024] : "0":char[8]' in \
        dump(lower('BEGIN { print($1); }'))


def test_a_percent_that_starts_no_conversion_is_printed():
    from plyc.frontends.bpftrace import formats
    from plyc.frontends.bpftrace import ast as BA

    def fmt(text):
        call = BA.Call("printf", [BA.Str(text.encode())], None)
        return formats.literal_percents(None, call).args[0].value.decode()
    assert fmt("50%\n") == "50%%\n" and fmt("a %d%") == "a %d%%" and fmt("x%q %%") == "x%%q %%"
    assert fmt("% d") == "% d"      # the ' ' flag: a conversion, as in 0.27
    assert "event 1 printf" in dump(lower('BEGIN { printf("100%\\n"); }'))


def test_gfp_flags_by_name_are_a_printf_conversion_of_integers():
    # 0.27's %gr (its text: tests/runtime/bt-printf-gfp.test, beside 0.27)
    assert "event 1 printf" in dump(lower('tracepoint:kmem:kmalloc { printf("%-20gr|\\n", args->gfp_flags); }'))
    assert "'%gr' can't print a value of type char[" in err('BEGIN { printf("%gr\\n", "GFP_KERNEL"); }')
    # ply's printf is C's: %gr is no conversion there
    with pytest.raises(PlycError) as info:
        driver.lower('BEGIN { printf("%gr\\n", 3); }', "t.ply", driver.Options())
    assert "invalid conversion '%gr' in format string" in info.value.render()


def test_macro_type_parameters_and_block_arguments():
    # a type passed as typeof(TYPE) or typeof(expr), named where a type goes
    text = dump(lower('macro p(t, v) { (t *)v }\nmacro c(t, v) { (t)v }\n'
                      'BEGIN { $s = (int16)1; print(p(typeof(uint32), 8)); print(c(typeof($s), 70000)); }'))
    assert "cast(8:s64):u32 *" in text and ":s16" in text
    # `(name)v` outside a macro is a cast to an unknown type, as 0.27 reads it
    assert "unknown type 'nosuch'" in err('BEGIN { $v = 1; print((nosuch)$v); }')
    assert "a pointer to or array of typeof() of an expression is not supported by plyc yet" in \
        err('macro p(t, v) { (t *)v }\nBEGIN { $s = 1; print(p(typeof($s), 8)); }')
    # a block with effects given as an argument runs at each use; a block statement
    text = dump(lower('macro twice(x) { x; x; }\nBEGIN { twice({ printf("a") }); { printf("b") }; }'))
    assert text.count("emit printf") == 3
    # a cast of a negative literal to a pointer keeps its smallest type's bits, as 0.27
    assert "cast(cast(" in dump(lower('BEGIN { print((uint8 *)-1); }'))


def test_string_and_buffer_casts_refused_as_0_27_refuses_them():
    assert 'Cannot cast from "uint64" to "string[64]"' in err('kprobe:f { $s = (string[64])arg0; }')
    assert 'Cannot cast from "uint64" to "buffer[4][256]"' in err('kprobe:f { $b = (buffer[256])arg0; }')
    assert 'Cannot cast from "string[7]" to "string[3]"' in err('BEGIN { $t = (string[3])"abcdef"; }')


def test_a_misspelt_function_is_given_the_names_near_it():
    assert err('BEGIN { prnitf("x"); }') == (
        'tool.bt:1:9: error: unknown function \'prnitf\'\nBEGIN { prnitf("x"); }\n        ^~~~~~\n'
        "note: did you mean printf?")
    assert "note: did you mean count?" in err("BEGIN { @x = cout(); }")


def test_string_and_buffer_cast_errors_name_what_is_wrong():
    # `[]` has no size: 0.27 names the target "string" and "buffer[4][0]",
    # not a size of -1; the value cast is named by its own size
    e = err('BEGIN { $x = (string[])comm; }')
    assert 'Cannot cast from "string[16]" to "string"' in e and "(string[N])" in e and "-1" not in e
    assert e.startswith("tool.bt:1:14: error:") and "\n             ^" in e
    e = err('BEGIN { $x = (buffer[])1; }')
    assert 'to "buffer[4][0]"' in e and "(buffer[N])" in e and "-1" not in e
    assert 'Cannot cast from "string[2]" to "string"' in err('BEGIN { $x = (string[])"a"; }')
    # the value's type in bpftrace's names, not plyc's IR's (a struct
    # held by value by its C name, not its members)
    e = err('BEGIN { $x = (string[8])*curtask; }')
    assert 'Cannot cast from C type "struct task_struct"' in e and ".pid" not in e
    assert 'Cannot cast from "(int8,uint16 *)" to "string[8]"' in \
        err('BEGIN { $x = (string[8])((int8)1, (uint16 *)0); }')
    assert 'Cannot cast from "int32[2]" to "string[8]"' in err('BEGIN { $x = (string[8])(int32[2])1; }')
    assert 'Cannot cast from "kstack" to "buffer[4][8]"' in err('BEGIN { $x = (buffer[8])kstack; }')
    # the hint to read memory with str()/buf() only where there is an
    # address to read: not for a buffer, a stack or a tuple
    e = err('tracepoint:syscalls:sys_enter_read { $x = (buffer[8])buf(args.buf, 8); }')
    assert 'Cannot cast from "buffer[12]" to "buffer[4][8]"' in e and "str(p, n)" not in e
    assert "str(p, n)" not in err('BEGIN { $x = (buffer[8])kstack; }')
    assert "str(p, n)" in err('kprobe:f { $b = (buffer[8])arg0; }')


def test_an_expression_statement_is_typed_then_discarded():
    # bpftrace 0.27 runs `args.x;` with a warning (its runtime suite's btf
    # tests do); plyc too: the value dropped, what it runs first kept, its
    # errors told, the warning said once where the probe is lowered twice
    prog = lower("tracepoint:syscalls:sys_enter_nanosleep { args.rqtp.tv_sec; 1 + 2; exit(); }\n"
                 "BEGIN { $y = 1; { $y += 1; $y }; printf(\"%d\\n\", $y); }")
    said = [w.render_lines("tool.bt", []) for w in prog.warnings]
    assert said == ["tool.bt:1:43: warning: this expression's value is discarded",
                    "tool.bt:1:61: warning: this expression's value is discarded",
                    "tool.bt:2:28: warning: this expression's value is discarded"]
    assert "$y += 1" not in dump(prog) and "+ 1" in dump(prog)
    assert "has no member 'nosuch'" in err("tracepoint:syscalls:sys_enter_nanosleep { args.rqtp.nosuch; }")


def test_a_ternary_of_calls_as_a_statement_is_an_if():
    # 0.27 runs `c ? printf(..) : printf(..);` (its runtime suite's
    # ternary_none_type): one branch, for its effect
    assert dump(lower('kprobe:f { pid > 5 ? printf("yes\\n") : printf("no\\n"); nsecs ? exit() : printf("x"); }')) == \
        dump(lower('kprobe:f { if (pid > 5) { printf("yes\\n"); } else { printf("no\\n"); } '
                   'if (nsecs) { exit(); } else { printf("x"); } }'))


def test_socket_cookie():
    assert "socket_cookie(args_sk" in dump(lower('kfunc:tcp_close { print(socket_cookie(args.sk)); }'))
    assert "socket_cookie() can only be used in kfunc (fentry) and kretfunc (fexit) probes" in \
        err('rawtracepoint:inet_sock_set_state { print(socket_cookie(args.sk)); }')
    assert "socket_cookie() only supports 'struct sock *' as the argument (s64 provided)" in \
        err('kfunc:tcp_close { print(socket_cookie(1)); }')
    assert "takes the probed function's argument (args.sk)" in \
        err('kfunc:tcp_close { $s = (struct sock *)args.sk->__sk_common.skc_net.net; '
            'print(socket_cookie($s)); }')


def test_ctx():
    # a perf event's: 0.27's struct bpf_perf_event_data *, read from the program's copy
    text = dump(lower('struct x {unsigned long x}; i:ms:1 { print(((struct x *)ctx).x); print(ctx->sample_period); }'))
    assert "ctx" in text and "sample_period" in text
    assert "Use args instead of ctx in tracepoint" in err('tracepoint:syscalls:sys_enter_openat { print(ctx); }')
    assert "The ctx builtin can not be used with 'begin' probes" in err('BEGIN { print(ctx); }')
    assert "'ctx' in uprobe probes is not supported by plyc yet" in err('uprobe:/bin/sh:main { print(ctx); }')
    assert "'ctx' in a perf-event probe for riscv64 is not supported by plyc yet" in \
        err('i:ms:1 { print(ctx->sample_period); }', target="riscv64")


def test_script_struct_bit_fields_read_in_allocation_order():
    """A bit-field is read as the fewest bytes holding it, moved up to the
    top bit and down again (an arithmetic shift for a signed one); its
    bits counted from the first byte's least significant bit on a
    little-endian target, its most significant on a big-endian one (the
    runtime case bt-struct-bitfields runs the little-endian reads)."""
    src = ("struct s { unsigned char a:3; unsigned short b:9; int c:4; }\n"
           "BEGIN { $v = (uint64)1; $p = (struct s *)&$v; print(($p->a, $p->b, $p->c)); }")
    reads = {}
    for target in ("x86_64", "s390x"):
        line = [x for x in dump(lower(src, target=target)).splitlines() if "emit print" in x][0]
        reads[target] = re.findall(r"member\((.+?)\):(u8|u16)\):u64 << (\d+):u64\):u64\):([su]64) >> (\d+)", line)
    assert reads["x86_64"] == [("cast($p:struct s *):void *", "u8", "61", "u64", "61"),
                               ("cast($p:struct s *):void *", "u16", "52", "u64", "55"),
                               ("($p:struct s * + 1:s64):void *", "u8", "56", "s64", "60")]
    assert reads["s390x"] == [("cast($p:struct s *):void *", "u8", "56", "u64", "61"),
                              ("cast($p:struct s *):void *", "u16", "51", "u64", "55"),
                              ("($p:struct s * + 1:s64):void *", "u8", "60", "s64", "60")]
    assert "bit-field 'a' has width 33: from 1 to 32 bits for its type" in err("struct s { int a:33; } BEGIN { }")
    assert "bit-field 'a' must have an integer type" in err("struct s { char *a:3; } BEGIN { }")
    assert "offsetof() of bit-field 'a': it has no byte offset of its own" in \
        err("struct s { int a:3; int b; } BEGIN { print(offsetof(struct s, a)); }")


def test_a_variable_read_before_its_change_is_taken_first():
    """`$v` read before a `++`, find() or block that changes it in the same
    statement is read into a local there, before the change runs, as
    bpftrace reads left to right (`bt-effects-snapshot` runs them beside
    0.27); the read of its address stays refused."""
    text = dump(lower('BEGIN { $x = 1; $z = $x + $x++; }'))
    assert "$snap0@1:22 = $x:s64  @1" in text
    assert text.index("$snap0@1:22 = $x") < text.index("$x = ($x:s64 + 1")
    assert "$x is read before '++'" in err('BEGIN { $x = 1; $p = (uint64)&$x + $x++; }')
