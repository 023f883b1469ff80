"""The tracer against a hostile environment (issue 22): a reader that goes
away (`| head`), output that cannot be written (a full disk, /dev/full, a
closed stdout), -o's file left alone until tracing starts, strict -d, -p
and $N, exit() statuses outside 0-255, SIGHUP and signal storms."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import builds
from test_tracer import build, plant_refused, processes_with, run, sleep_token


def bare(stderr):
    """stderr without bpftrace 0.27's banner, `Attached N probes`, which a
    .bt tracer writes there first (as 0.27 does)."""
    if isinstance(stderr, bytes):
        return re.sub(rb"\AAttached \d+ probes?\n", b"", stderr)
    return re.sub(r"\AAttached \d+ probes?\n", "", stderr)

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.bpf

TICK_PLY = 'interval:5ms { @n = count(); printf("tick %d\\n", 1); }\n'
TICK_BT = 'interval:ms:5 { @n = count(); printf("tick %d\\n", 1); }\n'
ENOSPC = "writing output: No space left on device"


def build_bt(tmp_path, script, name="b"):
    return build(tmp_path, script, name=name, suffix=".bt")


def tracer_of(tmp_path, style):
    return build(tmp_path, TICK_PLY) if style == "ply" else build_bt(tmp_path, TICK_BT)


def wait_gone(token, seconds=3.0):
    deadline = time.monotonic() + seconds
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    return processes_with(token)


# --- a reader that goes away ------------------------------------------------

@pytest.mark.parametrize("style, fmt", [("ply", "text"), ("ply", "json"), ("bt", "text"), ("bt", "json")])
def test_a_closed_pipe_ends_the_run_and_the_child(tmp_path, style, fmt):
    """`tracer | head -1`: the tracer ends at once with 0 (it used to ignore
    EPIPE and run forever), and the -c command's group goes with it."""
    tracer = tracer_of(tmp_path, style)
    token = sleep_token()
    proc = subprocess.Popen([tracer, "-f", fmt, "-c", f"sleep {token}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        # an event's line (bpftrace's banner comes before the command runs)
        line = proc.stdout.readline()
        while line and b"tick" not in line:
            line = proc.stdout.readline()
        assert line, proc.stderr.read()
        assert processes_with(token), "the command never ran"
        proc.stdout.close()
        start = time.monotonic()
        assert proc.wait(timeout=5) == 0
        assert time.monotonic() - start < 2
        assert bare(proc.stderr.read()) == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert wait_gone(token) == []


def test_an_argdist_report_under_head(tmp_path):
    """argdist's periodic report (runtime-c/output/bccreport.c) to a reader that took
    one line: the next report ends the run."""
    out = tmp_path / "ad"
    proc = builds.run([sys.executable, "-m", "plyc", "argdist", "-C", "t:raw_syscalls:sys_enter():u32:args->id",
                       "-i", "1", "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    start = time.monotonic()
    shell = subprocess.run(["sh", "-c", f'{out} | head -1; echo "status ${{?}}"; exit 0'],
                           capture_output=True, text=True, timeout=20)
    # sh's $? is head's; the tracer's own status: run again with a pipe we close
    assert shell.stdout.count("\n") == 2 and shell.stdout.startswith("["), shell.stdout
    assert time.monotonic() - start < 6
    p = subprocess.Popen([str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().startswith(b"[")
    p.stdout.close()
    assert p.wait(timeout=5) == 0
    assert p.stderr.read() == b""


def test_the_metrics_socket_is_not_the_output(tmp_path):
    """A scraper that hangs up mid-answer is no closed output: tracing goes on."""
    import socket
    tracer = build(tmp_path, TICK_PLY)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([tracer, "-d", "2", "--metrics", f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        proc.stdout.readline()
        for _ in range(20):
            c = socket.create_connection(("127.0.0.1", port), timeout=2)
            c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            c.close()   # a reset, not a polite close
        stdout, stderr = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert stdout.count(b"tick") > 100


def test_sigint_with_a_reader_that_does_not_read(tmp_path):
    """`tracer | less`, paused: the pipe is full and the tracer blocked in a
    write. SIGINT must still end it, saying that the output was cut."""
    tracer = build(tmp_path, 'interval:1ms { printf("%s\\n", "' + "x" * 200 + '"); }\n')
    r, w = os.pipe()
    try:
        proc = subprocess.Popen([tracer], stdout=w, stderr=subprocess.PIPE, text=True)
        os.close(w)
        time.sleep(1.0)   # 64 KiB of pipe: full after ~0.3 s
        proc.send_signal(signal.SIGINT)
        try:
            stderr = proc.communicate(timeout=5)[1]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        os.close(r)
    assert proc.returncode == 1
    assert stderr == "t: error: writing output: stopped by a signal while the reader was not reading\n"


# --- output that cannot be written ------------------------------------------

@pytest.mark.parametrize("style, fmt", [("ply", "text"), ("ply", "json"), ("bt", "text"), ("bt", "json")])
def test_dev_full_is_a_write_error(tmp_path, style, fmt):
    tracer = tracer_of(tmp_path, style)
    name = Path(tracer).name
    with open("/dev/full", "w") as full:
        start = time.monotonic()
        out = subprocess.run([tracer, "-f", fmt, "-d", "5"], stdout=full, stderr=subprocess.PIPE, text=True,
                             timeout=20)
    assert out.returncode == 1
    assert bare(out.stderr) == f"{name}: error: {ENOSPC}\n"
    assert time.monotonic() - start < 3   # the first failed write ends the run
    out = run(tracer, "-f", fmt, "-d", "0.3", "-o", "/dev/full")
    assert (out.returncode, bare(out.stderr), out.stdout) == (1, f"{name}: error: {ENOSPC}\n", "")


def test_a_printf_field_past_int_max_is_an_error(tmp_path):
    """A field whose text passes INT_MAX bytes (a sign and 2^31 - 1 digits)
    is no text printf can write (EOVERFLOW): the tracer stops and says so,
    exit 1, where it once printed what came after it and exited 0 (gcc refused
    this one at link time: the width is a `*` argument now). The output is
    /dev/null: the C library writes the 2 GB before it gives up."""
    tracer = build(tmp_path, 'BEGIN { printf("a|%+.2147483647d|\\n", 1); printf("after\\n"); exit(0); }\n'
                   'END { printf("end\\n"); }\n')
    out = run(tracer, "-o", "/dev/null", timeout=120)
    name = Path(tracer).name
    assert (out.returncode, out.stderr) == (1, f"{name}: error: formatting output: Value too large for defined data type\n")


def test_a_closed_stdout_is_an_error_before_tracing(tmp_path):
    tracer = build(tmp_path, TICK_PLY)
    out = subprocess.run(f"{tracer} -d 5 >&-", shell=True, capture_output=True, text=True, timeout=20)
    assert out.returncode == 1
    assert out.stderr == "t: error: writing output: Bad file descriptor (standard output is closed)\n"
    # with -o, stdout is not needed
    dest = tmp_path / "o.txt"
    out = subprocess.run(f"{tracer} -d 0.2 -o {dest} >&-", shell=True, capture_output=True, text=True,
                         timeout=20)
    assert out.returncode == 0, out.stderr
    assert dest.read_text().startswith("tick 1\n")


@pytest.mark.parametrize("opt", ["--version", "-h"])
def test_version_and_help_check_their_write(tmp_path, opt):
    tracer = build(tmp_path, TICK_PLY)
    with open("/dev/full", "w") as full:
        out = subprocess.run([tracer, opt], stdout=full, stderr=subprocess.PIPE, text=True, timeout=10)
    assert (out.returncode, out.stderr) == (1, f"t: error: {ENOSPC}\n")
    out = subprocess.run(f"{tracer} {opt} >&-", shell=True, capture_output=True, text=True, timeout=10)
    assert (out.returncode, out.stderr) == (1, "t: error: writing output: Bad file descriptor\n")


def test_the_perf_buffer_path_stops_too(tmp_path):
    """Kernels without a BPF ring buffer: the records come through per-CPU
    perf buffers, merged (runtime-c/io/events.c); a failed write ends it too."""
    tracer = build(tmp_path, TICK_PLY)
    env = dict(os.environ, PLYC_NO_RINGBUF="1")
    with open("/dev/full", "w") as full:
        out = subprocess.run([tracer, "-d", "5"], stdout=full, stderr=subprocess.PIPE, text=True, env=env,
                             timeout=20)
    assert (out.returncode, out.stderr) == (1, f"t: error: {ENOSPC}\n")
    proc = subprocess.Popen([tracer], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline() == b"tick 1\n"
        proc.stdout.close()
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=True)


@pytest.mark.parametrize("style", ["ply", "bt"])
def test_o_on_a_full_filesystem(tmp_path, small_tmpfs, style):
    script = ('interval:1ms { printf("%s\\n", "' + "x" * 200 + '"); }\n')
    tracer = build(tmp_path, script) if style == "ply" else build_bt(tmp_path, script.replace("1ms", "ms:1"))
    dest = small_tmpfs / "out.txt"
    start = time.monotonic()
    out = run(tracer, "-d", "20", "-o", str(dest))
    assert out.returncode == 1
    assert bare(out.stderr) == f"{Path(tracer).name}: error: {ENOSPC}\n"
    assert time.monotonic() - start < 10
    assert dest.stat().st_size > 32768


# --- -o's file untouched until tracing starts --------------------------------

@pytest.mark.parametrize("args, why", [
    (["-p", "12abc"], "-p takes a process id, not '12abc'"),
    (["-p", "999999999"], "-p 999999999: no such process"),
    (["--btf", "/nonexistent/btf"], "--btf /nonexistent/btf: No such file or directory"),
    (["-c", "/nonexistent/cmd"], "cannot run '/nonexistent/cmd': No such file or directory"),
    (["-d", "nan"], "-d takes a number of seconds more than 0, not 'nan'"),
])
def test_o_file_untouched_on_a_refused_run(tmp_path, args, why):
    tracer = build(tmp_path, TICK_PLY)
    dest = tmp_path / "keep.txt"
    dest.write_text("the user's\n")
    out = run(tracer, "-o", str(dest), *args)
    assert out.returncode == 1
    assert out.stderr.startswith(f"t: error: {why}"), out.stderr
    assert dest.read_text() == "the user's\n"


def test_o_that_cannot_be_opened(tmp_path):
    """Told before the load (-v would show libbpf's messages of one)."""
    tracer = build(tmp_path, TICK_PLY)
    (tmp_path / "file").write_text("")
    for dest, why in [(str(tmp_path), "Is a directory"), (f"{tmp_path}/no/x", "No such file or directory"),
                      (f"{tmp_path}/file/x", "Not a directory")]:
        out = run(tracer, "-v", "-o", dest, "-d", "0.2")
        assert (out.returncode, out.stdout) == (1, "")
        assert out.stderr == f"t: error: cannot open {dest}: {why}\n"
    out = run(tracer, "-o", "", "-d", "0.2")
    assert (out.returncode, out.stderr) == (1, "t: error: -o takes a file name, not ''\n")


def test_o_in_a_folder_others_can_write(tmp_path):
    """The tracer runs as root: in a folder another user can write (/tmp),
    -o neither follows a link nor writes a file another user owns there
    (they could have planted it: `ln -s /etc/shadow /tmp/out.txt`), as the
    kernel's protected_symlinks and protected_regular would refuse them
    where they are on; told before the load. Was: followed and truncated.
    A link or file of the tracer's user there, a link in a folder only
    root writes (/dev/stdout), and a new file are written as before."""
    tracer = build(tmp_path, TICK_PLY)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    theirs_link, theirs_file = shared / "link", shared / "file"
    theirs_link.symlink_to(victim)
    os.lchown(theirs_link, 65534, 65534)
    theirs_file.write_text("theirs\n")
    os.chown(theirs_file, 65534, 65534)
    # a hard link to a file of root's, planted where protected_hardlinks is off
    # (was: the name is root's file, so it was emptied)
    hard = shared / "hard"
    os.link(victim, hard)
    for dest, why in ((theirs_link, "a link in a folder other users can write: not followed"),
                      (theirs_file, "another user's file in a folder other users can write"),
                      (hard, "a file with other names (hard links) in a folder other users can write")):
        out = run(tracer, "-o", str(dest), "-d", "0.2")
        assert (out.returncode, out.stdout) == (1, ""), out
        assert out.stderr == f"t: error: cannot open {dest}: {why}\n", out.stderr
    assert victim.read_text() == "keep\n" and theirs_file.read_text() == "theirs\n"
    mine = shared / "mine"
    mine.symlink_to(tmp_path / "mine-target")
    for dest in (mine, shared / "new.txt"):
        out = run(tracer, "-o", str(dest), "-d", "0.3")
        assert out.returncode == 0, out.stderr
    assert "tick 1" in (tmp_path / "mine-target").read_text() and "tick 1" in (shared / "new.txt").read_text()
    out = run(tracer, "-o", "/dev/stdout", "-d", "0.3")
    assert out.returncode == 0 and "tick 1" in out.stdout, out.stderr


def test_o_file_untouched_when_not_root(tmp_path):
    tracer = build(tmp_path, TICK_PLY)
    os.chmod(tmp_path, 0o755)
    dest = tmp_path / "keep.txt"
    dest.write_text("the user's\n")
    os.chmod(dest, 0o666)
    out = run("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", tracer, "-d", "1", "-o", str(dest))
    assert out.returncode == 1
    assert "needs root" in out.stderr
    assert dest.read_text() == "the user's\n"


def test_o_file_untouched_by_a_verifier_rejection(tmp_path):
    """The slowest refusal, after the whole load: a program planted as in
    test_tracer's test_a_verifier_rejection_names_the_script_line."""
    tracer = plant_refused(tmp_path, 'tracepoint:syscalls/sys_enter_getppid { @n = count(); }\n', 1)
    dest = tmp_path / "keep.txt"
    dest.write_text("the user's\n")
    out = run(tracer, "-o", str(dest), "-d", "1")
    assert out.returncode == 1
    assert "the kernel's verifier rejected the probe" in out.stderr, out.stderr
    assert dest.read_text() == "the user's\n"


def test_o_file_is_not_inherited_by_the_command(tmp_path):
    tracer = build(tmp_path, 'END { printf("end\\n"); }\n')
    dest = tmp_path / "out.txt"
    out = run(tracer, "-o", str(dest), "-c", "sh -c 'ls -l /proc/$$/fd'")
    assert out.returncode == 0, out.stderr
    assert "->" in out.stdout and str(dest) not in out.stdout, out.stdout
    assert dest.read_text() == "end\n"


# --- strict arguments -----------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e999", "abc", "", "5s"])
def test_d_must_be_finite_and_positive(tmp_path, value):
    tracer = build(tmp_path, TICK_PLY)
    out = run(tracer, "-d", value)
    assert out.returncode == 1
    assert out.stderr == f"t: error: -d takes a number of seconds more than 0, not '{value}'\n"
    assert out.stdout == ""


def test_d_takes_fractions(tmp_path):
    tracer = build(tmp_path, TICK_PLY)
    start = time.monotonic()
    out = run(tracer, "-d", "0.25")
    assert out.returncode == 0, out.stderr
    assert 0.2 < time.monotonic() - start < 3


@pytest.mark.parametrize("value, why", [
    ("12abc", "-p takes a process id, not '12abc'"),
    ("-1", "-p takes a process id, not '-1'"),
    ("0", "-p takes a process id, not '0'"),
    ("+5", "-p takes a process id, not '+5'"),
    (" 5", "-p takes a process id, not ' 5'"),
    ("", "-p takes a process id, not ''"),
    # once wrapped to -1 (kill(-1, 0) succeeds: never stopped) and to 1
    ("4294967295", "-p 4294967295: no such process (the kernel's pids go up to its pid_max)"),
    ("4294967297", "-p 4294967297: no such process (the kernel's pids go up to its pid_max)"),
    ("99999999999999999999", "-p 99999999999999999999: no such process (the kernel's pids go up to its pid_max)"),
])
def test_p_must_be_a_pid(tmp_path, value, why):
    tracer = build(tmp_path, TICK_PLY)
    out = run(tracer, "-p", value, timeout=10)
    assert out.returncode == 1
    assert out.stderr == f"t: error: {why}\n"


ARG_PLY = 'BEGIN { printf("%d %s\\n", $1, str($2)); exit(0); }\n'
ARG_BT = 'BEGIN { printf("%lld %s\\n", $1, str($2)); exit(); }\n'


@pytest.mark.parametrize("style", ["ply", "bt"])
def test_numeric_arguments_are_parsed_strictly(tmp_path, style):
    tracer = build(tmp_path, ARG_PLY) if style == "ply" else build_bt(tmp_path, ARG_BT)
    name = Path(tracer).name
    for good, shown in [("12", "12"), ("0x10", "16"), ("-5", "-5"), ("9223372036854775807", "9223372036854775807")]:
        out = run(tracer, "--", good, "abc")
        assert out.returncode == 0, out.stderr
        assert f"{shown} abc\n" in out.stdout
    for bad in ["abc", "12abc", "", " 7", "1.5"]:
        out = run(tracer, "--", bad, "x")
        assert out.returncode == 1
        assert out.stderr == f"{name}: error: $1 is used as a number but given '{bad}'; try str($1)\n"
        assert out.stdout == ""
    out = run(tracer, "99999999999999999999", "x")
    assert out.returncode == 1
    assert out.stderr == (f"{name}: error: $1 is used as a number but given '99999999999999999999', "
                          "out of range of a 64-bit integer\n")
    # up to 2^64 - 1 only where the script prints it by %lu/%lx alone
    out = run(tracer, "0xffffffffffffffff", "x")
    assert out.returncode == 1
    assert out.stderr == (f"{name}: error: $1 is used as a number but given '0xffffffffffffffff', "
                          "out of range of a 64-bit signed integer (one printed by %lu or %lx alone may be "
                          "up to 2^64 - 1)\n")


def test_string_arguments_are_any_text(tmp_path):
    tracer = build(tmp_path, 'BEGIN { printf("%s\\n", str($1)); exit(0); }\n')
    out = run(tracer, "abc")
    assert (out.returncode, out.stdout) == (0, "abc\n"), out.stderr


@pytest.mark.parametrize("value, status, warned", [
    ("7", 7, False), ("255", 255, False), ("0", 0, False),
    ("256", 255, True), ("300", 255, True), ("-1", 255, True), ("4294967296", 255, True),
])
def test_exit_status_outside_0_255_is_told(tmp_path, value, status, warned):
    tracer = build(tmp_path, 'BEGIN { exit($1); }\n')
    out = run(tracer, "--", value)
    assert out.returncode == status, out.stderr
    warning = f"t: warning: exit({value}): an exit status is 0 to 255; exiting with 255\n"
    assert out.stderr == (warning if warned else "")


# --- signals ------------------------------------------------------------------

def test_sighup_is_like_sigterm(tmp_path):
    tracer = build(tmp_path, 'interval:10ms { @ticks = count(); }\nEND { printf("bye\\n"); }\n')
    token = sleep_token()
    proc = subprocess.Popen([tracer, "-c", f"sleep {token}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 10
    while not processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)   # a few ticks counted
    proc.send_signal(signal.SIGHUP)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert stdout.startswith("bye\n\n@ticks: ")
    assert wait_gone(token) == []


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.4])
def test_signals_in_a_row_at_any_time_leave_nothing(tmp_path, delay):
    """SIGHUP, SIGINT, SIGTERM, SIGHUP, SIGINT close together, from start-up on: a
    clean exit with nothing left (the -c child, tracefs probe entries)."""
    tracer = build(tmp_path, 'interval:10ms { @ticks = count(); }\nEND { printf("bye\\n"); }\n')
    tracefs = Path("/sys/kernel/tracing")
    before = {f: (tracefs / f).read_text() for f in ("kprobe_events", "uprobe_events") if (tracefs / f).exists()}
    token = sleep_token()
    proc = subprocess.Popen([tracer, "-c", f"sleep {token}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    time.sleep(delay)
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        proc.send_signal(sig)
        time.sleep(0.002)
    stdout, stderr = proc.communicate(timeout=15)
    # before its handlers are in place (its first milliseconds) a signal's
    # default ends it, with no output
    assert proc.returncode == 0 or (delay < 0.1 and proc.returncode == -signal.SIGHUP), stderr
    assert "error" not in stderr, stderr
    if proc.returncode == 0:
        assert stdout.startswith("bye\n"), stdout
    assert wait_gone(token) == []
    assert {f: (tracefs / f).read_text() for f in before} == before
