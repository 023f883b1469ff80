"""bpftrace's value functions and builtins (plyc/frontends/bpftrace/values.py):
the IR they lower to, the values the tracer finds on the device
(`param dconst[i]` in the resources), and their errors. Behaviour on a
kernel: tests/runtime/bt-kaddr-deref.test, bt-stack-args, bt-newer-values,
bt-text-values*, bt-strftime, bt-uaddr*, and the VM cases bt-loads*,
bt-stack-args-arm64, bt-uaddr-static."""

import pytest

from plyc.codegen import loops, printers, resources
from plyc.ir.dump import dump


from btlower import err, lower


def test_ir_of_memory_registers_and_device_values():
    prog = lower('uprobe:/bin/sh:main {\n'
                 '  $p = kaddr("avenrun");\n'
                 '  @m[1] = *$p + *(int32 *)($p + 8) + *(uint8 **)$p;\n'
                 '  printf("%d %d %d\\n", sarg1, reg("sp"), has_key(@m, 1));\n'
                 '  printf("%d %d %d\\n", ncpus, jiffies, cgroupid("/sys/fs/cgroup/a"));\n'
                 '  printf("%d %d\\n", offsetof(struct sock, __sk_common.skc_family), *uptr(arg0));\n'
                 '}')
    assert dump(prog) == """\
map @m hash [s64] -> u8 *
event 1 printf "%d %d %d\\n" (u64, u64, bool) line 4
event 2 printf "%d %d %d\\n" (u64, u64, u64) line 5
event 3 printf "%d %d\\n" (u64, u64) line 6
program strsize=1024 arch=x86_64
probe 0 uprobe:/bin/sh:main -> uprobe main line 1 regs reads=arg0
  local $p: u64
  $p = device.kaddr("avenrun"):u64  @2
  @m[1:s64] = ((cast(*$p:u64:u64):s64 + *cast(($p:u64 + 8:s64):u64):s32 *:s32):s64 + *cast($p:u64):u8 * *:u8 *):u8 *  @3
  emit printf 1 (_sarg(1:s64):u64, reg.sp:u64, has @m[1:s64]:bool)  @4
  emit printf 2 (device.ncpus:u64, jiffies:u64, device.cgroupid("/sys/fs/cgroup/a"):u64)  @5
  emit printf 3 (_offsetof("struct sock":char[64], "__sk_common.skc_family":char[64]):u64, \
*user uptr(arg0:u64):void *:u64)  @6
"""
    res = resources.build(prog, "tool", "tool.bt")
    assert res.device_consts == [("kaddr", "avenrun", "", 2), ("ncpus", "", "", 5),
                                 ("cgroupid", "/sys/fs/cgroup/a", "", 5)]
    assert "param dconst[2]: cgroupid /sys/fs/cgroup/a\n" in resources.describe(res)


def test_uaddr_adds_the_load_offset_the_uprobe_sees():
    prog = lower('uprobe:/bin/sh:main+4 { printf("%d\\n", *uaddr("x")); }\n'
                 'uretprobe:/bin/sh:main { printf("%d\\n", *uaddr("x")); }')
    text = dump(prog)
    assert "emit printf 1 (*user (device.uaddr(\"x\") in /bin/sh:u64 + (caller:u64 - " \
           "(device.uaddr(\"main\") in /bin/sh:u64 + 4:u64):u64):u64):u64 *:u64)  @1" in text
    assert "emit printf 2 (*user device.uaddr_fixed(\"x\") in /bin/sh:u64 *:u64)  @2" in text
    res = resources.build(prog, "tool", "tool.bt")
    assert [d[:3] for d in res.device_consts] == [("uaddr", "x", "/bin/sh"), ("uaddr", "main", "/bin/sh"),
                                                  ("uaddr_fixed", "x", "/bin/sh")]


def test_len_checks_its_helper_on_the_device():
    prog = lower('BEGIN { @m[1] = 1; printf("%d\\n", len(@m)); }')
    assert 'emit printf 1 (len("@m":char[64]):s64)  @1' in dump(prog)
    assert prog.probes[0].bpf_defines == {"PLYC_MAP_LEN"}
    res = resources.build(prog, "tool", "tool.bt")
    # the tracer asks the kernel for the helper before the load (runtime-c/load/needs.c)
    assert [(n["helper_name"], n["line"], n["what"]) for n in loops.needs(res)] == \
        [("bpf_for_each_map_elem", 1, '"len(@m)"')]
    assert "len() counts a map's keys; @k has none" in err('BEGIN { @k = 1; printf("%d\\n", len(@k)); }')
    assert "len() takes a map: len(@m)" in err('BEGIN { @k[1] = 1; printf("%d\\n", len(@k[1])); }')


def test_text_values_and_their_formats():
    prog = lower('BEGIN { printf("%s %s %s\\n", username, strftime("%H:%M", nsecs), strftime("%f", 0));\n'
                 '  @t[strftime("%H:%M", 1)] = 1; }\n'
                 'uprobe:/bin/sh:main { print(macaddr(arg0)); }')
    assert prog.time_formats == ["%H:%M", "%f"]
    text = dump(prog)
    assert ("(username:u32 (username), strftime(nsecs:s64):u64 (strftime's format #1), "
            "strftime(0:s64):u64 (strftime's format #2))") in text
    assert "emit print 2 (macaddr(arg0:u64):u64 (mac))" in text
    types = [e.type for e in prog.probes[0].body.stmts[0].args]
    assert [(t.denotes, t.format_index) for t in types] == [("username", 0), ("strftime", 0), ("strftime", 1)]
    assert [printers.rt_kind(t) for t in types] == ["PLYC_K_USERNAME", "PLYC_K_STRFTIME", "PLYC_K_STRFTIME"]


ERRORS = [
    ('tracepoint:syscalls:sys_enter_openat { $a = kaddr(comm); $b = reg("ip"); $c = sarg0; '
     '$h = uaddr("x"); $m = cgroupid(""); }',
     ["tool.bt:1:51: error: kaddr()'s symbol must be a string literal",
      "tool.bt:1:63: error: reg() reads the registers of a kprobe or uprobe; tracepoint probes have none",
      "tool.bt:1:79: error: sarg0 reads the registers of a kprobe or uprobe; tracepoint probes have none",
      "tool.bt:1:91: error: uaddr() finds a symbol in a uprobe's binary; tracepoint probes have none",
      "tool.bt:1:117: error: cgroupid()'s path is empty"]),
    ('BEGIN { $d = *"abc"; $e = *curtask; $f = offsetof(struct task_struct, nosuch); '
     '$g = offsetof(struct nosuch_t, a); }',
     ["tool.bt:1:15: error: can't dereference a value of type char[8]",
      "tool.bt:1:42: error: struct task_struct has no member 'nosuch'",
      "tool.bt:1:94: error: the kernel has no type 'struct nosuch_t'"]),
    ('BEGIN { $i = macaddr("abcdef"); $j = macaddr(comm); $k = strftime(comm, nsecs); '
     '$l = has_key(@m); @m[1] = 1; }',
     ["tool.bt:1:22: error: macaddr() takes a pointer or an array of 6 bytes, not a string literal",
      "tool.bt:1:46: error: macaddr() needs a pointer or an array of 6 bytes, got char[16]",
      "tool.bt:1:67: error: strftime()'s format must be a string literal",
      "tool.bt:1:86: error: has_key() takes 2 arguments, got 1"]),
    # a map or variable holds the values of one strftime() format (its number is in the type)
    ('BEGIN { @x = strftime("%H", nsecs); }\nEND { @x = strftime("%Y", nsecs); '
     '$y = 1 ? strftime("%H", 1) : strftime("%M", 1); }',
     ["tool.bt:2:12: error: map '@x' holds u64 (strftime's format #1), not u64 (strftime's format #2)",
      "tool.bt:2:40: error: the branches of '?:' have different types: u64 (strftime's format #1) and "
      "u64 (strftime's format #3)"]),
    ('uprobe:/bin/sh:main { $n = reg("nosuch"); }',
     ["tool.bt:1:32: error: x86_64 has no register 'nosuch'",
      "note: registers: r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs, "
      "flags, sp, ss"]),
]


@pytest.mark.parametrize("src,lines", ERRORS, ids=range(len(ERRORS)))
def test_errors(src, lines):
    out = err(src).splitlines()
    assert [x for x in out if x.startswith(("tool.bt:", "note: registers"))] == lines
