"""make bench's "desk" section: plyc used the way bpftrace is at a desk,
one-liners typed again and again, against bpftrace itself (Debian's 0.17,
and sid's 0.27 from the tests' chroot). Paired runs, A and B alternately
(the order swapped every repetition), medians with [min-max]:

- new: a one-liner plyc has not built before, `plyc run --lang bpftrace -e`,
  against `bpftrace -e` with the same text (each run's text is new: the pid
  in its filter changes), from exec to the probes attached and to the end
  of the run (the script ends itself 100 ms after it starts);
- cached: the same one-liner again (`plyc run`, its tracer in the run
  cache) against that tracer run directly: what plyc adds to it;
- check: `plyc check` of the one-liner, exec to exit, against bpftrace's
  start-up (exec to attached, from "new").

Each run's CPU time is kept too (`cpu_s`: user + system of the tool and
of the children it waited for, the compilers included, to its end): on a
machine other work loads, the figure that moves least.

"Attached" is the kernel's view, as the main tables' start-up: the first
time the tool's program on sys_enter_getppid has run (its run_cnt in
/proc/PID/fdinfo, with the harness calling getppid() every ~1 ms while it
waits). plyc run execs the tracer, and the 0.27 command execs down to
bpftrace, so the pid started is the one that attaches. The time the tool
printed "Attaching N probes..." is kept too (`marker_s` in the JSON): both
print it before they attach.

plyc runs as an installed package does: with its bytecode (.pyc) written
(PYTHONDONTWRITEBYTECODE is dropped from its environment, and a first run
writes them), with a cache of its own in which one build and one run have
run (the C runtime library and the run's precompiled header built: plyc
used before, not on first install). Python's
own start-up on this machine (`python3 -c pass`) is measured beside it: it
is the floor of every plyc command.

    python3 bench/run.py --desk-only [--reps N]   # this section alone (~2 min)
"""
from __future__ import annotations

import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "tests"))
from fdinfo import bpf_fdinfo  # noqa: E402
import bpftrace_sid  # noqa: E402

STATS = "/proc/sys/kernel/bpf_stats_enabled"
ONE_LINER = "tracepoint:syscalls:sys_enter_getppid /pid != {pid}/ {{ @[comm] = count(); }} interval:ms:100 {{ exit(); }}"
TIMEOUT = 120.0
# Goals (issue 30): the new one-liner attached no later than bpftrace; the
# cached one at most this much over its tracer alone; `plyc check` at most
# this share of bpftrace's start-up ("well under" it).
CACHED_OVER_MAX_MS = 50.0
CHECK_SHARE_MAX = 0.5


def log(msg: str):
    print(msg, file=sys.stderr, flush=True)


def set_stats(on: bool):
    with open(STATS, "w") as f:
        f.write("1" if on else "0")


def has_run(pid: int) -> bool:
    """Whether any BPF program the process holds has run (bpf_stats' run_cnt)."""
    for info in bpf_fdinfo(pid, "prog"):
        try:
            if int(info.get("run_cnt", "0")) > 0:
                return True
        except ValueError:
            continue
    return False


def timed(cmd: list, env: dict, cwd: Path, attach: bool) -> dict:
    """One run of cmd: seconds from exec to its "Attaching" line (marker_s),
    to its program's first run (attach_s, when attach) and to its exit
    (total_s); the CPU time it and its children took (cpu_s: user + system,
    the compilers included: the figure a loaded machine changes least);
    its exit status and output."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    out, err, marker = [], [], []

    def read(stream, into, mark):
        for line in stream:
            if mark and not marker and b"Attach" in line:      # 0.17: "Attaching N probes...", 0.27: "Attached N probes"
                marker.append(time.monotonic() - t0)
            into.append(line)

    readers = [threading.Thread(target=read, args=(proc.stdout, out, True), daemon=True),
               threading.Thread(target=read, args=(proc.stderr, err, True), daemon=True)]
    for r in readers:
        r.start()
    attached = None
    try:
        while attach and attached is None and proc.poll() is None and time.monotonic() - t0 < TIMEOUT:
            os.getppid()       # the one-liner's event
            if has_run(proc.pid):
                attached = time.monotonic() - t0
                break
            time.sleep(0.001)
        proc.wait(TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    total = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for r in readers:
        r.join(5)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"attach_s": attached, "marker_s": marker[0] if marker else None, "total_s": total, "cpu_s": cpu,
            "exit": proc.returncode, "stdout": b"".join(out).decode(errors="replace")[-2000:],
            "stderr": b"".join(err).decode(errors="replace")[-2000:]}


def summary(values: list):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


class Desk:
    def __init__(self, tmp: Path, reps: int, with_027: bool):
        self.tmp, self.reps = tmp, reps
        self.cache = tmp / "plyc-cache"
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["PLYC_CACHE"] = str(self.cache)
        self.env["PYTHONPATH"] = str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"]
                                              if os.environ.get("PYTHONPATH") else "")
        self.notes = []
        self.pids = iter(random.Random(os.getpid()).sample(range(100000, 4000000), 10000))
        self.bpftrace = shutil.which("bpftrace")
        if not self.bpftrace:
            self.notes.append("bpftrace (0.17) not installed: its columns are empty")
        self.sid = None
        if with_027:
            try:
                self.sid = bpftrace_sid.ensure(log=log)
            except (bpftrace_sid.Unavailable, RuntimeError) as e:
                self.notes.append(f"bpftrace-0.27 left out: {e}")

    def plyc(self, *args) -> list:
        return [sys.executable, "-m", "plyc", *args]

    def new_script(self) -> str:
        return ONE_LINER.format(pid=next(self.pids))

    def tools_new(self, script: str) -> dict:
        """The commands that run a one-liner, by tool."""
        cmds = {"plyc run": self.plyc("run", "--lang", "bpftrace", "-e", script)}
        if self.bpftrace:
            cmds["bpftrace"] = [self.bpftrace, "-e", script]
        if self.sid:
            cmds["bpftrace-0.27"] = bpftrace_sid.command(["-e", script], cwd=self.tmp)
        return cmds

    def run(self, cmd: list, attach: bool = True, what: str = "") -> dict:
        r = timed(cmd, self.env, self.tmp, attach)
        if r["exit"] != 0 or (attach and r["attach_s"] is None):
            why = (r["stderr"].strip().splitlines() or ["(nothing on stderr)"])[-1]
            self.notes.append(f"{what}: exit {r['exit']}" + ("" if r["attach_s"] or not attach else ", never attached")
                              + f": {why}")
        elif attach and "@[" not in r["stdout"]:
            self.notes.append(f"{what}: printed no map: {r['stdout'][-200:]!r}")
        return r

    def prepare(self):
        """plyc used before: its bytecode written, its runtime library and
        the run's precompiled loader header built (a build and a run of
        other one-liners), in the bench's own cache."""
        for cmd in (("build", "--lang", "bpftrace", "-e", self.new_script(), "-o", str(self.tmp / "warm")),
                    ("run", "--lang", "bpftrace", "-e", self.new_script())):
            proc = subprocess.run(self.plyc(*cmd), env=self.env, cwd=self.tmp, capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=TIMEOUT)
            if proc.returncode:
                raise RuntimeError(f"plyc {cmd[0]} failed: {proc.stderr[-2000:]}")

    def measure(self) -> dict:
        set_stats(True)
        self.prepare()
        raw = {"new": {}, "cached": {}, "check": {}, "python": []}
        cached_script = self.new_script()
        for rep in range(self.reps):
            # new: every tool on its own new one-liner, in turn
            tools = list(self.tools_new(""))
            order = tools[rep % len(tools):] + tools[:rep % len(tools)]
            for tool in order:
                log(f"bench: desk {rep + 1}/{self.reps}: new one-liner, {tool}")
                cmd = self.tools_new(self.new_script())[tool]
                raw["new"].setdefault(tool, []).append(self.run(cmd, what=f"new one-liner, {tool}"))
            # cached: plyc run of a built one-liner against its tracer alone
            first = self.run(self.plyc("run", "--lang", "bpftrace", "-e", cached_script), what="cached, plyc run")
            tracer = self.cached_tracer()
            pair = [("plyc run", self.plyc("run", "--lang", "bpftrace", "-e", cached_script)),
                    ("tracer", [tracer] if tracer else None)]
            if first["exit"] or not tracer:
                continue
            for tool, cmd in pair if rep % 2 == 0 else pair[::-1]:
                log(f"bench: desk {rep + 1}/{self.reps}: cached one-liner, {tool}")
                raw["cached"].setdefault(tool, []).append(self.run(cmd, what=f"cached one-liner, {tool}"))
            # check, and Python's own start-up
            for tool, cmd in (("plyc check", self.plyc("check", "--lang", "bpftrace", "-e", self.new_script())),
                              ("python3 -c pass", [sys.executable, "-c", "pass"]))[::1 if rep % 2 == 0 else -1]:
                raw["check"].setdefault(tool, []).append(self.run(cmd, attach=False, what=tool))
        return raw

    def cached_tracer(self):
        """The tracer plyc run keeps for the cached one-liner (the newest
        entry of the bench's own run cache)."""
        found = sorted((self.cache / "run").glob("*/tracer"), key=lambda p: p.parent.stat().st_mtime)
        return found[-1] if found else None


def results(raw: dict, notes: list) -> dict:
    def figures(runs: list) -> dict:
        return {k: summary([r[k] * 1e3 if r[k] is not None else None for r in runs if r["exit"] == 0])
                for k in ("attach_s", "marker_s", "total_s", "cpu_s")}
    res = {"script": ONE_LINER.format(pid="N"), "notes": notes,
           "new": {t: figures(rs) for t, rs in raw["new"].items()},
           "cached": {t: figures(rs) for t, rs in raw["cached"].items()},
           "check": {t: figures(rs) for t, rs in raw["check"].items()},
           "runs": {part: {t: [{k: v for k, v in r.items() if k not in ("stdout", "stderr")} for r in rs]
                           for t, rs in raw[part].items()} for part in ("new", "cached", "check")}}
    # The cached run's overhead, pair by pair (the same repetition's runs).
    pairs = zip(raw["cached"].get("plyc run", []), raw["cached"].get("tracer", []))
    res["cached_over_ms"] = summary([(a["attach_s"] - b["attach_s"]) * 1e3 for a, b in pairs
                                     if a["exit"] == b["exit"] == 0 and a["attach_s"] and b["attach_s"]])
    return res


def med(figs, key):
    s = (figs or {}).get(key)
    return s["median"] if s else None


def goals(res: dict) -> list:
    out = []
    plyc_new = med(res["new"].get("plyc run"), "attach_s")
    for bt in ("bpftrace", "bpftrace-0.27"):
        theirs = med(res["new"].get(bt), "attach_s")
        if plyc_new is not None and theirs is not None:
            out.append({"goal": f"desk: a new one-liner through plyc run attached no later than {bt} -e",
                        "met": plyc_new <= theirs, "detail": f"{plyc_new:.0f} ms vs {theirs:.0f} ms"})
    over = (res.get("cached_over_ms") or {}).get("median")
    if over is not None:
        out.append({"goal": f"desk: a cached one-liner adds at most {CACHED_OVER_MAX_MS:.0f} ms to its tracer's start-up",
                    "met": over <= CACHED_OVER_MAX_MS, "detail": f"{over:.0f} ms"})
    check = med(res["check"].get("plyc check"), "total_s")
    theirs = med(res["new"].get("bpftrace"), "attach_s")
    if check is not None and theirs is not None:
        out.append({"goal": f"desk: plyc check of a one-liner at most {CHECK_SHARE_MAX:g} of bpftrace's start-up",
                    "met": check <= CHECK_SHARE_MAX * theirs, "detail": f"{check:.0f} ms vs {theirs:.0f} ms"})
    return out


def cell(s) -> str:
    return f"{s['median']:.0f} [{s['min']:.0f}-{s['max']:.0f}]" if s else "-"


def print_tables(res: dict):
    print(f"\n== desk: one-liners, as at a desk (ms, median [min-max]) ==\n{res['script']}")
    rows = [("new one-liner", "new"), ("cached one-liner", "cached"), ("check / start-up", "check")]
    print(f"{'':34s} {'to attached':>18s} {'Attaching line':>18s} {'whole run':>18s} {'CPU, whole run':>18s}")
    for title, part in rows:
        for tool, figs in res[part].items():
            print(f"{title + ': ' + tool:34s} {cell(figs['attach_s']):>18s} {cell(figs['marker_s']):>18s} "
                  f"{cell(figs['total_s']):>18s} {cell(figs.get('cpu_s')):>18s}")
    if res.get("cached_over_ms"):
        print(f"{'cached: plyc run over its tracer':34s} {cell(res['cached_over_ms']):>18s}")
    for n in dict.fromkeys(res["notes"]):
        print(f"note: {n}")
    for g in res["goals"]:
        print(f"{'met   ' if g['met'] else 'MISSED'} {g['goal']} ({g['detail']})")


def main(tmp: Path, reps: int, with_027: bool = True) -> dict:
    """The desk section: its figures (the JSON's "desk"), tables printed."""
    with open(STATS) as f:
        was = f.read().strip()
    desk = Desk(tmp, reps, with_027)
    try:
        raw = desk.measure()
    finally:
        set_stats(was == "1")
    res = results(raw, desk.notes)
    res["goals"] = goals(res)
    return res
