"""Listing and checking probes against this machine's kernel: `plyc list`
(bpftrace -l's syntax and text, compared with bpftrace 0.27's and 0.17's
where this kernel lets them list), `plyc check`/`build`'s warnings about a
target the build machine lacks, and the tracer's --list, --dry-run and
--info (docs/usage.md)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_tracer import build, run

ROOT = Path(__file__).resolve().parent.parent


def plyc(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "plyc", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def lines(proc):
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_list_tracepoints_glob():
    out = lines(plyc("list", "tracepoint:syscalls:*openat*"))
    assert "tracepoint:syscalls:sys_enter_openat" in out and "tracepoint:syscalls:sys_exit_openat" in out
    assert all(x.startswith("tracepoint:syscalls:") and "openat" in x for x in out)
    assert out == sorted(out)
    # ply's group/event and bpftrace's short name are the same pattern
    assert lines(plyc("list", "t:syscalls/*openat*")) == out


def test_list_v_tracepoint_fields():
    out = lines(plyc("list", "-v", "tracepoint:syscalls:sys_enter_openat"))
    assert out == ["tracepoint:syscalls:sys_enter_openat", "    int __syscall_nr", "    int dfd",
                   "    const char * filename", "    int flags", "    umode_t mode"]
    # plyc's own -v before the command says the same
    assert lines(plyc("-v", "list", "tracepoint:syscalls:sys_enter_openat")) == out


def test_list_word_without_provider():
    assert lines(plyc("list", "sys_enter_openat")) == ["tracepoint:syscalls:sys_enter_openat"]


def test_list_everything_and_a_word():
    """No pattern: every kind but the return probes and user probes (bpftrace -l alone)."""
    out = lines(plyc("list"))
    kinds = {x.split(":")[0] for x in out}
    assert kinds == {"tracepoint", "kprobe", "fentry", "rawtracepoint", "software", "hardware", "iter"}, kinds
    sleep = lines(plyc("list", "*nanosleep*"))
    assert "kprobe:do_nanosleep" in sleep and "fentry:vmlinux:do_nanosleep" in sleep
    assert "tracepoint:syscalls:sys_enter_clock_nanosleep" in sleep
    assert all("nanosleep" in x for x in sleep)


def test_list_kfunc_arguments_and_spellings():
    out = lines(plyc("list", "-v", "kfunc:vfs_read"))
    assert out == ["fentry:vmlinux:vfs_read", "    struct file * file", "    char * buf",
                   "    size_t count", "    loff_t * pos"]
    assert lines(plyc("list", "fentry:vfs_read")) == out[:1]
    ret = lines(plyc("list", "-v", "fexit:vfs_read"))
    assert ret == ["fexit:vmlinux:vfs_read"] + out[1:] + ["    ssize_t retval"]
    # qualifiers kept, as bpftrace prints them
    assert "    const char * filename" in lines(plyc("list", "-v", "fentry:do_sys_openat2"))


def test_list_kprobes_rawtracepoints_iterators_events():
    kp = lines(plyc("list", "kprobe:vfs_rea*"))
    assert "kprobe:vfs_read" in kp and all(x.startswith("kprobe:vfs_rea") for x in kp)
    assert lines(plyc("list", "-v", "kprobe:vfs_read"))[1:3] == ["    struct file * arg0", "    char * arg1"]
    assert lines(plyc("list", "-v", "rawtracepoint:sched_switch")) == [
        "rawtracepoint:vmlinux:sched_switch", "    bool preempt", "    struct task_struct * prev",
        "    struct task_struct * next", "    unsigned int prev_state"]
    assert lines(plyc("list", "iter:*")) == ["iter:task", "iter:task_file", "iter:task_vma"]
    assert lines(plyc("list", "-v", "iter:task_file")) == [
        "iter:task_file", "    struct task_struct * task", "    u32 fd", "    struct file * file"]
    sw = lines(plyc("list", "software:*"))
    assert "software:page-faults:" in sw and "software:cpu-clock:" in sw
    # an alias is a line of its own, as 0.27 lists it (test_list_v_as_bpftrace_027_prints_it)
    assert lines(plyc("list", "s:faults")) == ["software:faults:"]
    assert lines(plyc("list", "s:*faults")) == ["software:alignment-faults:", "software:emulation-faults:",
                                                "software:faults:", "software:major-faults:",
                                                "software:minor-faults:", "software:page-faults:"]


def test_list_a_glob_of_providers():
    """`*:*`, `*:vfs_read`, `*probe:*`: a provider glob names no binary, so
    it lists no user probes (was: uprobe's "give the binary's path" ended
    the listing, exit 1, half listed), as 0.27 lists `*:*`."""
    every = lines(plyc("list", "*:*"))
    kinds = {x.split(":")[0] for x in every}
    assert {"tracepoint", "kprobe", "fentry", "rawtracepoint", "software", "hardware"} <= kinds, kinds
    assert not kinds & {"uprobe", "uretprobe", "usdt"}
    assert set(lines(plyc("list", "*:*:*"))) >= set(lines(plyc("list", "t*:*:*"))) > set()
    assert {"kprobe:vfs_read", "kretprobe:vfs_read", "fentry:vmlinux:vfs_read"} <= set(lines(plyc("list", "*:vfs_read")))
    probes = lines(plyc("list", "*probe:vfs_rea*"))
    assert "kprobe:vfs_read" in probes and "kretprobe:vfs_read" in probes
    assert lines(plyc("list", "*:syscalls:sys_enter_openat")) == ["tracepoint:syscalls:sys_enter_openat"]
    # a glob of user probes only: they want a binary, as `uprobe:` does
    proc = plyc("list", "u*:")
    assert proc.returncode == 1 and "listed per binary" in proc.stderr and not proc.stdout, proc.stderr


def test_list_uprobes_and_usdt_of_a_binary(usdt_prog):
    assert "uprobe:/bin/bash:readline" in lines(plyc("list", "uprobe:/bin/bash:readl*"))
    assert lines(plyc("list", f"usdt:{usdt_prog}:*")) == [f"usdt:{usdt_prog}:plyctest:tick"]
    assert lines(plyc("list", f"U:{usdt_prog}:plyctest:t*")) == [f"usdt:{usdt_prog}:plyctest:tick"]
    # -v: the arguments' types from the note's sizes (two ints)
    assert lines(plyc("list", "-v", f"usdt:{usdt_prog}")) == [
        f"usdt:{usdt_prog}:plyctest:tick", "    int32 arg0", "    int32 arg1"]


def test_list_a_binary_by_name_as_the_tracer_finds_it(tmp_path):
    """A name without '/' is a library by short name, else a program on
    $PATH (runtime-c/probes/uprobes.c), printed with the path found, as
    bpftrace 0.27's `-l -e 'uprobe:bash:readline {}'` prints it."""
    bash = shutil.which("bash")
    assert lines(plyc("list", "uprobe:bash:readline")) == [f"uprobe:{bash}:readline"]
    libc = lines(plyc("list", "uprobe:c:malloc"))
    assert len(libc) == 1 and libc[0].startswith("uprobe:/") and "/libc.so" in libc[0] and libc[0].endswith(":malloc")
    # a directory of the name (/usr/lib/python3) is no library; a program on a PATH of ours is found
    prog = tmp_path / "plyc-list-prog"
    shutil.copy("/bin/true", prog)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, "-m", "plyc", "list", "uprobe:plyc-list-prog:main*"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    want = sorted(f"uprobe:{prog}:{f}" for f in __import__("plyc.elfsyms").elfsyms.Elf(str(prog)).functions()
                  if f.startswith("main"))
    assert proc.stdout.splitlines() == want
    for pattern in ("uprobe:python3:nosuch_function", "usdt:python3"):
        proc = plyc("list", pattern)
        assert proc.returncode == 0 and not proc.stdout and "Traceback" not in proc.stderr, proc.stderr
    proc = plyc("list", "uprobe:no-such-program-anywhere:f")
    assert proc.returncode == 1 and "no library of that name and no program on $PATH" in proc.stderr


def test_list_v_usdt_as_bpftrace_027_lists_them(bpftrace27, usdt_prog):
    """0.27's `-lv` prints a USDT probe's name only: plyc's names are its,
    the argument lines under them plyc's own."""
    plyc_names = [x for x in lines(plyc("list", "-v", f"usdt:{usdt_prog}:*")) if not x.startswith("    ")]
    assert plyc_names == bt27_lines(bpftrace27, "-lv", f"usdt:{usdt_prog}:*") == [f"usdt:{usdt_prog}:plyctest:tick"]


def test_list_errors():
    for pattern, msg in (("uprobe:/no/such/bin:f", "/no/such/bin: No such file or directory"),
                         ("nosuch:x", "unknown probe type 'nosuch'"),
                         ("uprobe:", "listed per binary")):
        proc = plyc("list", pattern)
        assert proc.returncode == 1 and msg in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_list_with_a_kernels_btf(tmp_path):
    btf = tmp_path / "vmlinux.btf"
    shutil.copy("/sys/kernel/btf/vmlinux", btf)
    out = lines(plyc("list", "--btf", str(btf), "-v", "fentry:vfs_read"))
    assert out[0] == "fentry:vmlinux:vfs_read" and out[1] == "    struct file * file"
    # BTF names no group: the events this machine has, in its groups
    assert "tracepoint:sched:sched_switch" in lines(plyc("list", "--btf", str(btf), "tracepoint:sched:*"))
    assert "    char prev_comm[16]" in lines(plyc("list", "--btf", str(btf), "-v", "tracepoint:sched:sched_switch"))


def bt27_lines(bpftrace27, *args):
    proc = subprocess.run(bpftrace27(list(args), ftrace=True), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("pattern", ["tracepoint:syscalls:sys_enter_openat", "tracepoint:sched:sched_switch",
                                     "fentry:vfs_read", "fexit:vfs_read", "fentry:do_sys_openat2",
                                     "kprobe:vfs_read", "kretprobe:vfs_read", "rawtracepoint:sched_switch", "iter:task_file",
                                     "tracepoint:syscalls:*openat*",
                                     "kprobe:vfs_read,tracepoint:syscalls:sys_exit_openat,kprobe:vfs_write",
                                     "software:*", "hardware:*", "interval:*", "profile:*"])
def test_list_v_as_bpftrace_027_prints_it(bpftrace27, pattern):
    assert lines(plyc("list", "-v", pattern)) == bt27_lines(bpftrace27, "-lv", pattern)


def test_list_as_bpftrace_017_prints_it():
    if not shutil.which("bpftrace"):
        pytest.fail("bpftrace 0.17 is not installed (scripts/setup.sh installs it)")
    for pattern in ("tracepoint:syscalls:*openat*", "uprobe:/bin/bash:readl*"):
        bt = subprocess.run(["bpftrace", "-l", pattern], capture_output=True, text=True, timeout=120)
        assert lines(plyc("list", pattern)) == bt.stdout.splitlines()
    bt = subprocess.run(["bpftrace", "-lv", "tracepoint:syscalls:sys_enter_openat"], capture_output=True,
                        text=True, timeout=120)
    assert lines(plyc("list", "-v", "tracepoint:syscalls:sys_enter_openat")) == bt.stdout.splitlines()


MISSING = """tracepoint:syscalls:sys_enter_getppidd { @a = count(); }
kprobe:no_such_fn { @b = count(); }
uprobe:/no/such/bin:f { @c = count(); }
tracepoint:syscalls:sys_enter_getppid { @d = count(); }
kprobe:vfs_read { @e = count(); }
"""


def test_check_and_build_warn_about_missing_targets(tmp_path):
    src = tmp_path / "m.bt"
    src.write_text(MISSING)
    for args in (["check", str(src)], ["build", str(src), "-o", str(tmp_path / "m")]):
        proc = plyc(*args)
        assert proc.returncode == 0, proc.stderr
        err = proc.stderr
        assert (f"{src}:1:1: warning: this machine has no tracepoint syscalls:sys_enter_getppidd "
                "(did you mean sys_enter_getppid, sys_enter_getpid or sys_enter_getpgid?): a tracer run here "
                "would fail to attach it\ntracepoint:syscalls:sys_enter_getppidd { @a = count(); }\n^~~~") in err
        assert f"{src}:2:1: warning: this machine's kernel has no function no_such_fn" in err
        assert f"{src}:3:1: warning: /no/such/bin: No such file or directory" in err
        assert err.count("warning:") == 3, err
    assert os.access(tmp_path / "m", os.X_OK)


def test_no_warning_where_tracefs_cannot_be_read(monkeypatch):
    """Not root, tracefs (0700) cannot be read: nothing here can say
    whether a tracepoint is there, so no warning (was: "this machine has
    no tracepoint syscalls:sys_enter_getppid" of one it has); the other
    kinds are still checked."""
    from plyc import driver, presence, tracefs

    def unreadable():
        raise tracefs.TracefsError("tracefs is not available on the build machine (... or run as root)")
    monkeypatch.setattr(tracefs, "root", unreadable)
    said = [d.message for d in presence.missing(driver.lower(MISSING, "m.bt", driver.Options()))]
    assert not [m for m in said if "tracepoint" in m], said
    assert any("no_such_fn" in m for m in said), said


def test_a_misspelt_probe_is_given_the_names_near_it(tmp_path):
    """A typo's warning names what is near it on this machine, as the
    tracepoint in another group is named (was: only "has no function")."""
    src = tmp_path / "t.bt"
    src.write_text("kprobe:vfs_reed { }\nkfunc:vfs_reed { }\nrawtracepoint:sched_swich { }\n"
                   "uprobe:/bin/bash:readlin { }\ntracepoint:syscalls:sys_enter_opennat { }\n"
                   "kprobe:zzqqxx_nothing_near { }\n")
    proc = plyc("check", str(src))
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "warning: this machine's kernel has no function vfs_reed (did you mean vfs_read" in err, err
    assert "warning: this machine's kernel BTF has no function vfs_reed (did you mean vfs_read" in err, err
    assert "has no tracepoint sched_swich (no btf_trace_sched_swich in its BTF; did you mean sched_switch" in err
    assert "/bin/bash has no function readlin (did you mean readline" in err, err
    assert "has no tracepoint syscalls:sys_enter_opennat (did you mean sys_enter_openat" in err, err
    assert "has no function zzqqxx_nothing_near: a tracer" in err, err


def test_a_tracepoint_in_another_group_is_named(tmp_path):
    """The event exists, in another group: the warning says which (before:
    only "no tracepoint syscalls:sched_switch")."""
    src = tmp_path / "g.bt"
    src.write_text("tracepoint:syscalls:sched_switch { @a = count(); }\n"
                   "tracepoint:sched:sys_enter_getppid { @b = count(); }\n")
    proc = plyc("check", str(src))
    assert proc.returncode == 0, proc.stderr
    assert (f"{src}:1:1: warning: this machine has no tracepoint syscalls:sched_switch (it has "
            "sched:sched_switch): a tracer run here would fail to attach it\n") in proc.stderr
    assert (f"{src}:2:1: warning: this machine has no tracepoint sched:sys_enter_getppid (it has "
            "syscalls:sys_enter_getppid): a tracer") in proc.stderr


def test_no_warning_for_another_target(tmp_path):
    src = tmp_path / "m.bt"
    src.write_text(MISSING)
    btf = tmp_path / "vmlinux.btf"
    shutil.copy("/sys/kernel/btf/vmlinux", btf)
    proc = plyc("check", "--btf", str(btf), str(src))
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr


LISTED = """BEGIN { printf("begin\\n"); }
tracepoint:syscalls:sys_enter_getppid { @a = count(); }
tracepoint:syscalls:sys_enter_open* { @b = count(); }
software:faults:10 { @c = count(); }
END { printf("end\\n"); }
"""


@pytest.mark.bpf
def test_tracer_list_resolves_wildcards(tmp_path):
    t = build(tmp_path, LISTED, suffix=".bt")
    proc = run(t, "--list")
    assert proc.returncode == 0, proc.stderr
    opens = lines(plyc("list", "tracepoint:syscalls:sys_enter_open*"))
    assert proc.stdout.splitlines() == ["tracepoint:syscalls:sys_enter_getppid", *opens,
                                        "software:page-faults:10"]


@pytest.mark.bpf
def test_tracer_dry_run_runs_nothing(tmp_path):
    t = build(tmp_path, LISTED, suffix=".bt")
    proc = run(t, "--dry-run", "-v")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""            # no banner, BEGIN nor END, as bpftrace 0.27's
    assert "probes attached and detached (dry run)" in proc.stderr


@pytest.mark.bpf
def test_tracer_dry_run_and_list_fail_per_probe(tmp_path):
    t = build(tmp_path, "tracepoint:syscalls:sys_enter_getppidd { @a = count(); }\n"
                        "tracepoint:syscalls:sys_enter_nosuch { @b = count(); }\n"
                        "tracepoint:syscalls:sys_enter_getppid { @c = count(); }\n", suffix=".bt")
    for opt in ("--dry-run", "--list"):
        proc = run(t, opt)
        assert proc.returncode == 1
        assert "t.bt:1: error: tracepoint:syscalls:sys_enter_getppidd: no such tracepoint on this kernel" \
            in proc.stderr
        assert "t.bt:2: error: tracepoint:syscalls:sys_enter_nosuch: no such tracepoint" in proc.stderr
    assert run(t, "--list").stdout == "tracepoint:syscalls:sys_enter_getppid\n"


@pytest.mark.bpf
def test_tracer_info(tmp_path):
    t = build(tmp_path, LISTED, suffix=".bt")
    proc = run(t, "--info")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # this kernel (6.18): BTF, a ring buffer, test runs, cookies; no kprobes here
    for line in ("  btf: yes", "  ring buffer: yes", "  BPF cookies: yes", "  output: ring buffer",
                 "  BEGIN and END: BPF_PROG_TEST_RUN", "  memory reads: bpf_probe_read_kernel and _user",
                 f"  Arch: {os.uname().machine}"):
        assert line + "\n" in out, out
    assert "System\n" in out and "Kernel features\n" in out and "What this tracer takes here\n" in out


def test_list_damaged_binaries_are_errors(tmp_path):
    """A binary cut short or with bytes changed: an error naming it, never
    a traceback (the ELF reader of plyc/elfsyms.py)."""
    import random
    from plyc.elfsyms import Elf, ElfError
    data = Path("/bin/ls").read_bytes()
    rnd = random.Random(30)
    f = tmp_path / "bin"
    for i in range(200):
        d = bytearray(data)
        if i % 2:
            d = d[:rnd.randrange(1, len(d))]
        else:
            for _ in range(20):
                d[rnd.randrange(len(d))] = rnd.randrange(256)
        f.write_bytes(bytes(d))
        try:
            e = Elf(str(f))
            e.functions()
            e.usdt()
        except ElfError:
            pass
    f.write_bytes(data[:100])
    proc = plyc("list", f"uprobe:{f}:*")
    assert proc.returncode == 1 and proc.stderr == f"plyc: error: {f}: a truncated ELF file\n", proc.stderr
    proc = plyc("list", "uprobe:/dev/zero:*")
    assert proc.returncode == 1 and "not a regular file" in proc.stderr


def test_a_fifo_never_blocks_list_or_check(tmp_path):
    """A FIFO given as a binary: open() would wait for a writer (before,
    list, check and build hung). An error, or check's warning, at once."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for pattern in (f"uprobe:{fifo}:*", f"usdt:{fifo}"):
        proc = subprocess.run([sys.executable, "-m", "plyc", "list", pattern], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)
        assert proc.returncode == 1 and proc.stderr == f"plyc: error: {fifo}: not a regular file\n", proc.stderr
    script = tmp_path / "u.bt"
    script.write_text(f"uprobe:{fifo}:f {{ @a = count(); }}\nusdt:{fifo}:p:q {{ @b = count(); }}\n")
    proc = plyc("check", str(script))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(f"{fifo}: not a regular file on this machine") == 2, proc.stderr


@pytest.mark.bpf
def test_tracer_a_fifo_or_a_directory_never_blocks(tmp_path):
    """The tracer's side: a uprobe's binary (before, a FIFO hung --list,
    --dry-run and the run; a directory was read as a binary)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t = build(tmp_path, f"uprobe:{fifo}:f {{ @a = count(); }}\nuprobe:{tmp_path}:f {{ @b = count(); }}\n",
              suffix=".bt")
    for opts in (["--list"], ["--dry-run"], ["-d", "1"]):
        proc = run(t, *opts, timeout=20)
        assert proc.returncode == 1, proc.stderr
        assert f"t.bt:1: error: uprobe:{fifo}:f: {fifo}: not a regular file\n" in proc.stderr
        assert f"t.bt:2: error: uprobe:{tmp_path}:f: {tmp_path}: Is a directory\n" in proc.stderr


def test_list_to_a_full_disk_is_an_error_not_a_plyc_bug():
    """Before: `plyc: internal error, please report: OSError` (list, emit)."""
    for args in (["list", "*"], ["list", "tracepoint:sched:sched_switch"],
                 ["emit", "-e", "BEGIN { exit(); }", "--lang", "bpftrace"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "plyc", *args], stdout=full, stderr=subprocess.PIPE,
                                  text=True, cwd=ROOT, timeout=300)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == "plyc: error: writing output: No space left on device\n", proc.stderr
        # started with stdout closed (Python's sys.stdout None): before, an AttributeError
        proc = subprocess.run([sys.executable, "-m", "plyc", *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300,
                              preexec_fn=lambda: os.close(1))
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == "plyc: error: writing output: standard output is closed\n", proc.stderr


def reader_gone(cmd: list) -> subprocess.CompletedProcess:
    """cmd's stdout read for one line, then closed (`| head -1`)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    return subprocess.CompletedProcess(cmd, p.wait(timeout=60), "", err)


@pytest.mark.bpf
def test_tracer_list_info_help_into_head(tmp_path):
    """--list, --info, -h, --version | head -1: exit 0, nothing said, as a
    run whose reader goes (docs/output.md); before, SIGPIPE killed them
    (status 141, a failure under pipefail). To a full disk: an error."""
    t = build(tmp_path, "tracepoint:syscalls:sys_enter_* { @a = count(); }\n"
                        "tracepoint:sched:* { @b = count(); }\n", suffix=".bt")
    for opt in ("--list", "--info", "--help", "--version"):
        proc = reader_gone([t, opt])
        assert proc.returncode == 0 and proc.stderr == "", (opt, proc.returncode, proc.stderr)
        with open("/dev/full", "w") as full:
            proc = subprocess.run([t, opt], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
        assert proc.returncode == 1 and "writing output: No space left on device" in proc.stderr, proc.stderr
    proc = reader_gone([sys.executable, "-m", "plyc", "list", "*"])
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.bpf
def test_tracer_dry_run_says_a_command_it_could_not_run(tmp_path):
    """--dry-run starts no -c command, but one the run could not start is
    an error, as bpftrace 0.27's "Failed to fork child" (before: exit 0)."""
    t = build(tmp_path, "tracepoint:syscalls:sys_enter_getppid { @a = count(); }\n", suffix=".bt")
    marker = tmp_path / "ran"
    for cmd, why in (("/no/such/cmd", "cannot run '/no/such/cmd': No such file or directory"),
                     ("no-such-cmd-plyc", "cannot run 'no-such-cmd-plyc': command not found in PATH")):
        proc = run(t, "--dry-run", "-c", cmd)
        assert proc.returncode == 1 and f"t: error: {why}\n" in proc.stderr, proc.stderr
    for cmd in (f"touch {marker}", f"touch {marker}; true"):
        proc = run(t, "--dry-run", "-c", cmd)
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
        assert not marker.exists()


# --- kernel types: `plyc list 'struct X'` and -v's C definitions (plyc/ctext.py)

TYPE_FILES = ["struct task_struct", "struct sk_buff", "struct path", "struct file", "struct css_task_iter",
              "enum cpu_usage_stat", "union bpf_attr", "struct tcphdr", "struct filename", "struct page",
              "enum bpf_cmd"]


def test_list_types_by_name():
    out = lines(plyc("list", "struct task*"))
    assert "struct task_struct" in out and all(x.startswith("struct task") for x in out)
    assert out == sorted(out)
    assert lines(plyc("list", "enum  cpu_usage_*")) == ["enum cpu_usage_stat"]
    assert "union bpf_attr" in lines(plyc("list", "union *"))
    # a struct's definition: its members, bit-fields, padding, a flexible array
    tcp = lines(plyc("list", "-v", "struct tcphdr"))
    assert tcp[0] == "vmlinux: struct tcphdr {" and "\t__u16 doff: 4;" in tcp and tcp[-2:] == ["};", ""]
    assert "\tconst char iname[0];" in lines(plyc("list", "-v", "struct filename"))
    assert "\t\t\tvoid (*destructor)(struct sk_buff *);" in lines(plyc("list", "-v", "struct sk_buff"))


def bt27_out(bpftrace27, args, env=None):
    cmd = bpftrace27(list(args), ftrace=True)
    proc = subprocess.run((["env", *env] if env else []) + cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("kind", ["struct", "union", "enum"])
def test_list_type_names_as_bpftrace_027_lists_them(bpftrace27, kind):
    """Every named type of the kind, as 0.27 (plyc lists the 64-bit enums
    too: 0.27 leaves ENUM64 types out)."""
    from plyc import btf as B
    b = B.load()
    enum64 = {f"enum {n}" for n in b.names_of(B.ENUM64)}
    got = [x for x in lines(plyc("list", f"{kind} *")) if x not in enum64]
    assert got == bt27_out(bpftrace27, ["-l", f"{kind} *"]).splitlines()


@pytest.mark.parametrize("name", TYPE_FILES)
def test_list_v_type_as_bpftrace_027_prints_it(bpftrace27, name):
    """Byte for byte: the `vmlinux: ` prefix, tabs, bit-fields, padding,
    function pointers, anonymous members, the empty line after."""
    proc = plyc("list", "-v", name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == bt27_out(bpftrace27, ["-lv", name])


def definitions(text: str) -> dict:
    """`KIND NAME` -> its definition, from a -lv listing of many types.
    0.27's text is its whole-BTF dump cut at lines `};`: a packed struct's
    `} __attribute__((packed));` runs on into the next types, which are
    then not listed; each is taken here up to its own closing line."""
    import re
    out, cur = {}, None
    for line in text.split("\n"):
        m = re.match(r"[A-Za-z0-9_]*: ((struct|union|enum) \S+) \{$", line)
        if m and cur is None:
            cur = out.setdefault(m.group(1), [line.split(": ", 1)[1]])
        elif cur is not None:
            cur.append(line)
            if line.startswith("}"):
                cur = None
    return {k: "\n".join(v) for k, v in out.items()}


def compare_definitions(plyc_text: str, bt_text: str, loose_names=False) -> int:
    """The definitions 0.27 lists, each plyc's too. loose_names: NAME___N
    of a name several types or enumerators share is counted in the BTF's
    order here, in 0.27's dump order (what it printed first) there
    (docs/usage.md): the same texts, their suffixes aside."""
    import re
    mine, theirs = definitions(plyc_text), definitions(bt_text)
    assert len(theirs) > 100
    if loose_names:
        def strip(defs):
            out: dict = {}
            for name, text in defs.items():
                out.setdefault(re.sub(r"___\d+$", "", name), []).append(re.sub(r"___\d+\b", "", text))
            return {k: sorted(v) for k, v in out.items()}
        # (0.27 may list fewer of a name: one cut into a packed one's text)
        mine, theirs = strip(mine), strip(theirs)
        differ = [name for name, texts in theirs.items() if any(t not in mine.get(name, []) for t in texts)]
    else:
        differ = [name for name, text in theirs.items() if mine.get(name) != text]
    assert not differ, differ[:10]
    return len(theirs)


@pytest.mark.parametrize("kind", ["struct", "union", "enum"])
def test_list_v_every_type_as_bpftrace_027_prints_it(bpftrace27, kind):
    """Every definition of this kernel's BTF of the kind (some 9,000
    structs): each the same as 0.27's."""
    proc = plyc("list", "-v", f"{kind} *")
    assert proc.returncode == 0, proc.stderr
    compare_definitions(proc.stdout, bt27_out(bpftrace27, ["-lv", f"{kind} *"]), loose_names=kind == "enum")


def test_list_v_types_of_another_kernels_btf(bpftrace27, tmp_path):
    """--btf: an arm64 5.10 guest's BTF (the lab's Debian kernel), against
    0.27 given the same file (BPFTRACE_BTF)."""
    sys.path.insert(0, str(ROOT / "tests" / "vm"))
    import lab
    btf = tmp_path / "guest.btf"
    shutil.copy(lab.kernel("arm64", "5.10").btf, btf)
    proc = plyc("list", "--btf", str(btf), "-v", "struct *")
    assert proc.returncode == 0, proc.stderr
    n = compare_definitions(proc.stdout, bt27_out(bpftrace27, ["-lv", "struct *"], [f"BPFTRACE_BTF={btf}"]),
                            loose_names=True)
    assert n > 5000


# --- a script's probes: `plyc list script.bt`, `plyc list -e PROGRAM` (bpftrace -l script.bt)

SCRIPT = """BEGIN { printf("hi\\n"); }
i:s:1 { exit(); }
tracepoint:syscalls:sys_enter_open* { @a = count(); }
kprobe:vfs_rea* { @b = count(); }
software:faults:10 { @c = count(); }
kprobe:vfs_read,kprobe:vfs_write { @d = count(); }
uprobe:/bin/bash:readline { @e = count(); }
END { }
"""


def test_list_a_scripts_probes(tmp_path):
    """Each probe in the script's order, globs expanded as `plyc list`
    expands them; BEGIN and END not listed; a timer by its unit."""
    src = tmp_path / "s.bt"
    src.write_text(SCRIPT)
    out = lines(plyc("list", str(src)))
    opens = lines(plyc("list", "tracepoint:syscalls:sys_enter_open*"))
    reads = lines(plyc("list", "kprobe:vfs_rea*"))
    assert out == ["interval:s:", *opens, *reads, "software:faults:", "kprobe:vfs_read", "kprobe:vfs_write",
                   "uprobe:/bin/bash:readline"]
    assert lines(plyc("list", "-e", SCRIPT, "--lang", "bpftrace")) == out
    # -v: what `plyc list -v` prints under each
    v = lines(plyc("list", "-v", "-e", "tracepoint:syscalls:sys_enter_openat { } kretprobe:vfs_read { }",
                   "--lang", "bpftrace"))
    assert v == lines(plyc("list", "-v", "tracepoint:syscalls:sys_enter_openat")) + \
        ["kretprobe:vfs_read", "    ssize_t retval"]
    # a probe that matches nothing: a note naming it, the others listed
    proc = plyc("list", "-e", "kprobe:no_such_fn_plyc { } kprobe:vfs_read { }", "--lang", "bpftrace")
    assert proc.returncode == 0 and proc.stdout == "kprobe:vfs_read\n"
    assert "<command-line>:1:1: kprobe:no_such_fn_plyc matches nothing on this machine" in proc.stderr
    # a script's error as check says it; a missing script is no pattern
    proc = plyc("list", "-e", "kprobe:vfs_read { @x = nosuch(); }", "--lang", "bpftrace")
    assert proc.returncode == 1 and "<command-line>:1:" in proc.stderr and "Traceback" not in proc.stderr
    proc = plyc("list", str(tmp_path / "nosuch.bt"))
    assert proc.returncode == 1 and "no such script" in proc.stderr


def test_list_a_script_as_bpftrace_027_lists_it(bpftrace27, tmp_path):
    src = tmp_path / "s.bt"
    src.write_text(SCRIPT)
    assert lines(plyc("list", str(src))) == bt27_out(bpftrace27, ["-l", str(src)]).splitlines()
    prog = "tracepoint:syscalls:sys_enter_openat { } fentry:vfs_read { } kretprobe:vfs_read { } iter:task { }"
    for p in (prog.rsplit(" iter", 1)[0], "iter:task { }"):
        assert lines(plyc("list", "-v", "-e", p, "--lang", "bpftrace")) == \
            bt27_out(bpftrace27, ["-lv", "-e", p]).splitlines()


def test_list_v_type_of_a_damaged_btf_is_an_error(tmp_path):
    """A struct that holds itself (a crafted --btf FILE): an error naming
    the file, never a traceback (before: RecursionError)."""
    import struct
    strs = b"\0a\0m\0int\0"
    types = struct.pack("<IIII", 5, 1 << 24, 4, 32)                              # 1: int
    types += struct.pack("<III", 1, (4 << 24) | 1, 8) + struct.pack("<III", 3, 3, 0)   # 2: struct a { anon m; }
    types += struct.pack("<III", 0, (4 << 24) | 1, 8) + struct.pack("<III", 3, 3, 0)   # 3: struct { itself m; }
    hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strs))
    btf = tmp_path / "bad.btf"
    btf.write_bytes(hdr + types + strs)
    assert lines(plyc("list", "--btf", str(btf), "struct *")) == ["struct a"]
    proc = plyc("list", "--btf", str(btf), "-v", "struct a")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == f"plyc: error: --btf {btf}: a type contains itself: not a kernel's BTF\n", proc.stderr
