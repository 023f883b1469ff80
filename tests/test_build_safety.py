"""The build's safety (docs/safety.md): hostile file names, outputs,
options, signals and caches give a clear error or the right behaviour, never
a Python traceback, an injected line of C, or a replaced device."""
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plyc import bounds, cli, driver, runcache  # noqa: E402
from plyc.commands import common  # noqa: E402
from plyc.codegen import render  # noqa: E402
from plyc.codegen.cescape import C, c_comment, c_string  # noqa: E402

SCRIPT = 'BEGIN { printf("%s\\n", "hello"); exit(); }\n'
BT_SCRIPT = 'BEGIN { printf("hello\\n"); exit(); }\n'


def plyc(*args, cwd=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plyc", *args], cwd=cwd, capture_output=True,
                          timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))


def clear_error(proc, *needles):
    """A failed run that said what is wrong in plyc's words, no traceback."""
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1, (proc.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    for n in needles:
        assert n in err, err
    return err


def compile_and_run_c(tmp_path, body: str) -> bytes:
    src = tmp_path / "t.c"
    src.write_text("#include <stdio.h>\n#include <string.h>\n" + body)
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Wtrigraphs", "-Werror", "-o", str(exe), str(src)],
                   check=True, capture_output=True)
    return subprocess.run([str(exe)], capture_output=True, check=True).stdout


# --- the escaper ---------------------------------------------------------------

HOSTILE = [bytes(range(256)), b'a",};int x;', b"\\x41", b"\x01" + b"234", b"??/\n??=??(", b"*/ /* */",
           b"\xff\xfe not utf-8", "é ü".encode(), b"\\", b"\0mid\0"]


def test_c_string_holds_any_bytes(tmp_path):
    """Each literal compiles (-Wall -Werror) and holds exactly its bytes:
    an octal escape does not take in the digits after it as a hex one would."""
    lits = ", ".join(c_string(h) for h in HOSTILE)
    sizes = ", ".join(str(len(h)) for h in HOSTILE)
    out = compile_and_run_c(tmp_path, f"""
static const char *const s[] = {{ {lits} }};
static const int n[] = {{ {sizes} }};
int main(void) {{ for (unsigned i = 0; i < sizeof(n) / sizeof(n[0]); i++) fwrite(s[i], 1, n[i], stdout); return 0; }}
""")
    assert out == b"".join(HOSTILE)


def test_c_string_of_text_with_surrogates_is_its_bytes():
    """A non-UTF-8 file name (os.fsdecode's surrogates) is its original bytes."""
    name = os.fsdecode(b"\xff\xfex.ply")
    assert c_string(name) == c_string(b"\xff\xfex.ply") == '"\\377\\376x.ply"'


def test_c_comment_cannot_open_or_close_a_comment(tmp_path):
    texts = [b"printf(\"globbing /tmp/*\\n\")", b"*/ int evil; /*", b"/*/", b"**//**", b"a\nint evil;",
             b"ends in a backslash \\", b"??/", b"\xff\x00"]
    for t in texts:
        text = c_comment(t)
        assert "/*" not in text and "*/" not in text and "\n" not in text
    body = "\n".join(f"/* {c_comment(t)} */" for t in texts)
    out = compile_and_run_c(tmp_path, body + '\nint main(void) { puts("ok"); return 0; }\n')
    assert out == b"ok\n"


def test_templates_print_only_escaped_text():
    """The C templates' finalize: numbers, identifiers and cescape's C
    pass; any other text is refused (a plyc bug, not injected C)."""
    assert render.finalize(7) == 7 and render.finalize("plyc_map_1") == "plyc_map_1"
    assert render.finalize(c_string('a"b')) == '"a\\"b"'
    for raw in ('a"b', "x.ply", "a */ b", "1 + 1", "&x"):
        with pytest.raises(render.UnescapedText):
            render.finalize(raw)
    assert isinstance(c_comment("x"), C)


# --- hostile script names --------------------------------------------------------

INJECTION = ('a",};int system(const char*);__attribute__((constructor))static void f(void)'
             '{system("id>x");}const struct plyc_program p2={.script="x.ply')
NAMES = [INJECTION, 'my"x.ply', "\\x41.ply", "new\nline.ply", "??-.ply", "tri??=graph??).ply",
         os.fsdecode(b"bad\xff\xfeutf8.ply")]


@pytest.mark.parametrize("name", NAMES, ids=["injection", "quote", "hex-escape", "newline", "trigraph",
                                              "trigraph2", "not-utf8"])
def test_hostile_script_names_build_and_print_back_verbatim(tmp_path, name):
    src = tmp_path / "src"
    src.mkdir()
    path = os.path.join(os.fsencode(src), os.fsencode(name))
    with open(path, "w") as f:
        f.write(SCRIPT)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", path, "-o", os.fsencode(run_dir / "t")],
                          capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    ver = subprocess.run([run_dir / "t", "--version"], capture_output=True, cwd=run_dir, timeout=30)
    assert ver.returncode == 0
    assert ver.stdout == b"t (plyc 0.1.0, from " + os.fsencode(name) + b")\n"
    assert os.listdir(run_dir) == ["t"]      # the constructor did not run: no file x


def test_statement_comment_with_a_glob_in_a_string_builds(tmp_path):
    """`/*` on a statement's line (7 of Debian's .bt tools) used to be
    -Werror,-Wcomment in the statement's comment."""
    script = tmp_path / "glob.bt"
    script.write_text('BEGIN { printf("globbing /tmp/*\\n"); printf("*/ /* */\\n"); exit(); }\n')
    proc = plyc("build", str(script), "-o", str(tmp_path / "glob"), "--keep", str(tmp_path / "gen"))
    assert proc.returncode == 0, proc.stderr.decode()
    bpf_c = (tmp_path / "gen" / "glob.bpf.c").read_text()
    assert "/* glob.bt:1: BEGIN { printf(\"globbing /tmp/ *\\n\");" in bpf_c


# --- -o and --keep ---------------------------------------------------------------

@pytest.fixture
def private_tmp(tmp_path):
    """$TMPDIR for plyc: where its /tmp/plyc-* work directories would stay."""
    d = tmp_path / "tmpdir"
    d.mkdir()
    return d


def leftovers(*dirs) -> list:
    return [p.name for d in dirs for p in Path(d).iterdir()
            if p.name.startswith("plyc-") or p.name.endswith(".plyc-tmp") or p.name.endswith(".tmp")]


def test_output_must_be_a_regular_file(tmp_path, private_tmp):
    """-o naming a device, a FIFO, a socket, a directory (or a link to a
    device) is refused, and the node is left as it was."""
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    out = tmp_path / "out"
    out.mkdir()
    os.mknod(out / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mkfifo(out / "fifo")
    import socket
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(out / "sock"))
    (out / "dir").mkdir()
    os.symlink(out / "null", out / "link")
    cases = {"null": "a character device", "fifo": "a FIFO", "sock": "a socket", "dir": "a directory",
             "link": "a character device"}
    before = {n: os.lstat(out / n) for n in cases}
    for name, kind in cases.items():
        proc = plyc("build", str(script), "-o", str(out / name), env=dict(TMPDIR=str(private_tmp)))
        clear_error(proc, f"-o {out / name}: is {kind}")
    for name, st in before.items():
        now = os.lstat(out / name)
        assert (now.st_mode, now.st_ino, now.st_rdev) == (st.st_mode, st.st_ino, st.st_rdev), name
    sock.close()
    assert leftovers(out, private_tmp) == []


def test_output_errors_are_clear(tmp_path, private_tmp):
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    clear_error(plyc("build", str(script), "-o", ""), "-o: an empty file name")
    clear_error(plyc("build", str(script), "-o", str(tmp_path / "no" / "t")), "no directory")
    (tmp_path / "file").write_text("x")
    clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), "--keep", str(tmp_path / "file")),
                "--keep", "is not a directory")
    clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), "--keep", "/proc/self/nope/x"),
                "--keep /proc/self/nope/x: cannot make the directory")
    assert not (tmp_path / "t").exists()


def test_output_replaces_a_regular_file_through_a_private_temporary(tmp_path, private_tmp):
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    out = tmp_path / "t"
    out.write_text("old")
    (tmp_path / "t.tmp").write_text("someone else's")     # the old fixed temporary name is not touched
    proc = plyc("build", str(script), "-o", str(out), env=dict(TMPDIR=str(private_tmp)))
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes()[:4] == b"\x7fELF" and os.access(out, os.X_OK)
    assert (tmp_path / "t.tmp").read_text() == "someone else's"
    assert leftovers(private_tmp) == [] and not list(tmp_path.glob("*.plyc-tmp"))


def test_argdist_output_must_be_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    proc = plyc("argdist", "-C", "p::do_sys_open(int dfd):int:dfd", "-o", str(tmp_path / "fifo"))
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "is a FIFO" in err and "Traceback" not in err, err
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def blocking_clang(tmp_path: Path) -> tuple:
    """A clang for $PLYC_CLANG that says it has started (a marker file) and
    then waits to be killed: a build using it is surely under way, and not
    finished, when the marker is there, however loaded the machine."""
    marker = tmp_path / "clang-started"
    wrapper = tmp_path / "clang-blocks"
    wrapper.write_text(f"#!/bin/sh\necho $$ > {marker}.tmp && mv {marker}.tmp {marker}\nexec sleep 3600\n")
    wrapper.chmod(0o755)
    return wrapper, marker


def gone(pid: int) -> bool:
    """pid has ended (a zombie waiting for init to reap it counts: after
    Ctrl-C, Python's subprocess kills the child but leaves the reaping)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_for(marker: Path, proc: subprocess.Popen, timeout: float = 300) -> None:
    """Until marker exists (the build got there) or proc ended early."""
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the build never started its compiler"
        time.sleep(0.01)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_during_a_build_leaves_nothing(tmp_path, private_tmp, sig, code):
    """Killed while clang runs: the work directory and the temporary
    tracer are removed, the compiler is gone, the exit is quiet."""
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    out = tmp_path / "out"
    out.mkdir()
    clang, marker = blocking_clang(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "plyc", "build", str(script), "-o", str(out / "t")],
                            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(private_tmp),
                                                             PLYC_CLANG=str(clang)))
    wait_for(marker, proc)
    proc.send_signal(sig)
    err = proc.communicate(timeout=120)[1].decode()
    assert proc.returncode == code, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert leftovers(out, private_tmp) == [] and not (out / "t").exists()
    assert gone(int(marker.read_text())), "the blocked compiler outlived the build"


@pytest.mark.bpf
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_plyc_runs_build_leaves_the_cache_usable(tmp_path, private_tmp, sig, code):
    """`plyc run` stopped while its tracer's BPF compiles (Ctrl-C, a
    timeout's SIGTERM): quiet, the compiler gone, no tracer (nor a
    temporary one) in the run cache, and the next run builds and runs."""
    clang, marker = blocking_clang(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(private_tmp), PLYC_CACHE=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "plyc", "run", "--lang", "bpftrace", "-e", BT_SCRIPT]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env, PLYC_CLANG=str(clang)))
    wait_for(marker, proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert "Traceback" not in err.decode() and "internal error" not in err.decode() and not out, err
    assert gone(int(marker.read_text())), "the blocked compiler outlived plyc run"
    runs = tmp_path / "cache" / "run"
    entries = [p for p in runs.rglob("*") if p.is_file()] if runs.exists() else []
    assert entries == [] and leftovers(private_tmp) == [], entries
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0 and again.stdout.startswith("hello\n"), again.stderr


@pytest.mark.parametrize("sig, raised", [(signal.SIGTERM, "Terminated"), (signal.SIGINT, "KeyboardInterrupt")])
def test_a_signal_while_a_compiler_starts_kills_it(monkeypatch, sig, raised):
    """Deterministic: the signal lands after the fork, before Popen returns
    (subprocess.run has no process to kill then: under load the blocked
    compiler of the test above ran on as an orphan). children.run holds it
    until the child is plyc's, then kills and reaps it."""
    from plyc import children
    started = []
    real = subprocess.Popen

    def popen_then_signal(*a, **k):
        proc = real(*a, **k)
        started.append(proc.pid)
        os.kill(os.getpid(), sig)         # delivered while still "in" Popen
        return proc
    monkeypatch.setattr(children.subprocess, "Popen", popen_then_signal)
    saved = {s: signal.signal(s, children.on_signal) for s in children.SIGNALS}
    try:
        with pytest.raises(BaseException) as info:
            children.run(["sleep", "3600"], capture_output=True)
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    assert type(info.value).__name__ == raised
    assert started and gone(started[0])


def test_a_signal_another_thread_takes_still_stops_the_compiler(tmp_path):
    """The kernel may hand SIGTERM to any thread (toolchain.at_once runs
    compilers in two): one delivered to another thread did not interrupt the
    main thread's wait on its compiler, and the build hung with a blocked
    one. Now the main thread wakes up to run the handler."""
    import threading
    from plyc import children
    marker = tmp_path / "started"
    stopped, watchdog = threading.Event(), []

    def other_thread():
        while not marker.exists():           # the compiler is running: a marker, not a guess
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
        if not stopped.wait(60):
            # the main thread never ran the handler: end the "compiler" (its
            # wait returns, the handler runs late) and say so
            watchdog.append("the signal waited for the compiler to end")
            os.kill(int(marker.read_text()), signal.SIGKILL)
    saved = {s: signal.signal(s, children.on_signal) for s in children.SIGNALS}
    t = threading.Thread(target=other_thread, daemon=True)
    try:
        t.start()
        with pytest.raises(children.Terminated):
            children.run(["sh", "-c", f"echo $$ > {marker}.tmp && mv {marker}.tmp {marker} && exec sleep 3600"],
                         capture_output=True)
    finally:
        stopped.set()
        t.join(timeout=60)
        for s, h in saved.items():
            signal.signal(s, h)
    assert watchdog == [] and gone(int(marker.read_text()))


# --- the script, the guard -------------------------------------------------------

def test_a_script_too_large_is_refused(tmp_path):
    clear_error(plyc("build", "/dev/zero", "-o", str(tmp_path / "z")), "/dev/zero is larger than 16 MiB")
    big = tmp_path / "big.ply"
    with open(big, "wb") as f:
        f.truncate(common.SCRIPT_MAX + 1)
    clear_error(plyc("check", str(big)), "larger than 16 MiB")
    clear_error(plyc("check", str(tmp_path)), "cannot read")


def test_the_guard_turns_an_unexpected_exception_into_one_line(monkeypatch, capsys):
    def boom(*a, **k):
        raise ValueError("a plyc bug\nsecond line")
    monkeypatch.setattr(driver, "lower", boom)
    assert cli.main(["check", "-e", "BEGIN { exit(); }"]) == 2
    err = capsys.readouterr().err
    assert err == "plyc: internal error, please report: ValueError: a plyc bug second line\n"


def test_keyboard_interrupt_is_exit_130_quietly(monkeypatch, capsys):
    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(driver, "lower", interrupted)
    assert cli.main(["check", "-e", "BEGIN { exit(); }"]) == 130
    assert capsys.readouterr().err == ""


def test_sigint_during_start_up_is_quiet(tmp_path):
    """Ctrl-C while Python loads plyc, parses or builds: never a traceback
    (the issue's KeyboardInterrupt)."""
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    for delay in (0.03, 0.06, 0.1, 0.15, 0.25, 0.4, 0.7):
        proc = subprocess.Popen([sys.executable, "-m", "plyc", "build", str(script), "-o", str(tmp_path / "t")],
                                stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=120)[1].decode()
        if ("init_import_site" in err or "Could not import runpy module" in err
                or err.startswith("Fatal Python error: init_")
                or (err.startswith("Traceback") and 'File "/' not in err)):
            # Python's own start (its standard streams, site.py, runpy itself
            # or runpy finding the module: only <frozen ...> frames), before
            # any of plyc's code runs
            continue
        # -2: the signal came before Python's own handler was installed
        assert proc.returncode in (130, -signal.SIGINT, 0), (delay, proc.returncode, err)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (delay, err)


def test_the_issues_reproductions_never_reach_the_guard(tmp_path):
    """Each of issue 22's inputs on this side: a clear error, no
    traceback, no internal error."""
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    (tmp_path / "file").write_text("x")
    runs = [
        ("build", str(script), "-o", str(tmp_path)),
        ("build", "/dev/zero", "-o", str(tmp_path / "z")),
        ("build", str(script), "-o", str(tmp_path / "t"), "--keep", str(tmp_path / "file")),
        ("build", str(script), "-o", str(tmp_path / "t"), "--keep", "/proc/1/nope/x"),
        ("build", str(script), "--strsize", "99999999"),
        ("build", str(script), "--map-entries", "99999999999"),
        ("build", str(script), "-o", ""),
        ("argdist", "-z", "999999999", "-C", "p::do_sys_open(int dfd):int:dfd", "-o", str(tmp_path / "a")),
    ]
    for args in runs:
        proc = plyc(*args)
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 1, (args, err)
        assert "Traceback" not in err and "internal error" not in err, (args, err)


def test_an_argdist_label_that_is_not_utf8_builds(tmp_path):
    """The label (`#...`) is the report's header: c_string keeps its bytes
    (render.py raised UnicodeEncodeError)."""
    label = os.fsdecode(b"#\xff\x01\"*/")
    proc = plyc("argdist", "-C", "p::do_sys_open(int dfd):int:dfd" + label, "-o", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert b'\xff\x01"*/' in (tmp_path / "a").read_bytes()   # the label's bytes, as given


# --- bounds ----------------------------------------------------------------------

BUILD_BOUNDS = [("--strsize", bounds.STRSIZE), ("--map-entries", bounds.MAP_ENTRIES),
                ("--hist-entries", bounds.HIST_ENTRIES), ("--stack-entries", bounds.STACK_ENTRIES)]


@pytest.mark.parametrize("option, limits", BUILD_BOUNDS)
def test_size_options_are_bounded(tmp_path, option, limits):
    low, high = limits
    for bad in (low - 1, high + 1):
        clear_error(plyc("build", "-e", "BEGIN { exit(); }", option, str(bad), "-o", str(tmp_path / "t")),
                    f"{option} must be from {low} to {high}, not {bad}")
    ns = cli.argparse.Namespace
    base = dict(strsize=128, map_entries=1, hist_entries=1, stack_entries=1, buffer_size=4096, lang=None,
                target="x86_64", verbose=False, keep=None, no_strip=False, btf=None, sysroot=None, libc="glibc",
                unsafe=False)
    for good in (low, high):
        common.options(ns(**dict(base, **{option[2:].replace("-", "_"): good})))


def test_buffer_size_is_bounded(tmp_path):
    for bad, says in ((2048, "from 4096 to"), (3 << 12, "power of two"), (1 << 31, "from 4096 to")):
        clear_error(plyc("build", "-e", "BEGIN { exit(); }", "--buffer-size", str(bad), "-o", str(tmp_path / "t")),
                    "--buffer-size", says)


@pytest.mark.parametrize("option, bad, says", [("-z", "999999999", "-z must be from 1 to 32768"),
                                               ("-z", "0", "-z must be from 1"),
                                               ("-i", "0", "-i must be from 1"),
                                               ("-n", "0", "-n must be from 1"),
                                               ("-n", str(1 << 31), "-n must be from 1 to 2147483647"),
                                               ("-p", "4294967295", "-p must be from 1 to 4194304"),
                                               ("-d", "nan", "-d must be a positive number"),
                                               ("-d", "-1", "-d must be a positive number")])
def test_argdist_options_are_bounded(tmp_path, option, bad, says):
    proc = plyc("argdist", option, bad, "-C", "p::do_sys_open(int dfd):int:dfd", "-o", str(tmp_path / "a"))
    err = proc.stderr.decode()
    assert proc.returncode == 1 and says in err and "Traceback" not in err, err


# --- caches ----------------------------------------------------------------------

def test_a_cache_others_may_write_is_not_used(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o777)
    env = dict(PLYC_CACHE=str(cache))
    clear_error(plyc("build", "-e", "BEGIN { exit(); }", "-o", str(tmp_path / "t"), env=env),
                f"plyc's cache {cache} is writable by group and others (mode 777): not used")
    # what can go without the cache does: the ply grammar is built in memory
    assert plyc("check", "-e", "BEGIN { exit(); }", env=env).returncode == 0
    assert list(cache.iterdir()) == []
    os.chmod(cache, 0o700)
    os.chown(cache, 54321, 54321)
    clear_error(plyc("build", "-e", "BEGIN { exit(); }", "-o", str(tmp_path / "t"), env=env),
                "is owned by uid 54321, not by you")
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    clear_error(plyc("build", "-e", "BEGIN { exit(); }", "-o", str(tmp_path / "t"), env=dict(PLYC_CACHE=str(link))),
                "is not a directory")


def test_a_new_cache_is_private(tmp_path):
    cache = tmp_path / "new" / "cache"
    assert plyc("check", "-e", "BEGIN { exit(); }", env=dict(PLYC_CACHE=str(cache))).returncode == 0
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


def test_run_cache_key_is_the_script_options_and_toolchain(tmp_path, monkeypatch):
    opts = driver.Options(strsize=128)
    k = runcache.key("src", "a.bt", opts)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOME_UNRELATED", "1")
    monkeypatch.setenv("PWD", str(tmp_path))
    assert runcache.key("src", "a.bt", driver.Options(strsize=128, verbose=True)) == k
    assert runcache.key("src", "a.bt", driver.Options(strsize=64)) != k
    assert runcache.key("src2", "a.bt", opts) != k
    monkeypatch.setenv("BPFTRACE_STRLEN", "32")
    assert runcache.key("src", "a.bt", opts) != k
    monkeypatch.delenv("BPFTRACE_STRLEN")
    monkeypatch.setenv("CC", "clang")
    assert runcache.key("src", "a.bt", opts) != k


def test_run_cache_key_covers_the_runtime_and_templates():
    """The key digests the tracer's runtime C and the templates too, which a
    checkout symlinks into the package (a changed runtime-c/ file was a
    stale `plyc run` tracer)."""
    names = {str(p) for p in runcache.plyc_files()}
    assert {"runtime-c/load/loader.c", "runtime-c/plyc_rt.h", "runtime-c/bpf/plyc.bpf.h",
            "templates/loader.c.j2", "driver.py"} <= names


def test_run_cache_keeps_the_newest_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "cache"))
    for i in range(runcache.KEEP + 5):
        e = runcache.entry(f"k{i:02d}")
        (e / "tracer").write_bytes(b"x" * 100)
        os.utime(e, (1000 + i, 1000 + i))
    removed = runcache.evict()
    assert sorted(p.name for p in removed) == [f"k{i:02d}" for i in range(5)]
    assert len(list(runcache.root().iterdir())) == runcache.KEEP
    removed = runcache.evict(size_max=250)
    assert sorted(p.name for p in runcache.root().iterdir()) == [f"k{i:02d}" for i in (runcache.KEEP + 3,
                                                                                       runcache.KEEP + 4)]


# --- the tracer's --metrics address ---------------------------------------------

@pytest.fixture(scope="module")
def metrics_tracer(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("metrics")
    (folder / "m.bt").write_text("BEGIN { @a = count(); }\n")
    proc = plyc("build", str(folder / "m.bt"), "-o", str(folder / "m"))
    assert proc.returncode == 0, proc.stderr.decode()
    return folder / "m"


def serve(tracer: Path, spec: str) -> subprocess.CompletedProcess:
    return subprocess.run([tracer, "--metrics", spec, "-d", "0.1"], capture_output=True, text=True, timeout=30)


@pytest.mark.bpf
def test_metrics_ipv6_address_needs_brackets_and_port(metrics_tracer):
    out = serve(metrics_tracer, "::1")
    assert out.returncode == 1 and "--metrics ::1: an IPv6 address needs a port: [::1]:PORT" in out.stderr, \
        out.stderr
    out = serve(metrics_tracer, "[::1]:0")
    assert out.returncode == 0, out.stderr


MALFORMED_METRICS = [
    ("127.0.0.1: 80", "--metrics 127.0.0.1: 80: the port must be a number from 0 to 65535, not ' 80'"),
    ("+0", "--metrics +0: the port must be a number from 0 to 65535, not '+0'"),
    (" 80", "the port must be a number from 0 to 65535, not ' 80'"),
    ("0x50", "the port must be a number from 0 to 65535, not '0x50'"),
    ("65536", "the port must be a number from 0 to 65535, not '65536'"),
    ("127.0.0.1:", "the port must be a number from 0 to 65535, not ''"),
    ("[127.0.0.1]:0", "--metrics [127.0.0.1]:0: brackets are for an IPv6 address: 127.0.0.1:PORT"),
    ("[::1]", "--metrics takes [ADDR:]PORT, not '[::1]'"),
    ("localhost:80", "'localhost' is not an IPv4 or IPv6 address"),
]


@pytest.mark.bpf
def test_metrics_malformed_addresses_and_ports_are_refused(metrics_tracer):
    """Before: `127.0.0.1: 80`, `+0` and `[127.0.0.1]:0` served metrics."""
    for spec, says in MALFORMED_METRICS:
        out = serve(metrics_tracer, spec)
        assert out.returncode == 1 and says in out.stderr and "serving" not in out.stderr, (spec, out.stderr)
    for spec, bound in [("127.0.0.1:0", "127.0.0.1:"), ("[::1]:0", "[::1]:"), ("0", "0.0.0.0:")]:
        out = serve(metrics_tracer, spec)
        assert out.returncode == 0 and f"serving metrics at http://{bound}" in out.stderr, (spec, out.stderr)


# --- --btf FILE that is no BTF: named, never a hang ----------------------------------

def not_btf_files(tmp_path) -> list:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "dir").mkdir()
    return [(str(tmp_path / "dir"), "is a directory"), ("/dev/null", "is a device"), (str(fifo), "is a FIFO"),
            ("/etc/passwd", "no BTF in /etc/passwd")]


def test_build_btf_that_is_not_btf_is_named(tmp_path):
    """Before: a FIFO blocked the build; a directory was `cannot read`."""
    script = tmp_path / "k.bt"
    script.write_text("kfunc:do_nanosleep { @n = count(); }\n")
    for path, says in not_btf_files(tmp_path):
        clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), "--btf", path, timeout=60),
                    f"--btf {path}: ", says)


@pytest.mark.bpf
def test_tracer_btf_that_is_not_btf_is_named(tmp_path):
    """Before: `loading the BPF programs failed: Input/output error` (or
    `Unknown error 4001`) without the file's name, and a FIFO blocked."""
    script = tmp_path / "t.bt"
    script.write_text("tracepoint:syscalls:sys_enter_nanosleep { @n = count(); }\n")
    assert plyc("build", str(script), "-o", str(tmp_path / "t")).returncode == 0
    cases = not_btf_files(tmp_path)
    cases[-1] = ("/etc/passwd", "is not kernel BTF")
    for path, says in cases:
        out = subprocess.run([tmp_path / "t", "--btf", path, "-d", "0.1"], capture_output=True, text=True,
                             timeout=30)
        assert out.returncode == 1 and out.stderr.startswith(f"t: error: --btf {path}: {says}"), (path, out.stderr)
    out = subprocess.run([tmp_path / "t", "--btf", "/sys/kernel/btf/vmlinux", "-d", "0.1"], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr


def test_private_folders_and_the_umask_are_made_and_read_in_one_place():
    # output.py made its work folder (mkdtemp) beside safefile's private
    # folders, and read the umask (os.umask twice over) in two functions
    import re
    plyc_dir = ROOT / "plyc"
    for what, pattern in (("mkdtemp", r"\bmkdtemp\("), ("umask", r"\bos\.umask\(")):
        where = sorted(str(p.relative_to(plyc_dir)) for p in plyc_dir.rglob("*.py") if re.search(pattern, p.read_text()))
        assert where == ["safefile.py"], (what, where)
    from plyc import safefile
    path = safefile.new_private_folder("plyc-test-")
    try:
        st = os.lstat(path)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    finally:
        os.rmdir(path)
    real = os.umask(0)
    os.umask(real)
    assert safefile.umask() == real
