"""`pid` and `tid` in a PID namespace. bpftrace 0.27 numbers them as the
tracer's own namespace does (`pid(init)`, `tid(init)`: the initial one's),
and so does plyc's tracer (runtime-c/load/pidns.c). Each tracer runs as
process 1 of a namespace of its own (`unshare --pid --fork --mount-proc`),
as in a container, beside plyc's run in the initial namespace. A -p PID
is the namespace's (bpftrace's and argdist's filters); argdist's $PID,
as bcc's, stays the initial namespace's."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import builds

pytestmark = pytest.mark.bpf

ROOT = Path(__file__).resolve().parent.parent
IDS = ('BEGIN { printf("%d %d %d %d %d %d\\n", pid, tid, pid(curr_ns), tid(curr_ns), pid(init), tid(init)); '
       'exit(); }\n')
# -p's PID is the namespace's: the filter compares it with the writer's id there
WRITES = 'tracepoint:syscalls:sys_enter_write { printf("%d %d %d\\n", pid, tid, pid(init)); exit(); }\n'
# cpid (-c's child, as the tracer's fork() numbers it) meets pid in one namespace
CHILD = 'tracepoint:syscalls:sys_enter_execve /pid == cpid/ { printf("%d %d %d\\n", pid, cpid, pid(init)); exit(); }\n'


def build(tmp_path, name: str, text: str) -> Path:
    src, out = tmp_path / f"{name}.bt", tmp_path / name
    src.write_text(text)
    proc = builds.run([sys.executable, "-m", "plyc", "build", str(src), "-o", str(out)], cwd=ROOT,
                      capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def in_pidns(shell: str, *args) -> list:
    """argv running `shell` (sh -c, with args) as process 1 of a new PID
    namespace with its own /proc; its ids, as the lines of numbers it printed."""
    return ["timeout", "120", "unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", shell, "sh", *map(str, args)]


def ids(argv) -> list:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    rows = [[int(w) for w in line.split()] for line in proc.stdout.splitlines() if re.fullmatch(r"[\d ]+", line)]
    assert len(rows) == 1, (proc.stdout, proc.stderr)
    return rows[0]


def both(tmp_path, bpftrace27, name: str, text: str, shell: str, flags=()) -> tuple:
    """The ids plyc's tracer and 0.27 print run the same way in a namespace
    (`shell` execs "$@" as the tracer's argv: the tracer's flags, then the
    script or its tracer)."""
    tracer = build(tmp_path, name, text)
    script = tmp_path / f"{name}.bt"
    mine = ids(in_pidns(shell, tracer, *flags))
    theirs = ids(in_pidns(shell, *bpftrace27([*flags, script], cwd=tmp_path)))
    return mine, theirs


def test_pid_and_tid_are_the_namespace_s_and_init_the_host_s(tmp_path, bpftrace27):
    mine, theirs = both(tmp_path, bpftrace27, "ids", IDS, 'exec "$@"')
    # process 1 of its namespace, a host id beside it
    for row in (mine, theirs):
        assert row[:4] == [1, 1, 1, 1] and row[4] == row[5] > 1, (mine, theirs)


def test_without_the_helper_the_host_s_ids_are_said_to_be_so(tmp_path):
    # a kernel before 5.7 (PLYC_NO_HELPER: taken as lacking): the plain helper's branch, and a warning
    tracer = build(tmp_path, "ids", IDS)
    argv = ["env", "PLYC_NO_HELPER=bpf_get_ns_current_pid_tgid", *in_pidns('exec "$@"', tracer)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "warning: pid, tid and -p PID are the initial PID namespace's, not this one's: the kernel lacks " \
        "bpf_get_ns_current_pid_tgid (Linux 5.7)" in proc.stderr, proc.stderr
    row = [[int(w) for w in line.split()] for line in proc.stdout.splitlines() if re.fullmatch(r"[\d ]+", line)]
    assert len(row) == 1 and row[0][0] > 1 and row[0] == [row[0][0]] * 6, (proc.stdout, proc.stderr)


def test_p_filters_on_the_pid_the_namespace_gives(tmp_path, bpftrace27):
    # the writer is process 2 there (@PID@ in the argv: its id): a filter
    # comparing host ids never matches
    shell = ('yes > /dev/null & p=$!; for a; do shift; [ "$a" = @PID@ ] && a=$p; set -- "$@" "$a"; done; '
             'exec "$@"')
    mine, theirs = both(tmp_path, bpftrace27, "writes", WRITES, shell, flags=("-p", "@PID@"))
    for row in (mine, theirs):
        assert row[0] == row[1] == 2 and row[2] > 2, (mine, theirs)


def test_cpid_and_pid_compare_in_one_namespace(tmp_path, bpftrace27):
    mine, theirs = both(tmp_path, bpftrace27, "child", CHILD, 'exec "$@"', flags=("-c", "/bin/true"))
    # 0.27's chroot wrapper starts processes of its own first: its child's id is larger
    for row in (mine, theirs):
        assert row[0] == row[1] > 1 and row[2] > row[0], (mine, theirs)


def test_in_the_initial_namespace_pid_is_the_host_s(tmp_path):
    tracer = build(tmp_path, "ids", IDS)
    proc = subprocess.Popen([str(tracer)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    row = [[int(w) for w in line.split()] for line in out.splitlines() if re.fullmatch(r"[\d ]+", line)]
    assert row == [[proc.pid] * 6], (out, err)


def test_argdist_p_filters_on_the_namespace_s_pid_and_pid_stays_the_host_s(tmp_path):
    # bcc's $PID (ply's pid) is the initial namespace's; -p's PID the user's
    out = tmp_path / "writes-argdist"
    proc = builds.run([sys.executable, "-m", "plyc", "argdist", "-C", "t:syscalls:sys_enter_write():u32:$PID",
                       "-n", "1", "-i", "1", "-o", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    argv = in_pidns('yes > /dev/null & exec "$@" -p $!', out)
    run = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    counts = re.findall(r"^\s+(\d+)\s+\$PID = (\d+)$", run.stdout, re.M)
    # one writer, seen by its host id (a filter comparing host ids counts nothing)
    assert len(counts) == 1 and int(counts[0][0]) > 0 and int(counts[0][1]) > 2, run.stdout


def _libc() -> str:
    """The C library `yes` runs with (ldd's line for libc.so.6)."""
    out = subprocess.run(["ldd", "/usr/bin/yes"], capture_output=True, text=True, check=True).stdout
    return re.search(r"libc\.so\.6 => (\S+)", out).group(1)


def test_user_stacks_and_symbols_are_named_from_the_namespace_s_proc(tmp_path):
    # the tracer reads /proc/PID/maps in its own namespace (0.27's
    # pid_namespace.ustack_inside): a host id there names no process
    tracer = build(tmp_path, "ustack", f'uprobe:{_libc()}:write {{ print(ustack(1)); print(usym(reg("ip"))); exit(); }}\n')
    proc = subprocess.run(in_pidns('yes > /dev/null & exec "$1" -p $!', tracer), capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["write+0", "write"], (proc.stdout, proc.stderr)


def test_without_proc_the_namespace_is_still_the_tracer_s(tmp_path):
    # /proc unmounted in the namespace (a container without it): the ids
    # stayed the initial namespace's, printed as pid without a word; the
    # namespace is asked of the tracer's own pidfd instead (Linux 6.11)
    tracer = build(tmp_path, "ids", IDS)
    argv = ["timeout", "120", "unshare", "--pid", "--fork", "--mount", "--propagation", "private",
            "sh", "-c", 'umount -l /proc && exec "$0"', str(tracer)]
    row = ids(argv)
    assert row[:4] == [1, 1, 1, 1] and row[4] == row[5] > 1, row


def test_p_of_a_process_in_a_nested_namespace_is_said_to_match_nothing(tmp_path):
    # the kernel numbers a task only in its own namespace for the helper
    # (bpf_get_ns_current_pid_tgid): a -p filter of the tracer's namespace's
    # id never matches a task of a namespace nested in it, silently before
    tracer = build(tmp_path, "writes", WRITES)
    shell = ('unshare --pid --fork --mount-proc sh -c "yes > /dev/null" & '
             'while ! p=$(pgrep -x yes); do sleep 0.05; done; exec "$@" -d 1 -p $p')
    proc = subprocess.run(in_pidns(shell, tracer), capture_output=True, text=True, timeout=180)
    assert re.search(r"warning: -p \d+: that process is in a PID namespace of its own, nested in the tracer.s",
                     proc.stderr), (proc.stdout, proc.stderr)


def test_a_proc_of_another_namespace_is_said_and_names_no_frames(tmp_path):
    # unshare --pid without --mount-proc: /proc is the initial namespace's,
    # where the namespace's pid 2 (yes) is another process (kthreadd here;
    # elsewhere a process whose mappings would name the frames wrongly)
    tracer = build(tmp_path, "ustack", f'uprobe:{_libc()}:write {{ print(ustack(1)); print(usym(reg("ip"))); exit(); }}\n')
    argv = ["timeout", "120", "unshare", "--pid", "--fork", "sh", "-c", 'yes > /dev/null & exec "$0" -p $!', tracer]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "nested" not in proc.stderr, proc.stderr     # -p's process is the tracer's namespace's
    assert "warning: /proc is another PID namespace's than the tracer's" in proc.stderr, proc.stderr
    assert re.fullmatch(r"\s*0x[0-9a-f]+\s+0x[0-9a-f]+\s*", proc.stdout), proc.stdout
