"""The tracer's command line and its failures on the device: -p, -o, -f,
signals, not being root, lost events, full maps, and a device that lacks a
tracepoint or lays its fields out differently from the build machine."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.bpf


def build(tmp_path, script, *opts, env=None, name="t", suffix=".ply"):
    """The tracer of script (ply's, or bpftrace's with suffix=".bt")."""
    src = tmp_path / f"{name}{suffix}"
    src.write_text(script)
    out = tmp_path / name
    proc = builds.run([sys.executable, "-m", "plyc", "build", str(src), "-o", str(out), *opts],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return str(out)


def run(tracer, *args, timeout=30, **kw):
    return subprocess.run([tracer, *args], capture_output=True, text=True, timeout=timeout, **kw)


COUNT = 'tracepoint:syscalls/sys_enter_getppid / comm == "plyc-work" / { @[comm] = count(); }\n'


def test_p_pid_stops_when_the_process_exits(tmp_path, workload):
    tracer = build(tmp_path, "tracepoint:syscalls/sys_enter_getppid / pid == $target / { @n = count(); }\n"
                   "END { printf(\"target %d\\n\", $target); }\n")
    proc = subprocess.Popen([workload, "sleep", "1500"])
    start = time.monotonic()
    out = run(tracer, "-p", str(proc.pid))
    proc.wait()
    assert out.returncode == 0, out.stderr
    assert f"target {proc.pid}" in out.stdout
    assert time.monotonic() - start < 5


def test_p_missing_process(tmp_path):
    tracer = build(tmp_path, COUNT)
    out = run(tracer, "-p", "999999")
    assert out.returncode == 1
    assert "no such process" in out.stderr and out.stdout == ""


def test_o_writes_the_output_to_a_file(tmp_path, workload):
    tracer = build(tmp_path, COUNT)
    dest = tmp_path / "out.txt"
    out = run(tracer, "-o", str(dest), "-c", f"{workload} getppid 7")
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    assert dest.read_text() == "\n@:\n{ plyc-work       }: 7\n"


def test_sigterm_runs_end_and_dumps_maps(tmp_path):
    tracer = build(tmp_path, "interval:10ms { @ticks = count(); }\nEND { printf(\"bye\\n\"); }\n")
    proc = subprocess.Popen([tracer], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert stdout.startswith("bye\n\n@ticks: ")


def test_the_dump_waits_for_probes_still_running(tmp_path):
    """Every firing leaves its maps empty, so the dump at exit prints none:
    before the tracer waited (a global membarrier, an RCU grace period)
    for the probes that had started before it stopped them, about one run
    in fifteen printed a half-done firing's keys, some twice (found by
    bpftrace's suite, `json-output.time series zero`: a map cleared at the
    end of every firing printed after exit())."""
    tracer = build(tmp_path, "profile:hz:999 { for ($i : 0..1000) { @a[cpu, $i] = 1; @b[cpu, $i] = 1; }\n"
                   "  for ($i : 0..1000) { delete(@a[cpu, $i]); delete(@b[cpu, $i]); } }\n"
                   "interval:ms:20 { exit(); }\n", name="t", suffix=".bt")
    for _ in range(30):
        out = run(tracer)
        assert out.returncode == 0, out.stderr
        assert "@" not in out.stdout, out.stdout[:300]


def test_not_root_is_a_clear_error(tmp_path):
    tracer = build(tmp_path, COUNT)
    os.chmod(tmp_path, 0o755)
    out = run("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", tracer, "-d", "1")
    assert out.returncode == 1
    assert out.stderr == "t: error: tracing needs root (CAP_BPF and CAP_PERFMON); run it with sudo\n"
    assert out.stdout == ""


def test_root_without_capabilities_is_told_so(tmp_path):
    """uid 0 with no capabilities: the kernel refuses the load with EPERM."""
    tracer = build(tmp_path, COUNT)
    out = run("setpriv", "--bounding-set=-all", "--inh-caps=-all", tracer, "-d", "1")
    assert out.returncode == 1
    assert out.stderr == ("t: error: permission denied loading BPF programs: run as root "
                          "(needs CAP_BPF and CAP_PERFMON)\n")


# Eight statements before the refused one: a verifier log longer than one
# 4 KiB message, whose reason and source line are at its end.
REFUSED = "tracepoint:syscalls:sys_enter_getppid\n{\n" + "".join(
    f"\t@m{i}[comm, {v}] = count();\n" for i, v in enumerate(["pid", "kpid", "cpu", "uid", "gid"] * 2)) + \
    "\t@last[comm] = count();\n}\n"


def plant_refused(tmp_path, script, line):
    """The tracer of refused.ply (script) with a read the verifier refuses
    planted in the statement on `line`: no script makes plyc generate a
    refused program."""
    from plyc import driver
    opts = driver.Options()
    compiled = driver.compile_source(script, "refused.ply", opts, "refused")
    lines = compiled.generated.bpf_c.split("\n")
    at = next(i for i, text in enumerate(lines) if text.startswith(f"\t/* refused.ply:{line}:"))
    # on the statement's own line, so the tracer's line map stays right
    lines[at] += " { volatile __u64 bad = *(volatile __u64 *)bpf_ktime_get_ns(); (void)bad; }"
    compiled.generated.bpf_c = "\n".join(lines)
    tracer = str(tmp_path / "refused")
    driver.link(compiled, tracer, opts)
    return tracer


def test_a_verifier_rejection_names_the_script_line(tmp_path):
    """EACCES from the verifier is not a permission problem: the tracer
    names the probe, the script line and the verifier's reason."""
    tracer = plant_refused(tmp_path, REFUSED, 13)
    out = run(tracer, "-c", "true")
    assert out.returncode == 1
    assert out.stderr == ("refused.ply:13: error: the kernel's verifier rejected the probe "
                          "tracepoint:syscalls:sys_enter_getppid: R0 invalid mem access 'scalar'\n"
                          "refused: run with -v for the verifier's full log\n")
    log = run(tracer, "-v", "-c", "true").stderr
    verifier_log = log[log.index("-- BEGIN PROG LOAD LOG --"):log.index("-- END PROG LOAD LOG --")]
    assert len(verifier_log) > 4096


# The perf-buffer path of kernels without a BPF ring buffer, forced.
PERF_BUFFER = {"PLYC_NO_RINGBUF": "1"}


@pytest.mark.parametrize("output", [{}, PERF_BUFFER], ids=["ringbuf", "perfbuf"])
def test_lost_events_are_reported_and_stop_the_run(tmp_path, workload, output):
    script = ('tracepoint:syscalls/sys_enter_getppid / comm == "plyc-work" / '
              '{ printf("%s %d %d %d\\n", comm, pid, kpid, cpu); }\n')
    tracer = build(tmp_path, script, "--buffer-size", "4096")
    env = {**os.environ, **output}
    # Long enough that the tracer's check for losses (every 0.1 s) comes
    # before the command ends, on a busy machine too.
    out = run(tracer, "-c", f"{workload} getppid 5000000", env=env)
    assert out.returncode == 1
    assert "lost (output buffer full); stopping (-k keeps going)" in out.stderr
    # -k accepts the loss: the run goes on to the end and succeeds.
    kept = run(tracer, "-k", "-c", f"{workload} getppid 200000", env=env)
    assert kept.returncode == 0, kept.stderr
    assert "lost" in kept.stderr and "stopping" not in kept.stderr


def test_verbose_tells_the_output_path(tmp_path, workload):
    """-v says which buffer carries the output; PLYC_NO_RINGBUF=1 takes the
    perf-buffer path, and BEGIN's, the probes' and END's lines all arrive,
    in order, before the map dump."""
    script = ('BEGIN { printf("begin\\n"); }\n'
              'tracepoint:syscalls/sys_enter_getppid / comm == "plyc-work" / { printf("call\\n"); @ = count(); }\n'
              'END { printf("end\\n"); }\n')
    tracer = build(tmp_path, script, "--buffer-size", "65536")
    want = "begin\n" + "call\n" * 5 + "end\n\n@: 5\n"
    ring = run(tracer, "-v", "-c", f"{workload} getppid 5")
    assert ring.returncode == 0, ring.stderr
    assert "t: output: BPF ring buffer, 65536 bytes\n" in ring.stderr
    assert ring.stdout == want
    perf = run(tracer, "-v", "-c", f"{workload} getppid 5", env={**os.environ, **PERF_BUFFER})
    assert perf.returncode == 0, perf.stderr
    pages = max(1 << (n.bit_length() - 1) for n in [max(1, 65536 // os.cpu_count() // os.sysconf("SC_PAGESIZE"))])
    assert f"t: output: perf buffer, {pages} page{'s' if pages != 1 else ''} per CPU (PLYC_NO_RINGBUF is set)\n" \
        in perf.stderr
    assert perf.stdout == want


def test_a_full_map_is_reported(tmp_path, workload):
    script = 'tracepoint:syscalls/sys_enter_read / comm == "plyc-work" / { @[data->count] = count(); }\n'
    tracer = build(tmp_path, script, "--map-entries", "2")
    out = run(tracer, "-c", f"{workload} read 1 1; {workload} read 1 2; {workload} read 1 3")
    assert out.returncode == 1
    assert "map @ was full: 1 update dropped" in out.stderr
    assert out.stdout == "\n@:\n{ 1 }: 1\n{ 2 }: 1\n"


def fake_tracefs(tmp_path, fields):
    root = tmp_path / "tracefs"
    ev = root / "events" / "plyctest" / "fake_event"
    ev.mkdir(parents=True)
    (ev / "format").write_text("name: fake_event\nID: 1\nformat:\n" + "".join(
        f"\tfield:{decl};\toffset:{off};\tsize:{size};\tsigned:0;\n" for decl, off, size in fields))
    return root


def test_a_tracepoint_missing_on_the_device(tmp_path):
    root = fake_tracefs(tmp_path, [("unsigned short common_type", 0, 2), ("int value", 8, 4)])
    env = dict(os.environ, PLYC_TRACEFS=str(root))
    tracer = build(tmp_path, "BEGIN { }\n\ntracepoint:plyctest/fake_event { @[data->value] = count(); }\n",
                   env=env)
    out = run(tracer, "-d", "1")
    assert out.returncode == 1
    assert out.stderr.startswith("t.ply:3: error: tracepoint:plyctest/fake_event: no such tracepoint on this kernel")


def edited_format(tmp_path, event: str, old: str, new: str) -> dict:
    """An environment whose tracefs (PLYC_TRACEFS) has this machine's format
    of `event` with `old` replaced by `new`."""
    real = Path(f"/sys/kernel/tracing/events/{event}/format").read_text()
    assert old in real, f"{event}'s format has changed: no {old!r}"
    ev = tmp_path / "tracefs" / "events" / event
    ev.mkdir(parents=True)
    ev.joinpath("format").write_text(real.replace(old, new))
    return dict(os.environ, PLYC_TRACEFS=str(tmp_path / "tracefs"))


def test_tracepoint_layout_comes_from_the_device(tmp_path, workload):
    """Build against a format file with other offsets than this kernel's:
    the tracer still reads the right field, because it takes offsets from
    the device when it starts."""
    env = edited_format(tmp_path, "syscalls/sys_enter_read", "size_t count;\toffset:32;", "size_t count;\toffset:48;")
    tracer = build(tmp_path, 'tracepoint:syscalls/sys_enter_read / comm == "plyc-work" / '
                   '{ @[data->count] = count(); }\n', env=env)
    out = run(tracer, "-c", f"{workload} read 3 100")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ 100 }: 3\n"


def test_integer_fields_take_the_device_size(tmp_path, workload):
    """Syscall arguments sit in word-sized slots (4 bytes on 32-bit devices):
    an integer field is read at the size the device's format gives it."""
    env = edited_format(tmp_path, "syscalls/sys_enter_read", "size_t count;\toffset:32;\tsize:8;",
                        "size_t count;\toffset:32;\tsize:4;")
    tracer = build(tmp_path, 'tracepoint:syscalls/sys_enter_read / comm == "plyc-work" / '
                   '{ @[data->count] = count(); }\n')
    out = run(tracer, "-c", f"{workload} read 2 300", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ 300 }: 2\n"


def test_other_fields_must_have_the_built_size(tmp_path):
    env = edited_format(tmp_path, "sched/sched_switch", "char prev_comm[16];\toffset:8;\tsize:16;",
                        "char prev_comm[16];\toffset:8;\tsize:24;")
    tracer = build(tmp_path, "tracepoint:sched/sched_switch { @[data->prev_comm] = count(); }\n")
    out = run(tracer, "-d", "1", env=env)
    assert out.returncode == 1
    assert "field 'prev_comm' is 24 bytes on this kernel, 16 where the tracer was built" in out.stderr


def test_help_and_version(tmp_path):
    tracer = build(tmp_path, COUNT)
    h = run(tracer, "-h")
    assert h.returncode == 0 and "t.ply:1: tracepoint:syscalls/sys_enter_getppid" in h.stdout
    v = run(tracer, "--version")
    assert v.returncode == 0 and v.stdout.startswith("t (plyc ")
    bad = run(tracer, "-x")
    assert bad.returncode == 1 and "Usage:" in bad.stderr


def test_plyc_run_builds_and_runs(tmp_path, workload):
    src = tmp_path / "r.ply"
    src.write_text(COUNT)
    env = dict(os.environ, PLYC_CACHE=str(tmp_path / "cache"))
    for _ in range(2):   # the second run comes from the cache
        out = subprocess.run([sys.executable, "-m", "plyc", "run", str(src), "--", "-c", f"{workload} getppid 3"],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "\n@:\n{ plyc-work       }: 3\n"
    assert len(list((tmp_path / "cache" / "run").iterdir())) == 1


def test_p_pid_limits_uprobes_to_that_process(tmp_path, workload):
    tracer = build(tmp_path, "uprobe:c:malloc / comm == \"plyc-work\" / { @[arg0] = count(); }\n")
    mine = subprocess.Popen([workload, "delay", "1000", "read", "1", "111"])
    other = subprocess.Popen([workload, "delay", "1000", "read", "1", "222"])
    out = run(tracer, "-p", str(mine.pid))
    mine.wait()
    other.wait()
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ 111 }: 1\n"


def test_embedded_btf_serves_a_kernel_without_btf(tmp_path, workload):
    """plyc build --btf embeds the BTF the program's CO-RE reads need; the
    tracer uses it where the kernel has none (simulated here)."""
    script = ('tracepoint:net/netif_receive_skb / data->len == 128 + 28 /\n'
              '{ $skb = (struct sk_buff *)data->skbaddr; @[$skb->len == data->len, str($skb->dev->name)] = count(); }\n')
    tracer = build(tmp_path, script, "--btf", "/sys/kernel/btf/vmlinux")
    out = run(tracer, "-v", "-c", f"{workload} udp 5 128", env=dict(os.environ, PLYC_IGNORE_KERNEL_BTF="1"))
    assert out.returncode == 0, out.stderr
    assert "using the kernel BTF built into the tracer" in out.stderr
    # libbpf relocated against the small embedded BTF, not the kernel's
    # (where struct sk_buff's id is in the thousands).
    import re
    ids = re.findall(r"struct sk_buff: found target candidate \[(\d+)\]", out.stderr)
    assert ids and int(ids[0]) < 100, out.stderr
    assert out.stdout == "\n@:\n{ 1, lo              }: 5\n"


# -c CMD: plain words are exec'd directly, shell syntax runs under /bin/sh -c,
# and the command's process group never outlives the tracer.

GETPPID_TARGET = 'tracepoint:syscalls/sys_enter_getppid / pid == $target / { @[comm] = count(); }\n'


@pytest.fixture
def getppids(tmp_path):
    """A program making N getppid() calls itself (the workload forks first)."""
    src = tmp_path / "getppids.c"
    src.write_text("#include <stdlib.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n"
                   "int main(int argc, char **argv)\n{\n\tlong n = argc > 1 ? atol(argv[1]) : 1;\n\n"
                   "\twhile (n-- > 0)\n\t\tsyscall(SYS_getppid);\n\treturn 0;\n}\n")
    out = tmp_path / "bin" / "getppids"
    out.parent.mkdir()
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(out), str(src)], check=True)
    return out


def test_c_words_are_execd_so_target_counts_are_exact(tmp_path, getppids):
    tracer = build(tmp_path, GETPPID_TARGET)
    out = run(tracer, "-c", f"{getppids} 5")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ getppids        }: 5\n"
    # A bare name is looked up in PATH, as execvp does.
    env = dict(os.environ, PATH=f"{getppids.parent}:{os.environ['PATH']}")
    out = run(tracer, "-c", "getppids  7", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ getppids        }: 7\n"


@pytest.mark.skipif(os.path.realpath("/bin/sh") != "/usr/bin/dash", reason="/bin/sh is not dash")
def test_c_shell_syntax_makes_target_the_shell(tmp_path, getppids):
    """Documented: with shell syntax $target is the shell, and dash forks the
    command rather than exec'ing it, so only dash's own getppid is seen."""
    tracer = build(tmp_path, GETPPID_TARGET)
    out = run(tracer, "-c", f"{getppids} 5; {getppids} 2")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ sh              }: 1\n"


def test_c_command_that_cannot_run(tmp_path):
    tracer = build(tmp_path, GETPPID_TARGET + 'END { printf("END\\n"); }\n')
    (tmp_path / "data.txt").write_text("not a program\n")
    (tmp_path / "badinterp").write_text("#!/nonexistent/interpreter\n")
    (tmp_path / "badinterp").chmod(0o755)
    cases = [
        ("plyc-no-such-command 1", "cannot run 'plyc-no-such-command': command not found in PATH"),
        ("./nonexistent", "cannot run './nonexistent': No such file or directory"),
        ("./data.txt", "cannot run './data.txt': Permission denied"),
        (str(tmp_path), f"cannot run '{tmp_path}': Is a directory"),
        # Found, but its exec fails in the child after the release: told the same way.
        ("./badinterp x", "cannot run './badinterp': No such file or directory (its interpreter or loader?)"),
    ]
    for cmd, why in cases:
        out = run(tracer, "-v", "-c", cmd, cwd=tmp_path)
        assert out.returncode == 1, (cmd, out.stderr)
        assert f"t: error: {why}\n" in out.stderr, (cmd, out.stderr)
        assert out.stdout == "", cmd   # no END, no map dump
        if "badinterp" not in cmd:     # told before anything is loaded
            assert "attached" not in out.stderr, (cmd, out.stderr)


def processes_with(token: str) -> list:
    """The command lines of live (not zombie) processes with token in their argv."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in argv and state != "Z":
            found.append(b" ".join(argv).decode(errors="replace"))
    return found


def sleep_token() -> str:
    """A sleep duration no other process of this machine is likely to use."""
    return f"3{os.getpid() % 1000:03d}{time.monotonic_ns() % 1000:03d}"


@pytest.mark.parametrize("shape", ["words", "shell-background", "ignores-sigterm"])
def test_c_group_is_killed_when_tracing_stops_first(tmp_path, shape):
    tracer = build(tmp_path, 'END { printf("END\\n"); }\n')
    a, b = sleep_token(), sleep_token() + "1"
    cmd = {"words": f"sleep {a}",
           "shell-background": f"sleep {a} & sleep {b}",
           # Only SIGKILL, after the grace period, ends this one.
           "ignores-sigterm": f"trap '' TERM; sleep {a}"}[shape]
    start = time.monotonic()
    # capture_output: a leftover holding the pipes would also hang run().
    out = run(tracer, "-d", "0.5", "-c", cmd, timeout=20)
    took = time.monotonic() - start
    assert out.returncode == 0, out.stderr
    assert out.stdout == "END\n"
    assert processes_with(a) == [] and processes_with(b) == []
    assert took < (2.5 if shape == "ignores-sigterm" else 1.8), took


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "exit"])
def test_c_group_is_killed_when_the_tracer_is_stopped(tmp_path, how):
    script = 'END { printf("END\\n"); }\n'
    if how == "exit":
        script += 'interval:300ms { exit(4); }\n'
    tracer = build(tmp_path, script)
    a, b = sleep_token(), sleep_token() + "1"
    proc = subprocess.Popen([tracer, "-c", f"sleep {a} & exec sleep {b}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not (processes_with(a) and processes_with(b)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processes_with(a) and processes_with(b), "the command never ran"
    if how != "exit":
        proc.send_signal(getattr(signal, how))
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == (4 if how == "exit" else 0), stderr
    assert stdout == "END\n"
    assert processes_with(a) == [] and processes_with(b) == []


def test_c_child_never_outlives_a_failed_attach(tmp_path):
    root = fake_tracefs(tmp_path, [("unsigned short common_type", 0, 2), ("int value", 8, 4)])
    env = dict(os.environ, PLYC_TRACEFS=str(root))
    tracer = build(tmp_path, "tracepoint:plyctest/fake_event { @[data->value] = count(); }\n", env=env)
    a = sleep_token()
    out = run(tracer, "-c", f"sleep {a}", env=env)   # the tracepoint is only in the fake tracefs
    assert out.returncode == 1
    assert out.stderr.startswith("t.ply:1: error: tracepoint:plyctest/fake_event: "), out.stderr
    # The child was held, never exec'd: nothing runs sleep, and no copy of the tracer is left.
    assert processes_with(a) == [] and processes_with(tracer) == []


def test_c_command_gets_the_terminal(tmp_path):
    """On a terminal the command's group is made the foreground one: it can
    read the terminal (not stopped by SIGTTIN in its own group), Ctrl-C goes
    to it, and Ctrl-Z stops the command and the tracer together until both
    are continued."""
    import fcntl
    import pty
    import termios
    tracer = build(tmp_path, 'END { printf("END\\n"); }\n')
    a = sleep_token()

    def session(cmd):
        master, slave = pty.openpty()

        def controlling_tty():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        proc = subprocess.Popen([tracer, "-c", cmd], stdin=slave, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=controlling_tty)
        os.close(slave)
        return master, proc

    master, proc = session("head -n 1")
    os.write(master, b"from the terminal\n")
    stdout, stderr = proc.communicate(timeout=10)
    os.close(master)
    assert proc.returncode == 0, stderr
    assert stdout == "from the terminal\nEND\n"

    master, proc = session(f"sleep {a}")
    deadline = time.monotonic() + 10
    while not processes_with(a) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.write(master, b"\x1a")   # Ctrl-Z: the tracer stops with the command
    pid, status = 0, 0
    while pid == 0 and time.monotonic() < deadline:
        pid, status = os.waitpid(proc.pid, os.WUNTRACED | os.WNOHANG)
        time.sleep(0.02)
    assert pid == proc.pid and os.WIFSTOPPED(status), "the tracer did not stop with its command"
    os.kill(proc.pid, signal.SIGCONT)
    time.sleep(0.2)
    os.write(master, b"\x03")   # Ctrl-C reaches the (continued) command
    stdout, stderr = proc.communicate(timeout=10)
    os.close(master)
    assert proc.returncode == 0, stderr
    assert stdout == "END\n"
    assert processes_with(a) == []


# A job-control shell, enough of one: session leader on the terminal, runs
# the tracer as a job in the foreground, Ctrl-Z, takes the terminal back, bg;
# then, for "read", waits for the command (reading the terminal in the
# background) to stop the job again, and fg. Prints who has the terminal.
JOB_SHELL = r'''
import json, os, signal, sys, time
tracer, cmd, master, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
me = os.getpgrp()
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.execv(tracer, [tracer, "-c", cmd])
try:
    os.setpgid(pid, pid)
except PermissionError:   # the child has exec'd, after its own setpgid
    pass
os.tcsetpgrp(0, pid)
signal.signal(signal.SIGALRM, lambda *a: (os.killpg(pid, signal.SIGKILL), sys.exit(3)))
signal.alarm(45)
seen = {}

def lent():   # the tracer lends the terminal to its command's group
    while os.tcgetpgrp(0) in (me, pid):
        time.sleep(0.02)

def stopped():
    _, status = os.waitpid(pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), status

lent()
os.write(master, b"\x1a")
stopped()
os.tcsetpgrp(0, me)
os.killpg(pid, signal.SIGCONT)      # bg
if cmd.startswith("head"):
    stopped()                       # SIGTTIN stopped the command, and the tracer
    seen["stopped"] = os.tcgetpgrp(0) == me
    os.tcsetpgrp(0, pid)            # fg
    os.killpg(pid, signal.SIGCONT)
    lent()
    os.write(master, b"from the terminal\n")
_, status = os.waitpid(pid, 0)
seen["status"] = os.waitstatus_to_exitcode(status)
seen["terminal"] = {me: "shell", pid: "tracer"}.get(os.tcgetpgrp(0), "other")
print(json.dumps(seen))
'''


@pytest.mark.parametrize("cmd", ["sleep 0.5", "head -n 1"])
def test_c_command_never_takes_the_terminal_from_the_shell(tmp_path, cmd):
    """Ctrl-Z, then bg: the shell has the terminal back; the tracer must not
    take it when the command ends, nor when the command, reading the terminal
    in the background, is stopped by SIGTTIN (tcsetpgrp works for the tracer,
    which ignores SIGTTOU)."""
    import fcntl
    import json
    import pty
    import termios
    tracer = build(tmp_path, 'END { printf("END\\n"); }\n')
    master, slave = pty.openpty()

    def controlling_tty():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", JOB_SHELL, tracer, cmd, str(master), str(out)],
                          stdin=slave, capture_output=True, text=True, timeout=90,
                          pass_fds=(master,), preexec_fn=controlling_tty)
    os.close(slave)
    os.close(master)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    if cmd == "sleep 0.5":
        # Ended in the background: the terminal stays the shell's.
        assert seen == {"status": 0, "terminal": "shell"}
        assert out.read_text() == "END\n"
    else:
        # Ended in the foreground, after fg: the tracer takes it back.
        assert seen == {"stopped": True, "status": 0, "terminal": "tracer"}
        assert out.read_text() == "from the terminal\nEND\n"
