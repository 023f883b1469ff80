"""What the tracer does on kernels before 5.10 and 5.5, forced on this one:
BEGIN/END run by a uprobe on the tracer itself instead of BPF_PROG_TEST_RUN
(PLYC_NO_TEST_RUN=1), and memory read with bpf_probe_read(_str) instead of
bpf_probe_read_kernel/_user(_str) (PLYC_NO_PROBE_READ_KERNEL=1). Each test
checks that the fallback is really taken: what -v says, and the programs the
kernel holds (their type, and the helpers bpftool finds in them). Every
runtime directive test also runs with both (test_runtime.py's OLD_KERNEL_ENV)."""
import os
import re
import shutil
import subprocess
import time

import pytest

from bench.fdinfo import bpf_fdinfo
from test_tracer import build


pytestmark = pytest.mark.bpf

NO_TEST_RUN = {"PLYC_NO_TEST_RUN": "1"}
NO_READ_KERNEL = {"PLYC_NO_PROBE_READ_KERNEL": "1"}
# enum bpf_prog_type
KPROBE, TRACEPOINT, RAW_TRACEPOINT = 2, 5, 17


def run(tracer, *args, env=None):
    return subprocess.run([tracer, *args], capture_output=True, text=True, timeout=30,
                          env={**os.environ, **(env or {})})


ORDER = r'''
BEGIN { printf("BEGIN 1 %s\n", comm); @order[1] = count(); }
BEGIN { printf("BEGIN 2\n"); }
tracepoint:syscalls/sys_enter_getppid / comm == "plyc-work" / { @calls = count(); }
END { printf("END 1\n"); }
END { printf("END 2\n"); }
'''
ORDER_OUT = "BEGIN 1 t\nBEGIN 2\nEND 1\nEND 2\n\n@order:\n{ 1 }: 1\n\n@calls: 4\n"


@pytest.mark.parametrize("env, how", [
    (NO_TEST_RUN, r"BEGIN and END run by a uprobe on the tracer \(offset 0x[0-9a-f]+ of /proc/self/exe\): "
                  "PLYC_NO_TEST_RUN"),
    ({}, "BEGIN and END run by BPF_PROG_TEST_RUN"),
])
def test_begin_end_order(tmp_path, workload, env, how):
    """Each BEGIN once, in order, in the tracer's task, before the probes;
    each END once after them; the same output either way."""
    tracer = build(tmp_path, ORDER)
    out = run(tracer, "-v", "-c", f"{workload} getppid 4", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ORDER_OUT
    assert re.search(rf"^t: {how}$", out.stderr, re.M), out.stderr


def test_exit_in_begin_by_uprobe(tmp_path, workload):
    tracer = build(tmp_path, 'BEGIN { printf("go\\n"); exit(4); }\nEND { printf("end\\n"); }\n'
                             'tracepoint:syscalls/sys_enter_getppid { @n = count(); }\n')
    start = time.monotonic()
    out = run(tracer, "-c", f"exec {workload} sleep 5000", env=NO_TEST_RUN)
    assert out.returncode == 4, out.stderr
    assert out.stdout == "go\nend\n"
    assert time.monotonic() - start < 5


def held_programs(pid):
    """(type, id) of the BPF programs process pid holds, from its fdinfo."""
    return sorted({(int(info["prog_type"]), int(info["prog_id"])) for info in bpf_fdinfo(pid, "prog")})


def programs_while_running(tracer, args, env, want):
    """The tracer's programs (type and the helpers each calls, from bpftool's
    dump of what the kernel holds) once it holds `want` of them."""
    proc = subprocess.Popen([tracer, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 15
        while len(progs := held_programs(proc.pid)) < want and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(progs) == want, progs
        dumps = []
        for ptype, pid in progs:
            xl = subprocess.run(["bpftool", "prog", "dump", "xlated", "id", str(pid)], capture_output=True,
                                text=True, timeout=30)
            assert xl.returncode == 0, xl.stderr
            dumps.append((ptype, set(re.findall(r"call (bpf_\w+)#", xl.stdout))))
        return dumps
    finally:
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err


READS = r'''
BEGIN { printf("begin\n"); }
tracepoint:syscalls/sys_enter_openat / pid == $target / { @[str(data->filename)] = count(); }
usdt:{usdt}:plyctest:tick { @t[arg0] = count(); }
END { printf("end\n"); }
'''

NEW_READS = {"bpf_probe_read_kernel", "bpf_probe_read_user", "bpf_probe_read_kernel_str",
             "bpf_probe_read_user_str"}


@pytest.mark.skipif(not shutil.which("bpftool"), reason="this machine has no bpftool")
def test_loaded_programs_use_the_old_helpers(tmp_path, usdt_prog):
    """With both forced: BEGIN and END are uprobe (kprobe-type) programs, and
    no program calls a _kernel or _user read helper, not even libbpf's
    bpf_usdt_arg (a subprogram); without, the new ones are there."""
    tracer = build(tmp_path, READS.replace("{usdt}", usdt_prog))
    args = ["-c", "sleep 1"]
    old = programs_while_running(tracer, args, {**NO_TEST_RUN, **NO_READ_KERNEL}, want=4)
    assert sorted(t for t, _ in old) == [KPROBE, KPROBE, KPROBE, TRACEPOINT]
    called = set().union(*(h for _, h in old))
    assert not called & NEW_READS, called
    assert {"bpf_probe_read_compat", "bpf_probe_read_compat_str"} <= called, called

    new = programs_while_running(tracer, args, {}, want=4)
    assert sorted(t for t, _ in new) == [KPROBE, TRACEPOINT, RAW_TRACEPOINT, RAW_TRACEPOINT]
    called = set().union(*(h for _, h in new))
    assert "bpf_probe_read_compat" not in called and "bpf_probe_read_compat_str" not in called, called
    assert {"bpf_probe_read_user_str", "bpf_probe_read_user"} <= called, called


def test_verbose_names_the_read_helpers(tmp_path, workload):
    tracer = build(tmp_path, 'tracepoint:syscalls/sys_enter_openat / pid == $target / '
                             '{ @[str(data->filename)] = count(); }\n')
    out = run(tracer, "-v", "-c", f"{workload} getppid 1", env=NO_READ_KERNEL)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^t: memory read with bpf_probe_read and bpf_probe_read_str \(\d+ calls? rewritten\): "
                     r"PLYC_NO_PROBE_READ_KERNEL$", out.stderr, re.M), out.stderr
    out = run(tracer, "-v", "-c", f"{workload} getppid 1")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^t: memory read with bpf_probe_read_kernel and _user \(and _str\)$", out.stderr,
                     re.M), out.stderr
