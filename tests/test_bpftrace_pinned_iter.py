"""bpftrace 0.27's pinned iterators (`iter:task:PIN`, providers/iterators.py,
codegen/seqprintf.py, runtime-c/providers/iter.c): the tracer pins the
iterator's link in a BPF file system and ends; a read of the pin runs the
program, whose printf() writes the text the read returns. bpftrace 0.27
cannot run iterators on this machine ("No matches for iter task"), so the
tracer is checked alone: `cat` of the pin prints the task list, the test
removes the pin. The BPF file system is one of the test's own, mounted in
a mount namespace of its own (unshare -m), so nothing shows on the host."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plyc import driver
from plyc.diag import PlycError

ROOT = Path(__file__).resolve().parent.parent
TASKS = 'iter:task:{pin} {{ printf("%s:%d\\n", ctx->task->comm, ctx->task->pid); }}\n'


def compiled(src: str):
    return driver.compile_source(src, "tool.bt", driver.Options())


def test_a_relative_pin_goes_under_sys_fs_bpf_and_printf_writes_to_the_read():
    gen = compiled(TASKS.format(pin="list")).generated
    assert '.pin = "/sys/fs/bpf/list"' in gen.loader_c
    # the kernel formats it: integers as 64 bits (cut to C's int first, as
    # bpftrace's %d prints), strings by their address
    assert 'static const char sfmt' in gen.bpf_c and '"%s:%lld\\n"' in gen.bpf_c
    assert "bpf_seq_printf(*(struct seq_file **)((void **)ctx)[0]" in gen.bpf_c
    # read after the tracer ended: no stop flag, no pacing byte, no event
    assert "plyc_stopped" not in gen.bpf_c.split('SEC("iter/task")')[1]
    assert "bpf_seq_write" not in gen.bpf_c and "plyc_event_reserve" not in gen.bpf_c.split('SEC("iter/task")')[1]
    # an iterator the tracer runs is as before
    gen = compiled(TASKS.format(pin="").replace("iter:task:", "iter:task")).generated
    assert ".pin = NULL" in gen.loader_c and "bpf_seq_write" in gen.bpf_c


def test_flags_widths_and_c_lengths_are_kept():
    gen = compiled('iter:task:/sys/fs/bpf/x { printf("%-16s %5u %x %%\\n", ctx->task->comm, '
                   'ctx->task->pid, (uint64)ctx->task->pid); }').generated
    assert '"%-16s %5llu %llx %%\\n"' in gen.bpf_c
    assert "(__u64)(__u64)((__u32)(" in gen.bpf_c


@pytest.mark.parametrize("body,message", [
    ("print(1);", "tool.bt:1:27: error: print() in a pinned iterator: its output is what a read of the pin returns"),
    ("exit();", "tool.bt:1:27: error: exit() in a pinned iterator"),
    ('printf("%p\\n", ctx);', "tool.bt:1:27: error: printf's %p of a struct bpf_iter__task * in a pinned iterator"),
    ('printf("%d %d %d %d %d %d %d %d %d %d %d %d %d\\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);',
     "tool.bt:1:27: error: a pinned iterator's printf() takes at most 12 arguments"),
])
def test_what_a_pin_cannot_show_is_refused_at_build(body, message):
    with pytest.raises(PlycError) as e:
        compiled(f"iter:task:/sys/fs/bpf/x {{ {body} }}\n")
    assert str(e.value).startswith(message), str(e.value)


def build(tmp_path: Path, pin: str) -> Path:
    (tmp_path / "pin.bt").write_text(TASKS.format(pin=pin))
    out = tmp_path / "tracer"
    subprocess.run([sys.executable, "-m", "plyc", "build", "pin.bt", "-o", str(out)], cwd=tmp_path, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    return out


def in_own_bpffs(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    """script run by sh in a mount namespace of its own, a BPF file system
    mounted at $FS (tmp_path/fs); it goes with the namespace."""
    if not shutil.which("unshare"):
        pytest.fail("unshare (util-linux) is needed to mount a BPF file system of the test's own")
    fs = tmp_path / "fs"
    fs.mkdir()
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           f"mount -t bpf bpf {fs} && {script}"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "FS": str(fs)})


@pytest.mark.bpf
def test_cat_of_the_pin_prints_the_task_list(tmp_path):
    out = build(tmp_path, str(tmp_path / "fs" / "tasks"))
    proc = in_own_bpffs(tmp_path, f'{out} > "$FS.out" 2> "$FS.err" && echo "tracer $?" && '
                                  f'cat "$FS/tasks" && echo "end sh:$$" && rm "$FS/tasks" && ls -A "$FS"')
    assert proc.returncode == 0, proc.stderr + (tmp_path / "fs.err").read_text()
    assert (tmp_path / "fs.out").read_text().startswith(f"Program pinned to {tmp_path}/fs/tasks\n")
    lines = proc.stdout.splitlines()
    assert lines[0] == "tracer 0"
    end = next(i for i, x in enumerate(lines) if x.startswith("end sh:"))
    tasks, me = lines[1:end], lines[end][len("end "):]
    # every task as comm:pid, the kernel's threads and the reading cat among them
    assert all(re.fullmatch(r".{1,15}:\d+", t) for t in tasks), tasks[:5]
    assert "kthreadd:2" in tasks and any(t.startswith("cat:") for t in tasks) and len(tasks) > 20
    assert me in tasks, me      # the shell that ran cat
    # removed by the test: the file system holds only its own debug files
    assert "tasks" not in lines[end + 1:]


@pytest.mark.bpf
def test_a_pin_that_exists_or_a_folder_that_is_no_bpffs_are_clear_errors(tmp_path):
    out = build(tmp_path, str(tmp_path / "fs" / "tasks"))
    proc = in_own_bpffs(tmp_path, f'{out} >/dev/null 2>&1; {out}; echo "second $?"; rm "$FS/tasks"')
    assert f"cannot pin the iterator at {tmp_path}/fs/tasks: it exists (remove it, or name another pin)" \
        in proc.stderr
    assert "second 1" in proc.stdout
    plain = build(tmp_path, str(tmp_path / "plain" / "tasks"))
    (tmp_path / "plain").mkdir()
    proc = subprocess.run([str(plain)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert (f"cannot pin the iterator at {tmp_path}/plain/tasks: {tmp_path}/plain is not a BPF file system "
            f"(mount one: mount -t bpf bpf {tmp_path}/plain)") in proc.stderr
    assert not (tmp_path / "plain" / "tasks").exists()
