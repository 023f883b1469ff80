"""bpftrace's user stacks and symbols, lowered (plyc/frontends/bpftrace/stacks.py):
ustack, ustack(mode, n), kstack(mode, n), usym(), func in a uretprobe; the IR
and the generated C's stack maps, and every error. Their output on a kernel,
side by side with bpftrace: tests/runtime/bt-ustack*.test."""

import pytest

from plyc import driver
from plyc.ir.dump import dump


from btlower import err, lower


def test_ir_of_stacks_and_symbols():
    """A stack's mode and frame limit are its type; a user stack and a usym
    carry the pid (in the C); func in a uretprobe is the usym of where it
    returns to, as bpftrace 0.17 gives it (`--bpftrace-output 0.17`; 0.27's
    is the probed function's name: below)."""
    prog = driver.lower('uprobe:/bin/bash:readline { @[ustack] = count();\n'
                 '  @p[ustack(perf, 3), kstack(raw)] = count();\n'
                 '  printf("%s %s\\n", usym(arg0), kstack(2)); }\n'
                 'uretprobe:/bin/bash:readline { @f[func] = count(); }', "tool.bt",
                        driver.Options(frontend={"bpftrace-output": "0.17"}))
    assert dump(prog) == """\
map @ aggregation [ustack] -> count(u64)
map @p aggregation [ustack(perf, 3), stack(raw)] -> count(u64)
map @f aggregation [usym] -> count(u64)
event 1 printf "%s %s\\n" (usym, stack(2)) line 3
program strsize=64 arch=x86_64
probe 0 uprobe:/bin/bash:readline -> uprobe readline line 1 stack reads=arg0
  @[ustack(0:u32):ustack] <- count()  @1
  @p[ustack(3:u32):ustack(perf, 3), kstack(0:u32):stack(raw)] <- count()  @2
  emit printf 1 (usym(arg0:u64):usym, kstack(2:u32):stack(2))  @3
probe 1 uretprobe:/bin/bash:readline -> uretprobe readline line 4
  @f[usym(_ip:u64):usym] <- count()  @4
"""
    assert [sorted(p.stack_limits) for p in prog.probes] == [[2, 3], []]


def test_func_in_a_uretprobe_is_the_probed_function():
    """bpftrace 0.27 (a default build): func in an exact-name uretprobe is the
    probed function's name; in a wildcard, still where it returns to."""
    prog = lower('uretprobe:/bin/bash:readline { @f[func] = count(); }')
    assert '@f["readline":char[16]] <- count()' in dump(prog)
    prog = lower('uretprobe:/bin/bash:readl* { @f[func] = count(); }')
    assert "usym(_ip:u64):usym" in dump(prog)


def test_limited_stacks_have_maps_of_their_own():
    """ustack(3) and kstack(2) come from stack maps of that depth, so stacks
    alike in their first frames are one key; 127 frames is the full map."""
    src = ('uprobe:/bin/bash:readline { @a[ustack(3)] = count(); @b[kstack(perf, 2)] = count();\n'
           '  @c[ustack(127)] = count(); @d[usym(arg0)] = count(); }')
    generated = driver.compile_source(src, "tool.bt", driver.Options()).generated
    bpf = generated.bpf_c
    assert "} plyc_stacks_2 SEC(\".maps\");" in bpf and "} plyc_stacks_3 SEC(\".maps\");" in bpf
    assert "__uint(value_size, 3 * sizeof(__u64));" in bpf
    assert "plyc_stacks_127" not in bpf
    assert "plyc_ustackid(ctx, &plyc_stacks_3)" in bpf
    assert "plyc_stackid_in(ctx, &plyc_stacks_2, 0)" in bpf
    assert "plyc_ustackid(ctx, &plyc_stacks)" in bpf
    # the loader's key types: PLYC_K_USTACK, the limit and the mode in width
    loader = generated.loader_c
    assert "{ { PLYC_K_USTACK, 8, 1, 3, 0, NULL }, 0, NULL }" in loader
    assert "{ { PLYC_K_STACK, 8, 1, 258, 0, NULL }, 0, NULL }" in loader     # 2 | perf << 8
    assert "{ { PLYC_K_USYM, 16, 0, 0, 0, NULL }, 0, NULL }" in loader


ERRORS = [
    ("interval:s:1 { @[ustack] = count(); }",
     "tool.bt:1:18: error: interval probes have no stack for ustack()\n"
     "interval:s:1 { @[ustack] = count(); }\n"
     "                 ^~~~~~"),
    ("uprobe:/bin/sh:main { @a[ustack(fast)] = count(); @b[kstack(0)] = count(); }",
     "tool.bt:1:33: error: ustack()'s mode is one of bpftrace, perf, raw\n"
     "uprobe:/bin/sh:main { @a[ustack(fast)] = count(); @b[kstack(0)] = count(); }\n"
     "                                ^~~~\n"
     "tool.bt:1:61: error: kstack() keeps 1 to 127 frames, not 0\n"
     "uprobe:/bin/sh:main { @a[ustack(fast)] = count(); @b[kstack(0)] = count(); }\n"
     "                                                            ^"),
    ("uprobe:/bin/sh:main { $y = usym(comm); @z[kstack(perf, 2, 3)] = count(); }",
     "tool.bt:1:33: error: usym() needs an address, got char[16]\n"
     "uprobe:/bin/sh:main { $y = usym(comm); @z[kstack(perf, 2, 3)] = count(); }\n"
     "                                ^~~~\n"
     "tool.bt:1:43: error: kstack() takes 0 to 2 arguments, got 3\n"
     "uprobe:/bin/sh:main { $y = usym(comm); @z[kstack(perf, 2, 3)] = count(); }\n"
     "                                          ^~~~~~~~~~~~~~~~~~"),
    ("uprobe:/bin/sh:main { @[ustack] = count(); @[ustack(perf)] = count(); }",
     "tool.bt:1:46: error: @ key is ustack elsewhere, ustack(perf) here\n"
     "uprobe:/bin/sh:main { @[ustack] = count(); @[ustack(perf)] = count(); }\n"
     "                                             ^~~~~~~~~~~~"),
]


@pytest.mark.parametrize("src,message", ERRORS, ids=range(len(ERRORS)))
def test_errors(src, message):
    assert err(src) == message


def test_default_mode_and_full_depth_are_the_bare_stacks():
    """kstack() and kstack(bpftrace) are the bare kstack, ustack(bpftrace, 127)
    the bare ustack: one key type each."""
    prog = lower('uprobe:/bin/sh:main { @k[kstack] = count(); @k[kstack()] = count(); '
                 '@k[kstack(bpftrace)] = count(); @u[ustack] = count(); @u[ustack(bpftrace, 127)] = count(); }')
    assert dump(prog).splitlines()[:2] == ["map @k aggregation [stack] -> count(u64)",
                                           "map @u aggregation [ustack] -> count(u64)"]
    assert prog.probes[0].stack_limits == set()
