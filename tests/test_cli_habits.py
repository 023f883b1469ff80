"""bpftrace's habits on plyc's command line (issue 30): `plyc run -e TEXT --
ARGS`, a `#!/usr/bin/env plyc` script run as a program, -V, -I DIR and
--include FILE, and the tracer's -p PID filtering kernel probes as bpftrace
0.27's does. Each against this machine's kernel."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VERSION = __import__("re").search(r'__version__ = "([^"]+)"', (ROOT / "plyc/__init__.py").read_text()).group(1)


def plyc(*args, env=None, cwd=ROOT, timeout=180):
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))   # from any cwd
    return subprocess.run([sys.executable, "-m", "plyc", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def cache_env(tmp_path):
    return dict(os.environ, PLYC_CACHE=str(tmp_path / "cache"))


@pytest.mark.parametrize("argv, script, tracer", [
    (["-e", "X", "--", "-c", "CMD"], None, ["-c", "CMD"]),             # was: script "-c", tracer ["CMD"]
    (["-e", "X", "p1", "--", "-c", "CMD", "p2"], None, ["-c", "CMD", "p1", "p2"]),
    (["-e", "X", "p1", "--", "--aa=20", "--bb", "p2"], None, ["p1", "--aa=20", "--bb", "p2"]),
    (["-e", "X", "hello", "--lang", "bpftrace", "--", "-q"], None, ["-q", "hello"]),
    (["-eX", "a", "b"], None, ["a", "b"]),
    (["x.ply", "--", "-c", "CMD"], "x.ply", ["-c", "CMD"]),
    (["x.ply", "-c", "CMD"], "x.ply", ["-c", "CMD"]),
    (["--", "x.ply", "-c", "CMD"], "x.ply", ["-c", "CMD"]),
    (["x.ply", "--", "-e", "X"], "x.ply", ["-e", "X"]),
])
def test_run_splits_plycs_arguments_from_the_tracers(argv, script, tracer):
    sys.path.insert(0, str(ROOT))
    from plyc import cli
    from plyc.commands import run
    args = run.parse_args(cli.parser(), ["run", *argv])
    assert (args.script, run.tracer_argv(args)) == (script, tracer)


def test_V_prints_the_version_as_bpftrace():
    for flag in ("-V", "--version"):
        proc = plyc(flag)
        assert (proc.returncode, proc.stdout) == (0, f"plyc v{VERSION}\n"), proc.stderr


@pytest.mark.bpf
def test_run_e_gives_the_tracer_every_argument_after_dashes(workload, cache_env):
    """Was: argparse took -c for the (unused) script, the tracer got only
    the command and traced forever."""
    proc = plyc("run", "--lang", "bpftrace", "-e",
                'tracepoint:syscalls:sys_enter_getppid /comm == "plyc-work"/ { @n = count(); }',
                "--", "-c", f"{workload} getppid 3", env=cache_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("\n@n: 3\n"), proc.stdout


@pytest.mark.bpf
def test_run_e_positional_before_dashes_is_the_scripts(cache_env):
    """bpftrace's `-e TEXT p1 -- ...`: p1 is $1, the rest the tracer's."""
    proc = plyc("run", "--lang", "bpftrace", "-e", 'BEGIN { printf("<%s>\\n", str($1)); exit(); }',
                "hello", "--", "-q", env=cache_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<hello>\n") and "Attaching" not in proc.stdout, proc.stdout


@pytest.fixture
def plyc_on_path(tmp_path):
    """A `plyc` command on $PATH (what `pip install` gives) running this checkout."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "plyc").write_text(f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m plyc "$@"\n')
    (bindir / "plyc").chmod(0o755)
    return dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PLYC_CACHE=str(tmp_path / "cache"))


def test_every_example_is_an_executable_plyc_script():
    examples = sorted((ROOT / "examples").glob("*.ply"))
    assert examples
    for path in examples:
        assert path.read_text().startswith("#!/usr/bin/env plyc\n"), path
        assert os.access(path, os.X_OK), f"{path} is not executable"


@pytest.mark.bpf
def test_an_example_runs_through_its_shebang(workload, plyc_on_path):
    """`./examples/syscall-count.ply -c CMD` is `plyc run FILE -- -c CMD`."""
    proc = subprocess.run(["./examples/syscall-count.ply", "-c", f"{workload} getppid 3"], cwd=ROOT,
                          capture_output=True, text=True, env=plyc_on_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    counts = dict(line.rsplit(":", 1) for line in proc.stdout.splitlines() if line.startswith("{ "))
    # plyc-work's system calls: at least exec's, its three getppid and exit's
    assert int(counts["{ plyc-work       }"]) >= 5, proc.stdout


@pytest.mark.bpf
def test_a_script_file_with_arguments_runs_as_a_program(tmp_path, plyc_on_path):
    script = tmp_path / "hello.bt"
    script.write_text('#!/usr/bin/env plyc\nBEGIN { printf("%s %d\\n", str($1), $2); exit(); }\n')
    script.chmod(0o755)
    proc = subprocess.run([str(script), "-q", "hi", "42"], capture_output=True, text=True,
                          env=plyc_on_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("hi 42\n"), proc.stdout


@pytest.mark.parametrize("argv, want", [
    (["--lang", "bpftrace", "F", "a", "-x"], ["run", "--lang", "bpftrace", "F", "--", "a", "-x"]),
    (["--lang=bpftrace", "F"], ["run", "--lang=bpftrace", "F", "--"]),
    (["-q", "--lang", "bpftrace", "F", "a"], ["run", "-q", "--lang", "bpftrace", "F", "--", "a"]),
    (["F", "--lang", "ply"], ["run", "F", "--", "--lang", "ply"]),     # after FILE: the tracer's
    (["-v", "build", "F"], ["-v", "build", "F"]),                    # a command: as it is
    (["--lang", "bpftrace", "nofile"], ["--lang", "bpftrace", "nofile"]),
    (["-e", "F"], ["-e", "F"]),                                      # not run's option alone
])
def test_plyc_options_before_a_script_file(tmp_path, monkeypatch, argv, want):
    """`#!/usr/bin/env -S plyc --lang bpftrace` runs a bpftrace script
    whose name has no .bt (`plyc --lang bpftrace FILE ARGS`): run's
    options before FILE are plyc's (was: argparse's invalid choice
    'bpftrace')."""
    sys.path.insert(0, str(ROOT))
    from plyc import cli
    monkeypatch.chdir(tmp_path)
    (tmp_path / "F").write_text("BEGIN { exit(); }\n")
    assert cli.script_form(argv, cli.parser()) == want


@pytest.mark.bpf
def test_a_bpftrace_script_without_bt_runs_through_env_s(tmp_path, plyc_on_path):
    script = tmp_path / "hello"
    script.write_text('#!/usr/bin/env -S plyc --lang bpftrace\n'
                      'BEGIN { @n[str($1)] = count(); exit(); }\n')
    script.chmod(0o755)
    proc = subprocess.run([str(script), "hi"], capture_output=True, text=True, env=plyc_on_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "@n[hi]: 1", proc.stdout      # bpftrace's output, not ply's


def test_a_missing_file_is_no_command(tmp_path):
    proc = plyc(str(tmp_path / "nothing.ply"))
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def write_headers(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "plyc_test_one.h").write_text("#define PLYC_ONE 41\n")
    (tmp_path / "two.h").write_text("#define PLYC_TWO (PLYC_ONE + 1)\n")


def test_I_dir_finds_a_scripts_include(tmp_path):
    write_headers(tmp_path)
    script = tmp_path / "i.bt"
    script.write_text('#include <plyc_test_one.h>\nBEGIN { printf("%d\\n", PLYC_ONE); exit(); }\n')
    without = plyc("check", str(script))
    assert without.returncode == 1 and "plyc_test_one.h" in without.stderr, without.stderr
    proc = plyc("check", "-I", "inc", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.bpf
def test_include_files_come_before_the_script(tmp_path, cache_env):
    """--include FILE: a file from the working directory, or a header found
    through -I; in order, before the script's own #include lines."""
    write_headers(tmp_path)
    proc = plyc("run", "-I", "inc", "--include", "plyc_test_one.h", "--include", "two.h", "--lang", "bpftrace",
                "-e", 'BEGIN { printf("%d\\n", PLYC_TWO); exit(); }', cwd=tmp_path, env=cache_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("42\n"), proc.stdout


def test_include_refused_for_ply_and_odd_names(tmp_path):
    proc = plyc("check", "-I", str(tmp_path), "-e", "BEGIN { exit(0); }")
    assert proc.returncode == 1 and "-I and --include are options of" in proc.stderr, proc.stderr
    proc = plyc("check", "--include", 'a"b.h', "--lang", "bpftrace", "-e", "BEGIN { exit(); }")
    assert proc.returncode != 0 and "#include line" in proc.stderr and "Traceback" not in proc.stderr


# -p PID: a predicate on every kernel probe (bpftrace 0.27's man page, -p);
# this machine's kernel has neither kprobes nor BPF trampolines, so a
# tracepoint (the filter is the same prologue in every kind's program).
# Two processes call getpgid(2) once told to (a line on stdin), after the
# tracer's BEGIN said it is attached; the target's exit ends the tracer.
CALLER = "import os, sys; sys.stdin.readline(); [os.getpgid(0) for _ in range(N)]"


def filtered_counts(argv_for_pid) -> tuple:
    """(the target's pid, what the tracer argv_for_pid(pid) printed after
    its BEGIN's "ready"): two processes call getpgid(2), 5 and 7 times."""
    target, other = [subprocess.Popen([sys.executable, "-c", CALLER.replace("N", str(n))], stdin=subprocess.PIPE,
                                      text=True) for n in (5, 7)]
    try:
        tracer = subprocess.Popen(argv_for_pid(target.pid), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        while True:     # "Attaching 1 probe..." (0.17's) or none (0.27's and plyc's are on stderr)
            line = tracer.stdout.readline()
            if line in ("ready\n", ""):
                break
        assert line == "ready\n"
        for proc in (target, other):
            proc.stdin.write("go\n")
            proc.stdin.close()
        target.wait(timeout=60)
        other.wait(timeout=60)
        rest = tracer.stdout.read()
        assert tracer.wait(timeout=60) == 0
    finally:
        for proc in (target, other):
            proc.kill()
    return target.pid, rest.strip()


P_SCRIPT = 'BEGIN { printf("ready\\n"); }\ntracepoint:syscalls:sys_enter_getpgid { @[pid] = count(); }\n'


@pytest.mark.bpf
def test_p_filters_kernel_probes_as_bpftrace(tmp_path):
    script = tmp_path / "p.bt"
    script.write_text(P_SCRIPT)
    out = tmp_path / "p"
    built = plyc("build", str(script), "-o", str(out), timeout=120)
    assert built.returncode == 0, built.stderr
    pid, printed = filtered_counts(lambda pid: [str(out), "-p", str(pid)])
    assert printed == f"@[{pid}]: 5", printed


@pytest.mark.bpf
def test_p_as_bpftrace_027_filters(tmp_path, bpftrace27):
    """The same script under sid's bpftrace 0.27 -p: the same one line."""
    script = tmp_path / "p.bt"
    script.write_text(P_SCRIPT)
    pid, printed = filtered_counts(lambda pid: bpftrace27(["-p", str(pid), str(script)], cwd=tmp_path))
    assert printed == f"@[{pid}]: 5", printed


def test_the_tracers_help_says_what_p_does(tmp_path):
    out = tmp_path / "h"
    for suffix, want in ((".bt", "trace only PID's events"), (".ply", "$target is PID")):
        script = tmp_path / f"h{suffix}"
        script.write_text("BEGIN { exit(); }\n" if suffix == ".bt" else "BEGIN { exit(0); }\n")
        built = plyc("build", str(script), "-o", str(out), timeout=120)
        assert built.returncode == 0, built.stderr
        h = subprocess.run([str(out), "-h"], capture_output=True, text=True, timeout=30)
        assert h.returncode == 0 and want in h.stdout, h.stdout


# bpftrace's environment variables (0.27's man page; each config variable
# as BPFTRACE_NAME, 0.17's names too): config ones go into the build, over
# the script's config block; those a build does not use are warned about.

def lowered(src, env):
    from plyc import driver
    return driver.lower(src, "e.bt", driver.Options(env=env))


def test_environment_config_variables_win_over_the_config_block():
    src = 'config = { max_strlen = 8; max_map_keys = 16 }\nBEGIN { @[str($1)] = count(); exit(); }\n'
    assert lowered(src, {}).strsize == 9       # 0.27's 8 and a byte that tells a cut string
    prog = lowered(src, {"BPFTRACE_MAX_STRLEN": "24", "BPFTRACE_MAP_KEYS_MAX": "32", "BPFTRACE_PERF_RB_PAGES": "64",
                         "BPFTRACE_PRINT_MAPS_ON_EXIT": "false", "BPFTRACE_LICENSE": "Dual BSD/GPL",
                         "BPFTRACE_MISSING_PROBES": "warn"})
    assert prog.strsize == 25       # (the byte more, as above)
    assert prog.limits == dict(map_entries=32, buffer_size=64 * 4096, print_maps_on_exit=False)
    assert (prog.license, prog.missing_probes) == ("Dual BSD/GPL", "warn")
    assert lowered("BEGIN { exit(); }\n", {"BPFTRACE_STRLEN": "100"}).strsize == 101     # 0.17's name


def test_environment_stack_mode():
    from plyc.frontends.bpftrace import config
    items, warnings = config.from_environment({"BPFTRACE_STACK_MODE": "perf", "PATH": "/bin"})
    assert [(i.name, i.value.name) for i in items] == [("BPFTRACE_STACK_MODE", "perf")] and warnings == []


def test_environment_variables_plyc_does_not_use_are_warned_about(tmp_path):
    env = dict(os.environ, BPFTRACE_LOG_SIZE="100", BPFTRACE_CACHE_USER_SYMBOLS="PER_PID", BPFTRACE_MAX_PROBES="9",
               BPFTRACE_VMLINUX="/boot/vmlinux", BPFTRACE_KERNEL_SOURCE=str(tmp_path), BPFTRACE_CAT_BYTES_MAX="9",
               BPFTRACE_MAX_STRLEN="16")
    proc = plyc("check", "--lang", "bpftrace", "-e", "BEGIN { exit(); }", env=env)
    assert proc.returncode == 0, proc.stderr
    warned = sorted(line.split()[2] for line in proc.stderr.splitlines())
    assert warned == ["BPFTRACE_CACHE_USER_SYMBOLS", "BPFTRACE_LOG_SIZE", "BPFTRACE_MAX_PROBES", "BPFTRACE_VMLINUX"], \
        proc.stderr
    assert all(line.startswith("plyc: warning: ") and " is not used by plyc: " in line
               for line in proc.stderr.splitlines())
    # a ply script reads none of them
    assert plyc("check", "-e", "BEGIN { exit(0); }", env=env).stderr == ""



def test_the_environment_is_read_once_a_build(monkeypatch):
    # its warnings and its config items were each read by a call of their own
    from plyc import driver
    from plyc.frontends.bpftrace import config
    calls = []
    real = config.from_environment
    monkeypatch.setattr(config, "from_environment", lambda env: calls.append(env) or real(env))
    driver.compile_source("BEGIN { exit(); }\n", "f.bt", driver.Options(env={"BPFTRACE_STRLEN": "100"}))
    assert len(calls) == 1, calls

def test_a_bad_environment_value_is_an_error():
    env = dict(os.environ, BPFTRACE_MAX_STRLEN="lots")
    proc = plyc("check", "--lang", "bpftrace", "-e", "BEGIN { exit(); }", env=env)
    assert proc.returncode == 1 and "error: BPFTRACE_MAX_STRLEN takes a number" in proc.stderr, proc.stderr
    env = dict(os.environ, BPFTRACE_STACK_MODE="fancy")
    proc = plyc("check", "--lang", "bpftrace", "-e", "BEGIN { exit(); }", env=env)
    assert proc.returncode == 1 and "invalid value for stack_mode" in proc.stderr, proc.stderr


@pytest.mark.bpf
def test_environment_max_strlen_in_a_tracer(tmp_path, cache_env):
    script = tmp_path / "s.bt"
    script.write_text('config = { max_strlen = 8 }\nBEGIN { printf("%s|\\n", str($1)); exit(); }\n')
    # 0.27's strings: max_strlen characters and its `..` trailer when cut
    for env, want in (({}, "01234567..|"), ({"BPFTRACE_MAX_STRLEN": "12"}, "0123456789ab..|")):
        proc = plyc("run", str(script), "--", "-q", "0123456789abcdef", env=dict(cache_env, **env), timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(want + "\n"), proc.stdout


@pytest.mark.bpf
def test_the_tracer_reads_max_cat_bytes_where_it_runs(tmp_path):
    """cat()'s limit is the run's: BPFTRACE_MAX_CAT_BYTES (0.27's name) or
    BPFTRACE_CAT_BYTES_MAX (0.17's), in the tracer's environment."""
    data = tmp_path / "data.txt"
    data.write_text("0123456789" * 3)
    script = tmp_path / "cat.bt"
    script.write_text(f'BEGIN {{ cat("{data}"); printf("|\\n"); exit(); }}\n')
    out = tmp_path / "cat"
    built = plyc("build", str(script), "-o", str(out), timeout=120)
    assert built.returncode == 0, built.stderr
    for env, want in (({}, "0123456789" * 3), ({"BPFTRACE_MAX_CAT_BYTES": "5"}, "01234"),
                      ({"BPFTRACE_CAT_BYTES_MAX": "7"}, "0123456")):
        proc = subprocess.run([str(out), "-q"], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **env))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(want + "|\n"), (env, proc.stdout)


@pytest.mark.bpf
def test_cpid_without_a_command_is_warned_of(tmp_path):
    """bpftrace 0.27.1 runs a script reading cpid without -c, reads 0 and
    warns ("No child command (`-c`); cpid is zero"); 0.17 refuses it. Was:
    plyc's tracer printed 0 without a word (a `/pid == cpid/` then matches
    the idle task). Now it warns once at start; a script that asks
    has_cpid() first, a -c or a -p (plyc's cpid is -p's process too) is
    not warned of."""
    built = {}
    for name, src in (("reads", 'BEGIN { print(cpid); exit(); }\n'),
                      ("asks", 'BEGIN { if (has_cpid()) { print(cpid); } else { print("none"); } exit(); }\n')):
        (tmp_path / f"{name}.bt").write_text(src)
        proc = plyc("build", str(tmp_path / f"{name}.bt"), "-o", str(tmp_path / name), timeout=120)
        assert proc.returncode == 0, proc.stderr
        built[name] = str(tmp_path / name)
    said = "no command runs (-c CMD): the script's cpid is 0"
    out = subprocess.run([built["reads"]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["0"], out
    assert f"reads: warning: {said}\n" in out.stderr and out.stderr.count("cpid") == 1, out.stderr
    out = subprocess.run([built["reads"], "-c", "true"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() != ["0"] and "cpid" not in out.stderr, out
    out = subprocess.run([built["reads"], "-p", str(os.getpid())], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == [str(os.getpid())] and "cpid" not in out.stderr, out
    out = subprocess.run([built["asks"]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["none"] and "cpid" not in out.stderr, out


def test_run_as_a_user_says_tracing_needs_root_before_building(monkeypatch, capsys):
    """Not root: the tracer would refuse to trace, so `plyc run` says so
    first, as bpftrace does at once (was: the first build's wait, then
    the tracer's refusal); its -h and --version still run."""
    sys.path.insert(0, str(ROOT))
    from plyc import cli, driver
    from plyc.commands import run
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    built, ran = [], []
    monkeypatch.setattr(driver, "build", lambda *a, **k: built.append(a))
    monkeypatch.setattr(run, "execute", lambda path, argv: ran.append(argv))
    assert cli.main(["run", "--lang", "bpftrace", "-e", "BEGIN { exit(); }", "--", "-c", "ls -h"]) == 1
    err = capsys.readouterr().err
    assert err == "plyc: error: tracing needs root (CAP_BPF and CAP_PERFMON); run it with sudo\n" and not built
    monkeypatch.setattr(run.runcache, "tracer", lambda key, name, build: "/nonexistent/t")
    for help_ in (["-h"], ["--version"], ["-q", "--help"]):
        assert cli.main(["run", "--lang", "bpftrace", "-e", "BEGIN { exit(); }", "--", *help_]) in (0, None)
    assert ran == [["-h"], ["--version"], ["-q", "--help"]]


def test_a_script_on_standard_input(tmp_path):
    """`-` for the script: its text from stdin, as `bpftrace -` reads it
    (`plyc run --lang bpftrace - <<'EOF'`); was: cannot read -."""
    def plyc_stdin(*args, text):
        return subprocess.run([sys.executable, "-m", "plyc", *args], input=text, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=tmp_path, timeout=180)
    bad = plyc_stdin("check", "--lang", "bpftrace", "-", text='BEGIN { printf("%d\\n"); }\n')
    assert bad.returncode == 1 and bad.stderr.startswith(
        "<stdin>:1:9: error: the format has 1 conversion but 0 arguments follow\n"), bad.stderr
    built = plyc_stdin("build", "--lang", "bpftrace", "-", text='BEGIN { printf("hi\\n"); exit(); }\n')
    assert built.returncode == 0 and os.access(tmp_path / "tracer", os.X_OK), built.stderr
    empty = plyc_stdin("check", "-", text="")
    assert empty.returncode == 1 and "no probes" in empty.stderr, empty.stderr


@pytest.mark.bpf
def test_run_a_script_on_standard_input(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "plyc", "run", "--lang", "bpftrace", "-", "--", "-q", "yo"],
                          input='BEGIN { printf("hi %s\\n", str($1)); exit(); }\n', capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), PLYC_CACHE=str(tmp_path / "cache")),
                          timeout=180)
    assert proc.returncode == 0 and proc.stdout.startswith("hi yo\n"), proc.stderr
