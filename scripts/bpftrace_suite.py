#!/usr/bin/env python3
"""bpftrace's own runtime test suite as a yardstick for plyc (issue 31).

A development tool, not part of `make test` (CI has no bpftrace checkout):

    python3 scripts/bpftrace_suite.py CHECKOUT [-k PATTERN] [--jobs 1]
        [--engine both|plyc|0.27] [--results FILE] [--rerun | --rerun-failed]
        [--timeout-scale N] [--table] [--skipped]

CHECKOUT is a bpftrace repository (or its tests/ folder); its
tests/runtime/* files describe tests as blocks of directives (NAME, PROG or
RUN with {{BPFTRACE}}, EXPECT*, TIMEOUT, REQUIRES, AFTER, BEFORE, ...).
Each self-contained test (one that needs none of the programs and libraries
the suite builds, testprogs/ and testlibs/) runs once under bpftrace 0.27
(tests/bpftrace_sid.py's chroot) and once under plyc, where {{BPFTRACE}} is
this file run as `--as-bpftrace`: it reads bpftrace's command line, builds
the script with `plyc build` into a tracer named `bpftrace` (`pidof bpftrace`
finds it) and runs that with the tracer's own options.

Results go to a JSON-lines file, one line per test and engine; a later run
skips what is there (--rerun runs it again, --rerun-failed what did not
pass), so a long run can be stopped and resumed, and one test rerun under
plyc alone after a fix (`--engine plyc --rerun -k NAME`). How it runs and
the figure: docs/bpftrace.md, "bpftrace's own runtime suite". The table at the end: test, 0.27's
result, plyc's, and plyc's reason where it fails.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# bpftrace's test engine waits this long for its probes by default; a
# loaded 2-core machine compiles slowly, plyc also builds the tracer first.
ATTACH_TIMEOUT = {"0.27": 60, "plyc": 180}
MARK_ATTACHED = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"
# printed by the plyc shim just before the tracer starts: what comes before
# is the build's (bpftrace's compile-time messages), left out of exact expects
MARK_STARTED = "__BTSUITE_TRACER_STARTED"
BANNER = re.compile(r'^(Attaching \d+ probes?\.\.\.|Attached \d+ probes?|'
                    r'\{"type": ?"attached_probes".*)\n', re.M)
BUILT_BY_SUITE = re.compile(r"\btest(progs|libs)/")
# The syscalls the tracer's event loop waits in (x86_64, aarch64): seen
# there, every probe is attached (runtime-c/load/loader.c attaches first).
WAIT_SYSCALLS = {"x86_64": {7, 232, 271, 281, 441}, "aarch64": {22, 73, 441}}


# --- the test files ----------------------------------------------------------

class Case:
    """One test block: directives by name, EXPECTs in order."""

    def __init__(self, suite, name):
        self.suite, self.name = suite, name
        self.prog = self.run = ""
        self.expects = []          # (mode, text)
        self.timeout = 5
        self.befores, self.after, self.setup, self.cleanup = [], "", "", ""
        self.requires, self.features, self.env, self.arch = [], [], {}, []
        self.min_kernel = self.max_kernel = ""
        self.will_fail = self.new_pidns = False
        self.return_code = 0
        self.skip_if_env = None
        self.localize_ts = None

    @property
    def id(self):
        return f"{self.suite}.{self.name}"

    @property
    def exact(self):
        return any(m in ("file", "json") for m, _ in self.expects)

    def text(self):
        return " ".join([self.prog, self.run, *self.befores, self.after, self.setup, *self.requires])


EXPECT_MODES = {"EXPECT": "text", "EXPECT_NONE": "text_none", "EXPECT_REGEX": "regex",
                "EXPECT_REGEX_NONE": "regex_none", "EXPECT_FILE": "file", "EXPECT_JSON": "json"}


def parse_file(path):
    """The cases of one file: blocks separated by blank lines, '#' lines
    ignored, a line starting with blanks continuing the PROG or EXPECT
    before it (the blanks as wide as its directive and one space dropped)."""
    suite = Path(path).name
    cases, block = [], []
    lines = Path(path).read_text().split("\n")
    for line in lines + [""]:
        if line.startswith("#"):
            continue
        if line.strip():
            block.append(line)
        elif block:
            cases.append(_case(suite, block))
            block = []
    return cases


def _case(suite, block):
    fields, last = [], None
    for line in block:
        if line[:1].isspace() and last in ("PROG", "EXPECT", "EXPECT_REGEX"):
            cut = len(last) + 1
            rest = line[cut:] if line[:cut].isspace() else line.lstrip()
            fields[-1][1] += "\n" + rest
            continue
        key, _, value = line.strip().partition(" ")
        fields.append([key, value.strip() if key not in ("PROG", "RUN") else value])
        last = key
    case = Case(suite, next((v for k, v in fields if k == "NAME"), ""))
    for key, value in fields:
        if key == "PROG":
            case.prog = value
        elif key == "RUN":
            case.run = value
        elif key in EXPECT_MODES:
            case.expects.append((EXPECT_MODES[key], value))
        elif key == "TIMEOUT":
            case.timeout = int(value)
        elif key == "BEFORE":
            case.befores.append(value)
        elif key in ("AFTER", "SETUP", "CLEANUP"):
            setattr(case, key.lower(), value)
        elif key == "REQUIRES":
            case.requires.append(value)
        elif key == "REQUIRES_FEATURE":
            case.features += value.split()
        elif key == "ENV":
            case.env.update(w.split("=", 1) for w in value.split())
        elif key == "ARCH":
            case.arch = [a.strip() for a in value.split("|")]
        elif key in ("MIN_KERNEL", "MAX_KERNEL"):
            setattr(case, key.lower(), value)
        elif key == "WILL_FAIL":
            case.will_fail = True
        elif key == "NEW_PIDNS":
            case.new_pidns = True
        elif key == "RETURN_CODE":
            case.return_code = int(value)
        elif key == "SKIP_IF_ENV_HAS":
            case.skip_if_env = tuple(value.split("=", 1))
        elif key == "LOCALIZE_TIMESTAMPS":
            case.localize_ts = int(value)
        elif key != "NAME":
            raise ValueError(f"{suite}: {case.name}: unknown directive {key}")
    if not case.name or not (case.prog or case.run):
        raise ValueError(f"{suite}: a test without NAME or PROG/RUN: {block[0]}")
    return case


def tests_dir(checkout):
    p = Path(checkout)
    return p / "tests" if (p / "tests" / "runtime").is_dir() else p


def read_suite(checkout):
    runtime = tests_dir(checkout) / "runtime"
    cases = []
    for f in sorted(runtime.iterdir()):
        if f.is_file() and not f.name.startswith("."):
            cases += parse_file(f)
    return cases


def _version(text):
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


def host_arch_ok(case):
    if not case.arch:
        return True
    host = {os.uname().machine.lower(), "le" if sys.byteorder == "little" else "be"}
    pos = {a for a in case.arch if not a.startswith("!")}
    neg = {a[1:] for a in case.arch if a.startswith("!")}
    return (not pos or bool(host & pos)) and not (host & neg)


def why_skipped(case, features):
    """Why this machine does not run the case ("" where it does): the
    checks bpftrace's engine makes, plus the programs the suite builds."""
    if not host_arch_ok(case):
        return "another architecture"
    if BUILT_BY_SUITE.search(case.text()):
        return "needs the suite's built programs"
    if case.new_pidns:
        return "NEW_PIDNS (not run by this runner)"
    kernel = _version(os.uname().release)
    if case.min_kernel and _version(case.min_kernel) > kernel:
        return f"kernel before {case.min_kernel}"
    if case.max_kernel and _version(case.max_kernel) < kernel:
        return f"kernel after {case.max_kernel}"
    if case.skip_if_env and os.environ.get(case.skip_if_env[0]) == case.skip_if_env[1]:
        return "disabled by the environment"
    for f in case.features:
        want = not f.startswith("!")
        if features.get(f.lstrip("!"), False) != want:
            return f"feature {f}"
    for req in case.requires:
        if subprocess.run(req, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=60).returncode != 0:
            return f"requires: {req}"
    return ""


# bpftrace --info's "NAME: yes" pairs, named as REQUIRES_FEATURE names them
# (0.27's --info; the repository's engine reads a later version's spelling)
FEATURE_ALIASES = {"libdw (DWARF support)": "dwarf", "dwunwind (DWARF stack unwinding)": "dwunwind",
                   "blazesym (advanced symbolization)": "blazesym", "Loop support": "loop",
                   "send_signal": "signal", "get_ktime_ns": "get_tai_ns",
                   "bcc library path resolution": "libpath_resolv"}


def features_of(info):
    feats = {}
    for name, value in re.findall(r"([A-Za-z_][\w ()]*?):\s+(yes|no)\b", info):
        feats[FEATURE_ALIASES.get(name.strip(), name.strip())] = value == "yes"
    return feats


# --- checking the output -----------------------------------------------------

def expect_met(mode, text, output, tdir, localize_ts=None):
    if mode in ("text", "text_none"):
        found = re.search(rf"^\s*{re.escape(text)}\s*$", output, re.M) is not None
        return found == (mode == "text")
    if mode in ("regex", "regex_none"):
        found = re.search(text, output, re.M) is not None
        return found == (mode == "regex")
    want = (Path(tdir) / text).read_text().strip()
    got = output.strip()
    if mode == "file":
        if localize_ts is not None:
            want = time.strftime(want, time.localtime(localize_ts))
        return got == want
    try:
        if text.endswith(".ndjson"):
            w, g = want.splitlines(), got.splitlines()
            return len(w) == len(g) and all(json.loads(a) == json.loads(b) for a, b in zip(w, g))
        return len(got.splitlines()) == 1 and json.loads(got) == json.loads(want)
    except ValueError:
        return False


def verdict(case, output, returncode, timed_out, tdir):
    """("pass"|"fail"|"timeout", why)."""
    failed = [(m, t) for m, t in case.expects
              if not expect_met(m, t, output, tdir, case.localize_ts)]
    if not timed_out:
        if returncode != case.return_code and not case.will_fail:
            return "fail", f"exit {returncode}: {first_error(output) or first_unmet(failed)}"
        if returncode == 0 and case.will_fail:
            return "fail", "exit 0 where a failure is expected" + (f"; {first_unmet(failed)}" if failed else "")
    if failed:
        return ("timeout" if timed_out else "fail"), first_error(output) or first_unmet(failed)
    return "pass", ""


def first_unmet(failed):
    if not failed:
        return "the expected lines are there"
    mode, text = failed[0]
    return f"unmet {mode}: {text.splitlines()[0] if text else ''}"[:160]


ERROR_LINE = re.compile(r"^(?:[^\n:]*:\d+:\d+: )?(?:error|ERROR): (.*)$|^btsuite: (.*)$", re.M)


def first_error(output):
    m = ERROR_LINE.search(output)
    return (m.group(1) or m.group(2)).strip()[:160] if m else ""


# --- running one test --------------------------------------------------------

def bpftrace_command(engine, tdir):
    """What {{BPFTRACE}} becomes, as shell words."""
    if engine == "plyc":
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'bpftrace_suite.py'))} --as-bpftrace"
    sys.path.insert(0, str(ROOT / "tests"))
    import bpftrace_sid
    return shlex.join(bpftrace_sid.command([], cwd=tdir, ftrace=True))


def command_line(case, engine, tdir):
    bt = bpftrace_command(engine, tdir)
    if case.run:
        return case.run.replace("{{BPFTRACE}}", bt)
    json_flags = "-q -f json " if case.expects and case.expects[0][0] == "json" else ""
    return f"{bt} {json_flags}-e {shlex.quote(case.prog)}"


# every process group a test started, stopped when the runner is (SIGINT, SIGTERM)
ACTIVE = set()


def _start(*args, **kw):
    proc = subprocess.Popen(*args, start_new_session=True, **kw)
    ACTIVE.add(proc)
    return proc


def _stop_all(signum, frame):
    for proc in list(ACTIVE):
        _killpg(proc.pid, signal.SIGKILL)
    raise SystemExit(128 + signum)


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid):
    """Whether a process of group pgid runs (zombies aside: under `unshare
    --pid` the runner is the namespace's first process and reaps none)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _stop(proc, grace=3):
    """SIGTERM to the process group, then, once the group has ended or
    after grace seconds, SIGKILL to whatever is left of it. The tracer
    prints its exit dump on SIGTERM, maybe after the shell that started it
    has gone (the tracer is exec'd by the shim, a child of the shell), so
    the wait is for the group. Its output is read by the caller."""
    if proc is None:
        return
    if proc.poll() is None:
        _killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (proc.poll() is None or _group_alive(proc.pid)):
            time.sleep(0.05)
    _killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    ACTIVE.discard(proc)


def _children_named(names, timeout):
    """Wait until processes of these names run (BEFORE's programs)."""
    deadline = time.monotonic() + timeout
    want = sorted(n[:15] for n in names)
    while time.monotonic() < deadline:
        comms = []
        for d in os.listdir("/proc"):
            try:
                comms.append(Path(f"/proc/{d}/comm").read_text().strip())
            except OSError:
                continue
        if all(comms.count(n) >= want.count(n) for n in want):
            return True
        time.sleep(0.1)
    return False


def run_case(case, engine, tdir, scale):
    """Runs the case under one engine: (result, why, output)."""
    env = {"PATH": os.environ.get("PATH", ""), "test": case.name, MARK_ATTACHED: "1",
           **({"HOME": os.environ["HOME"]} if "HOME" in os.environ else {}), **case.env}
    befores, after, proc = [], None, None
    output, timed_out = "", False
    try:
        if case.setup and subprocess.run(case.setup, shell=True, cwd=tdir, capture_output=True,
                                         timeout=60).returncode != 0:
            return "fail", "SETUP failed", ""
        for b in case.befores:
            befores.append(_start(b.split(), cwd=tdir,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if befores and not _children_named([os.path.basename(b.split()[-1]) for b in case.befores], 30):
            return "fail", "BEFORE did not start", ""
        cmd = command_line(case, engine, tdir)
        if "{{BEFORE_PID}}" in cmd:
            cmd = cmd.replace("{{BEFORE_PID}}", str(befores[0].pid))
        proc = _start(cmd, shell=True, cwd=tdir, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, errors="backslashreplace")
        lines, done = [], threading.Event()

        def reader():
            for line in proc.stdout:
                lines.append(line)
            done.set()
        threading.Thread(target=reader, daemon=True).start()
        deadline = time.monotonic() + ATTACH_TIMEOUT[engine]
        attached = False
        while not done.wait(0.05):
            if not attached and any(line == MARK_ATTACHED + "\n" for line in lines):
                attached = True
                deadline = time.monotonic() + case.timeout * scale + 1
                if case.after:
                    after = _start(case.after, shell=True, cwd=tdir,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if time.monotonic() > deadline:
                timed_out = True
                break
        if timed_out:
            _stop(proc)
        proc.wait()
        done.wait(10)
        output = "".join(lines)
        if case.exact:
            # what the engine printed before its probes ran is not compared
            mark = MARK_STARTED if engine == "plyc" else MARK_ATTACHED
            at = output.find(mark + "\n")
            output = output[at + len(mark) + 1:] if at >= 0 else output
            if engine == "plyc":
                output = BANNER.sub("", output, count=1)
        output = output.replace(MARK_ATTACHED + "\n", "").replace(MARK_STARTED + "\n", "")
        result, why = verdict(case, output, proc.returncode, timed_out, tdir)
        return result, why, output
    finally:
        _stop(proc)
        for p in befores:
            _stop(p, grace=1)
        _stop(after, grace=1)
        if case.cleanup:
            subprocess.run(case.cleanup, shell=True, cwd=tdir, capture_output=True, timeout=60)


# --- the plyc side of {{BPFTRACE}} ---------------------------------------------

# bpftrace's options that take a value; what plyc does with each option
VALUED = {"-e", "-p", "--pid", "-c", "-o", "--output", "-f", "--format", "-I", "--include", "-B",
          "--mode", "--probe-filter", "--aot"}
TRACER = {"-p": "-p", "--pid": "-p", "-c": "-c", "-o": "-o", "--output": "-o", "-f": "-f",
          "--format": "-f", "-q": "-q", "--dry-run": "--dry-run"}
BUILD = {"-I": "-I", "--include": "--include", "--unsafe": "--unsafe"}
IGNORED = {"--no-warnings", "-k", "-kk", "--verify-llvm-ir", "--no-feature"}


def split_bpftrace_args(argv):
    """bpftrace's command line: (options [(name, value)], words). Options
    may follow words (getopt's permutation) until `--`; after it only
    words (the script's $N and named options)."""
    opts, words, i = [], [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            words += argv[i + 1:]
            break
        if a.startswith("--") and "=" in a:
            opts.append(tuple(a.split("=", 1)))
        elif a in VALUED:
            if i + 1 >= len(argv):
                raise SystemExit(f"btsuite: {a} takes a value")
            opts.append((a, argv[i + 1]))
            i += 1
        elif re.fullmatch(r"-[a-zA-Z]{2,}", a) and a not in IGNORED:
            # bundled short options: -lv, -ve TEXT
            for j, ch in enumerate(a[1:]):
                if f"-{ch}" in VALUED:
                    rest = a[j + 2:]
                    if not rest:
                        i += 1
                        rest = argv[i] if i < len(argv) else ""
                    opts.append((f"-{ch}", rest))
                    break
                opts.append((f"-{ch}", None))
        elif a.startswith("-") and a != "-":
            opts.append((a, None))
        else:
            words.append(a)
        i += 1
    return opts, words


def as_bpftrace(argv):
    """Runs what `bpftrace ARGV` asks with plyc: the build's messages on
    stderr, the tracer exec'd... as a child, so that its attach can be told
    (MARK_ATTACHED, as bpftrace prints it for its test engine)."""
    os.environ["PYTHONPATH"] = str(ROOT)
    opts, words = split_bpftrace_args(argv)
    names = [n for n, _ in opts]
    plyc = [sys.executable, "-m", "plyc"]
    if "--version" in names or "-V" in names:
        os.execvp(sys.executable, plyc + ["-V"])
    if "-l" in names or "--list" in names:
        # a pattern, a script file or -e PROGRAM: plyc list (its --lang for the two last)
        program = [v for n, v in opts if n == "-e"]
        cmd = plyc + ["list", "--lang", "bpftrace", *(["-v"] if "-v" in names else []),
                      *(["-e", program[-1]] if program else words[:1])]
        os.execvp(cmd[0], cmd)
    script, build, tracer, program = None, [], [], None
    for name, value in opts:
        if name == "-e":
            program = value
        elif name in TRACER:
            tracer += [TRACER[name], *([value] if value is not None else [])]
        elif name in BUILD:
            build += [BUILD[name], *([value] if value is not None else [])]
        elif name in ("-l", "--list"):
            tracer.append("--list")
        elif name not in IGNORED:
            print(f"btsuite: bpftrace's option {name} has no plyc equivalent in this runner", file=sys.stderr)
            return 64
    if program is None:
        if not words:
            print("btsuite: no program", file=sys.stderr)
            return 64
        script, words = words[0], words[1:]
        if script == "-":
            program = sys.stdin.read()
            script = None
    work = tempfile.mkdtemp(prefix="btsuite-")
    out = os.path.join(work, "bpftrace")
    source = ["-e", program] if script is None else [script]
    build_cmd = plyc + ["-q", "build", "--lang", "bpftrace", *source, "-o", out, *build]
    if subprocess.run(build_cmd, cwd=os.getcwd(), env={**os.environ, "PYTHONPATH": str(ROOT)}).returncode:
        subprocess.run(["rm", "-rf", work])
        return 1
    print(MARK_STARTED, flush=True)
    # The tracer replaces this process, as bpftrace is the process the
    # test started (its pid, its signals, process 1 of `unshare --pid`); a
    # child tells its attach and removes its folder.
    pid = os.getpid()
    if os.fork() == 0:
        try:
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(s, signal.SIG_IGN)    # meant for the tracer, the group's
            _watch(pid, out, bool(os.environ.get(MARK_ATTACHED)))
        finally:
            subprocess.run(["rm", "-rf", work])
            os._exit(0)
    os.execv(out, [out, *tracer, "--", *words])


def _watch(pid, exe, tell):
    """Until the tracer (pid, once it runs exe) first waits in its event
    loop (then says so, if tell) or is gone."""
    waits = WAIT_SYSCALLS.get(os.uname().machine, set())
    while os.getppid() == pid:
        try:
            running = os.readlink(f"/proc/{pid}/exe") == os.path.realpath(exe)
            first = Path(f"/proc/{pid}/syscall").read_text().split()[0]
        except (OSError, IndexError):
            running, first = False, ""
        if running and first.isdigit() and int(first) in waits:
            if tell:
                print(MARK_ATTACHED, flush=True)
            return
        time.sleep(0.01)


# --- the run and its table -----------------------------------------------------

def load_results(path):
    res = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                res[(r["test"], r["engine"])] = r
    return res


def table(cases, results, out=sys.stdout):
    rows = [(c.id, results.get((c.id, "0.27"), {}).get("result", "-"),
             results.get((c.id, "plyc"), {}).get("result", "-"),
             results.get((c.id, "plyc"), {}).get("why", "")) for c in cases]
    w = max([len(r[0]) for r in rows] + [4])
    print(f"{'test':{w}}  {'0.27':8}  {'plyc':8}  plyc's reason", file=out)
    for r in rows:
        print(f"{r[0]:{w}}  {r[1]:8}  {r[2]:8}  {r[3]}", file=out)
    for eng in ("0.27", "plyc"):
        got = [results[(c.id, eng)]["result"] for c in cases if (c.id, eng) in results]
        print(f"{eng}: {got.count('pass')} of {len(got)} pass", file=out)


def main(argv):
    if argv[:1] == ["--as-bpftrace"]:
        return as_bpftrace(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", help="a bpftrace repository (git archive HEAD tests | tar -x)")
    ap.add_argument("-k", dest="pattern", help="only tests whose SUITE.NAME matches this regex")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--engine", choices=("both", "plyc", "0.27"), default="both")
    ap.add_argument("--results", type=Path, default=Path("bpftrace-suite-results.jsonl"))
    ap.add_argument("--rerun", action="store_true", help="run again what --results holds")
    ap.add_argument("--rerun-failed", action="store_true", help="run again what --results holds as failed")
    ap.add_argument("--timeout-scale", type=float, default=3, help="TIMEOUT times this (a loaded machine)")
    ap.add_argument("--table", action="store_true", help="only print the table of --results")
    ap.add_argument("--skipped", action="store_true", help="list the tests not run here, and why")
    args = ap.parse_args(argv)
    tdir = tests_dir(args.checkout).resolve()
    cases = read_suite(tdir)
    if args.pattern:
        cases = [c for c in cases if re.search(args.pattern, c.id)]
    results = load_results(args.results)
    if args.table:
        table([c for c in cases if (c.id, "plyc") in results or (c.id, "0.27") in results], results)
        return 0
    sys.path.insert(0, str(ROOT / "tests"))
    import bpftrace_sid
    bpftrace_sid.ensure()
    info = subprocess.run(bpftrace_sid.command(["--info"], ftrace=True), capture_output=True, text=True)
    features = features_of(info.stdout + info.stderr)
    run, lock = [], threading.Lock()
    for c in cases:
        why = why_skipped(c, features)
        if why:
            if args.skipped:
                print(f"skip {c.id}: {why}")
        else:
            run.append(c)
    if args.skipped:
        return 0
    signal.signal(signal.SIGTERM, _stop_all)
    signal.signal(signal.SIGINT, _stop_all)
    engines = ["0.27", "plyc"] if args.engine == "both" else [args.engine]
    def due(c, e):
        old = results.get((c.id, e))
        return old is None or args.rerun or (args.rerun_failed and old["result"] != "pass")
    todo = [(c, e) for c in run for e in engines if due(c, e)]
    print(f"{len(run)} of {len(cases)} tests run here; {len(todo)} runs to do", file=sys.stderr)

    def one(item):
        c, e = item
        t0 = time.monotonic()
        result, why, output = run_case(c, e, tdir, args.timeout_scale)
        r = {"test": c.id, "engine": e, "result": result, "why": why, "seconds": round(time.monotonic() - t0, 1),
             "output": output[-2000:], "date": time.strftime("%Y-%m-%d")}
        with lock:
            results[(c.id, e)] = r
            with open(args.results, "a") as f:
                f.write(json.dumps(r) + "\n")
            print(f"{e:5} {result:8} {c.id} {why}", file=sys.stderr, flush=True)

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(one, todo))
    table(run, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
