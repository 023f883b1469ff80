#!/usr/bin/env python3
"""plyc's benchmarks: the same five jobs done by a plyc tracer (built from
ply and from bpftrace syntax), by bpftrace (and its AOT runtime) and by a
hand-written libbpf tool (the reference, bench/reference/), measured side by
side on this machine. Needs root. See bench/README.md for what each
figure is and how it is taken.

    bench/run.py            the full run (about 28 minutes on a busy 2-core VM)
    bench/run.py --quick    a smoke run of a few seconds per workload
    bench/run.py --smoke    build everything, run each tool once on one workload

The tables go to stdout, the same figures as JSON to bench/results/latest.json
(--out FILE elsewhere)."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))   # its own modules, also when a test loads this file

from fdinfo import bpf_fdinfo, maps_memlock  # noqa: E402
ROOT = BENCH.parent
# bpftrace 0.27 (Debian sid's) runs from the chroot the tests use, built
# once into ~/.cache/plyc/bpftrace-sid (tests/bpftrace_sid.py).
sys.path.insert(0, str(ROOT / "tests"))
import bpftrace_sid  # noqa: E402
import desk  # noqa: E402  (the desk section: one-liners against bpftrace -e)
import sizes  # noqa: E402  (where a musl tracer's bytes go, by target)
# plyc-musl: the same plyc tracer linked with musl (--libc musl) instead of glibc.
# plyc-bt: plyc's tracer built from the bpftrace script (workloads/NAME.bt).
# bpftrace: Debian 12's, 0.17. bpftrace-0.27: Debian sid's, from a chroot.
# bpftrace-aot: that script compiled by `bpftrace --aot`, run by bpftrace-aotrt.
TOOLS = ("plyc", "plyc-musl", "plyc-bt", "reference", "bpftrace", "bpftrace-0.27", "bpftrace-aot")
# The bpftrace tools: print every map at exit; bpftrace-0.27's failures to
# run a workload are results (notes), as bpftrace-aot's are.
BPFTRACES = ("bpftrace", "bpftrace-0.27", "bpftrace-aot")
# The ratios of medians each table ends with: (tool, against, column title).
RATIOS = (("plyc", "reference", "plyc/ref"), ("plyc", "bpftrace", "plyc/bpftrace"),
          ("plyc-bt", "reference", "bt/ref"), ("plyc-bt", "plyc", "bt/plyc"),
          ("plyc-bt", "bpftrace", None))
STATS = "/proc/sys/kernel/bpf_stats_enabled"

# name: (what it does, load generator mode, BPF programs that must run
# before the tool counts as attached, the event that triggers them)
WORKLOADS = {
    "count": ("@[comm] = count() on syscalls/sys_enter_getppid", "getppid", 1, "getppid"),
    "quantize": ("@ = quantize(data->count) on syscalls/sys_enter_read", "read", 1, "read"),
    "latency": ("enter/exit getppid latency through a map keyed by thread, quantized",
                "getppid", 2, "getppid"),
    "printf": ('printf("%s %d\\n", comm, pid) on syscalls/sys_enter_getppid', "getppid", 1, "getppid"),
    "profile": ("@[stack] = count() at 99 Hz on every CPU", "getppid", 1, None),
}

# How much of each: runs of every measurement, system calls per load run,
# plyc builds timed (cold and warm), the total rates of the printf loss
# sweep (two loads, one on each CPU, each for sweep_s seconds; then both at
# full speed).
PROFILES = {
    "full": dict(reps=5, n=1_000_000, build_reps=3, rates=[50e3, 100e3, 200e3, 400e3, 600e3, 800e3, 1000e3, 1200e3],
                 sweep_s=0.5, parallel_builds=False, cross=True, scrape_s=10),
    "quick": dict(reps=1, n=300_000, build_reps=1, rates=[200e3, 800e3], sweep_s=0.3, parallel_builds=False, cross=True, scrape_s=3),
    "smoke": dict(reps=1, n=200_000, build_reps=1, rates=[], sweep_s=0.3, parallel_builds=True, cross=False),
}


def log(msg: str):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("check", True)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    try:
        return subprocess.run([str(c) for c in cmd], **kw)
    except subprocess.CalledProcessError as e:
        sys.exit(f"bench: {' '.join(map(str, cmd))} failed:\n{e.stderr or e.stdout}")


# ---------------------------------------------------------------------------
# Setting up: peers, the load generator, the reference tools, plyc's tracers

# Why bpftrace-0.27 can't run here (its chroot could not be built), or None.
SID_UNAVAILABLE = None


def ensure_peers(tools):
    global SID_UNAVAILABLE
    if os.geteuid() != 0:
        sys.exit("bench: needs root (loads BPF programs)")
    if {"bpftrace", "bpftrace-aot"} & set(tools) and not shutil.which("bpftrace"):
        log("bench: installing bpftrace (Debian's package)")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        if subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "bpftrace"],
                          env=env, capture_output=True).returncode:
            run(["apt-get", "update", "-qq"], env=env)
            run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "bpftrace"], env=env)
    if "bpftrace-aot" in tools and not shutil.which("bpftrace-aotrt"):
        sys.exit("bench: bpftrace-aotrt is missing (Debian's bpftrace package ships it)")
    if "bpftrace-0.27" in tools:
        try:
            bpftrace_sid.ensure(log=log)
        except (bpftrace_sid.Unavailable, RuntimeError) as e:
            SID_UNAVAILABLE = str(e)
            log(f"bench: bpftrace-0.27 left out: {e}")
    for tool in ("bpftool", "clang", "gcc", "llvm-strip"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is missing (run `make setup`)")
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"], capture_output=True)


def build_reference(name: str, out: Path) -> float:
    """NAME.bpf.c -> NAME.bpf.o -> NAME.skel.h -> NAME (static, stripped), as
    libbpf-tools does it. Returns the seconds it took."""
    src = BENCH / "reference"
    t0 = time.monotonic()
    obj = out / f"{name}.bpf.o"
    run(["clang", "-target", "bpf", "-D__TARGET_ARCH_x86", "-O2", "-g", "-Wall", "-Werror",
         "-I", out, "-I", src, "-c", src / f"{name}.bpf.c", "-o", obj])
    run(["llvm-strip", "-g", obj])
    skel = run(["bpftool", "gen", "skeleton", obj, "name", f"{name}_bpf"]).stdout
    (out / f"{name}.skel.h").write_text(skel)
    run(["gcc", "-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-static", "-s", "-I", out, "-I", src,
         src / f"{name}.c", "-lbpf", "-lelf", "-lz", "-o", out / name])
    return time.monotonic() - t0


def plyc_targets() -> list:
    """The targets `plyc build --target` offers (x86_64 only, for now)."""
    helptext = run([sys.executable, "-m", "plyc", "build", "--help"], cwd=ROOT).stdout
    m = re.search(r"--target \{([^}]*)\}", helptext)
    return m.group(1).split(",") if m else ["x86_64"]


def plyc_build(script: Path, out: Path, cache: Path, target: str = "x86_64", libc: str = "glibc") -> float:
    env = dict(os.environ, PLYC_CACHE=str(cache))
    t0 = time.monotonic()
    run([sys.executable, "-m", "plyc", "build", script, "-o", out, "--target", target, "--libc", libc],
        cwd=ROOT, env=env)
    return time.monotonic() - t0


def why_failed(text: str) -> str:
    """The line of a failed build or run that says why: the first error
    (plyc's `file:line:col: error: ...`, bpftrace's `...: ERROR: ...`), else
    the first line (getopt's complaint). bpftrace's complaint that it could
    not raise RLIMIT_MEMLOCK comes on every run, even a good one: not a reason."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and "RLIMIT_MEMLOCK" not in ln]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or ["failed, saying nothing"])[0]


def try_build(cmd, env=None) -> tuple:
    """(seconds, None), or (None, why) for a build whose failure the tables
    report instead of stopping the run."""
    t0 = time.monotonic()
    proc = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode:
        return None, why_failed(proc.stderr + proc.stdout)
    return time.monotonic() - t0, None


def bt_build(name: str, out: Path, cache: Path) -> tuple:
    """plyc's tracer from the bpftrace script (plyc-bt); a script plyc's
    bpftrace front end refuses is reported, not fatal."""
    return try_build([sys.executable, "-m", "plyc", "build", BENCH / "workloads" / f"{name}.bt", "-o", out],
                     env=dict(os.environ, PLYC_CACHE=str(cache)))


def aot_build(name: str, out: Path) -> tuple:
    """bpftrace 0.17's ahead-of-time mode: `bpftrace --aot FILE SCRIPT`
    compiles the script into FILE (the BPF programs and what the runtime
    needs to print their output), which `bpftrace-aotrt FILE` loads and
    runs without LLVM. What 0.17's AOT refuses is reported, not fatal."""
    if out.exists():
        out.unlink()
    secs, why = try_build(["bpftrace", "--aot", out, BENCH / "workloads" / f"{name}.bt"])
    if why is None and not out.exists():
        return None, "bpftrace --aot exited 0 but wrote no file"
    return secs, why


def musl_libraries(cache: Path, targets: list):
    """plyc's musl libraries for the targets, built once in the user's own
    cache (minutes per target) and lent to the bench's cache."""
    for t in targets:
        proc = subprocess.run([sys.executable, "-m", "plyc", "sysroot", "--libc", "musl", "--target", t],
                              cwd=ROOT, capture_output=True, text=True)
        if proc.returncode:
            log(f"bench: the {t} musl libraries failed to build (its musl sizes are left out): "
                f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        elif not (cache / "musl").exists():
            (cache / "musl").symlink_to(Path(proc.stdout.strip()).parent)


def cross_build(script: Path, out: Path, cache: Path, target: str, libc: str = "glibc"):
    """A tracer for another architecture, for its size only; a failure
    leaves that cell of the table empty."""
    env = dict(os.environ, PLYC_CACHE=str(cache))
    if out.exists():
        out.unlink()
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", str(script), "-o", str(out), "--target", target,
                           "--libc", libc], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode:
        log(f"bench: plyc build --target {target} --libc {libc} {script.name} failed (its size is left out): "
            f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")


def build_all(build: Path, workloads: list, cfg: dict, tools: list) -> dict:
    """Builds everything; returns build times and sizes by workload."""
    build.mkdir(parents=True, exist_ok=True)
    ref, tracers, musl = build / "reference", build / "plyc", build / "plyc-musl"
    bt, aot = build / "plyc-bt", build / "bpftrace-aot"
    for d in (ref, tracers, musl, bt, aot):
        d.mkdir(exist_ok=True)
    for prog in ("load", "launch"):
        run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-static", "-o", build / prog, BENCH / f"{prog}.c"])
    (ref / "vmlinux.h").write_text(
        run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "c"]).stdout)

    # "unavailable": {tool: why} for a workload plyc-bt or bpftrace-aot can't build.
    info = {w: {"build_cold_s": [], "build_warm_s": [], "bt_build_cold_s": [], "bt_build_warm_s": [],
                "size": {}, "unavailable": {}} for w in WORKLOADS}
    with_bt = "plyc-bt" in tools

    def bt_timed(w, cache, key):
        secs, why = bt_build(w, bt / w, cache)
        if why:
            info[w]["unavailable"]["plyc-bt"] = f"plyc build: {why}"
        elif key:
            info[w][key].append(secs)
        return why
    targets = plyc_targets() if cfg["cross"] else ["x86_64"]
    with tempfile.TemporaryDirectory(prefix="plyc-cache-") as tmpd:
        # plyc: cold (an empty PLYC_CACHE: the C runtime is compiled too),
        # then warm (the same cache again); one build at a time, so that
        # nothing else shares the CPUs.
        warm = Path(tmpd) / "warm"
        for w in workloads:
            script = BENCH / "workloads" / f"{w}.ply"
            for r in range(cfg["build_reps"]):
                cache = Path(tmpd) / f"cache-{w}-{r}"
                info[w]["build_cold_s"].append(plyc_build(script, tracers / w, cache))
                info[w]["build_warm_s"].append(plyc_build(script, tracers / w, cache))
                # The same job from its bpftrace script: cold in a cache of its own.
                if with_bt:
                    bt_cache = Path(tmpd) / f"bt-cache-{w}-{r}"
                    if not bt_timed(w, bt_cache, "bt_build_cold_s"):
                        bt_timed(w, bt_cache, "bt_build_warm_s")
                    shutil.rmtree(bt_cache, ignore_errors=True)
                if not warm.exists():
                    cache.rename(warm)
        with_musl = "plyc-musl" in tools
        if with_musl:
            musl_libraries(warm, targets)
        # The rest, two at a time: plyc's other workloads (built even when
        # not measured: the smoke run checks that they build), any cross
        # targets (for their sizes), and the references (timed alone,
        # except in the smoke run).
        jobs = [lambda w=w: plyc_build(BENCH / "workloads" / f"{w}.ply", tracers / w, warm)
                for w in WORKLOADS if w not in workloads]
        jobs += [lambda w=w: bt_timed(w, warm, None) for w in WORKLOADS if w not in workloads and with_bt]
        jobs += [lambda w=w, t=t: cross_build(BENCH / "workloads" / f"{w}.ply", tracers / f"{w}.{t}", warm, t)
                 for w in workloads for t in targets if t != "x86_64"]
        # musl: every workload for x86_64 (it runs), the others for their sizes.
        jobs += [lambda w=w: plyc_build(BENCH / "workloads" / f"{w}.ply", musl / w, warm, "x86_64", "musl")
                 for w in WORKLOADS if with_musl]
        jobs += [lambda w=w, t=t: cross_build(BENCH / "workloads" / f"{w}.ply", musl / f"{w}.{t}", warm, t, "musl")
                 for w in workloads for t in targets if t != "x86_64" and with_musl]
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(j) for j in jobs]
            if cfg["parallel_builds"]:
                ref_times = dict(zip(WORKLOADS, pool.map(lambda w: build_reference(w, ref), WORKLOADS)))
            for f in futures:
                f.result()
    if not cfg["parallel_builds"]:
        ref_times = {w: build_reference(w, ref) for w in WORKLOADS}
    for w in WORKLOADS:
        info[w]["reference_build_s"] = ref_times[w]
        info[w]["size"]["reference"] = {"x86_64": os.path.getsize(ref / w)}
        files = {t: tracers / (w if t == "x86_64" else f"{w}.{t}") for t in targets}
        info[w]["size"]["plyc"] = {t: os.path.getsize(f) for t, f in files.items() if f.exists()}
        files = {t: musl / (w if t == "x86_64" else f"{w}.{t}") for t in targets}
        info[w]["size"]["plyc-musl"] = {t: os.path.getsize(f) for t, f in files.items() if f.exists()}

        if (bt / w).exists() and "plyc-bt" not in info[w]["unavailable"]:
            info[w]["size"]["plyc-bt"] = {"x86_64": os.path.getsize(bt / w)}

    if shutil.which("bpftrace"):
        size = os.path.getsize(shutil.which("bpftrace"))
        libs = shared_libs_size("bpftrace")
        for w in WORKLOADS:
            info[w]["size"]["bpftrace"] = {"x86_64": size}
            info[w]["size"]["bpftrace_with_libs"] = {"x86_64": size + libs}
    if "bpftrace-0.27" in tools:
        for w in WORKLOADS:
            if SID_UNAVAILABLE:
                info[w]["unavailable"]["bpftrace-0.27"] = SID_UNAVAILABLE
                continue
            size = os.path.getsize(bpftrace_sid.root() / "usr" / "bin" / "bpftrace")
            info[w]["size"]["bpftrace-0.27"] = {"x86_64": size}
            info[w]["size"]["bpftrace-0.27_with_libs"] = {
                "x86_64": size + shared_libs_size("/usr/bin/bpftrace", bpftrace_sid.root())}
    if "bpftrace-aot" in tools:
        # bpftrace's compile, once (a tenth of a second): its "build" row.
        libs = shared_libs_size("bpftrace-aotrt")
        for w in WORKLOADS:
            secs, why = aot_build(w, aot / f"{w}.aot")
            if why:
                info[w]["unavailable"]["bpftrace-aot"] = f"bpftrace --aot: {why}"
                continue
            info[w]["aot_build_s"] = secs
            # What goes to the target: the runtime and the compiled script.
            size = os.path.getsize(shutil.which("bpftrace-aotrt")) + os.path.getsize(aot / f"{w}.aot")
            info[w]["size"]["bpftrace-aot"] = {"x86_64": size}
            info[w]["size"]["bpftrace-aot_with_libs"] = {"x86_64": size + libs}
    return info


def shared_libs_size(program: str, chroot: Path = None) -> int:
    """Bytes of the shared libraries a program loads (from ldd; in `chroot`,
    a program of that chroot, given by its path there)."""
    libs = 0
    cmd = ["chroot", chroot, "ldd", program] if chroot else ["ldd", shutil.which(program)]
    for line in run(cmd).stdout.splitlines():
        m = re.search(r"=> (/\S+)", line)
        if m:
            libs += os.path.getsize(os.path.realpath(f"{chroot or ''}{m.group(1)}"))
    return libs


# ---------------------------------------------------------------------------
# Watching a tool's BPF programs

def set_stats(on: bool):
    with open(STATS, "w") as f:
        f.write("1" if on else "0")


def prog_stats(pid: int) -> dict:
    """{prog_id: (run_time_ns, run_cnt)} of the BPF programs that process
    holds open, from /proc/PID/fdinfo (the kernel's bpf_stats figures)."""
    out = {}
    for info in bpf_fdinfo(pid, "prog"):
        try:
            out[int(info["prog_id"])] = (int(info["run_time_ns"]), int(info["run_cnt"]))
        except (KeyError, ValueError):
            continue
    return out


def foreign_attachments() -> list:
    """BPF programs other processes have on tracepoints or perf events now
    (only ours run during a measurement, so any are someone else's): they
    slow every system call when on syscalls/*, so the run is noted."""
    proc = subprocess.run(["bpftool", "perf", "show", "-j"], capture_output=True, text=True)
    try:
        entries = json.loads(proc.stdout or "[]")
    except ValueError:
        return []
    return sorted({f"{e.get('pid')}:{e.get('tracepoint') or e.get('fd_type')}" for e in entries})


def stats_delta(a: dict, b: dict) -> tuple:
    ns = sum(b[i][0] - a[i][0] for i in b if i in a)
    cnt = sum(b[i][1] - a[i][1] for i in b if i in a)
    return ns, cnt


# Seconds a tool has to exit after SIGINT (a tracer prints its maps, then
# exits, within a second), and then after SIGTERM, before the next signal.
STOP_GRACE = 5.0


class NotRunning(RuntimeError):
    """A tool that never attached; .why is the line of its stderr that says why."""

    def __init__(self, msg: str, why: str):
        super().__init__(msg)
        self.why = why


class Tool:
    """One run of one tool on one workload."""
    serial = 0
    live = set()        # started and not yet waited for: killed if the harness fails

    def __init__(self, tool: str, workload: str, build: Path, tmp: Path):
        self.tool, self.workload = tool, workload
        if tool in ("plyc", "plyc-musl", "plyc-bt"):
            self.cmd = [build / tool / workload, "-k"]
        elif tool == "reference":
            self.cmd = [build / "reference" / workload]
        elif tool == "bpftrace-aot":
            self.cmd = [shutil.which("bpftrace-aotrt"), build / tool / f"{workload}.aot"]
        elif tool == "bpftrace-0.27":
            # The script where the chroot sees it (/tmp), the build folder
            # (the load generator of -c) bound in; the command execs down
            # to bpftrace itself, whose pid launch.c reports.
            script = tmp / f"{workload}.bt"
            shutil.copyfile(BENCH / "workloads" / f"{workload}.bt", script)
            self.cmd = bpftrace_sid.command([script], cwd=tmp, binds=[build.resolve()])
        else:
            self.cmd = [shutil.which("bpftrace"), BENCH / "workloads" / f"{workload}.bt"]
        self.out_path = tmp / f"{tool}-{workload}.out"
        self.err_path = tmp / f"{tool}-{workload}.err"
        Tool.serial += 1
        self.info_path = tmp / f"{tool}-{workload}-{Tool.serial}.info"
        self.launch = build / "launch"
        self.proc = None
        self.status = None

    def start(self, extra=()):
        """Starts the tool under bench/launch.c, which reports its peak RSS."""
        self.out = open(self.out_path, "w")
        self.err = open(self.err_path, "w")
        if self.info_path.exists():
            self.info_path.unlink()
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([str(c) for c in [self.launch, self.info_path, *self.cmd, *extra]],
                                     stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL)
        Tool.live.add(self)
        self.pid = None
        while self.pid is None and time.monotonic() - self.t0 < 10:
            m = re.search(r"pid (\d+)", self.info_path.read_text() if self.info_path.exists() else "")
            if m:
                self.pid = int(m.group(1))
            elif self.proc.poll() is not None:
                break
            else:
                time.sleep(0.0002)
        if self.pid is None:
            self.kill()
            raise RuntimeError(f"{self.tool}: launch failed")

    def kill(self):
        """The harness is failing: make sure neither the tool nor its
        launcher is left behind."""
        for pid in (self.pid, self.proc.pid):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.proc.wait()
        Tool.live.discard(self)

    def wait_attached(self, nprogs: int, trigger, timeout=120.0) -> float:
        """Seconds from exec until nprogs of the tool's programs have run."""
        set_stats(True)
        while time.monotonic() - self.t0 < timeout:
            if trigger:
                trigger()
            stats = prog_stats(self.pid)
            if sum(1 for _, cnt in stats.values() if cnt > 0) >= nprogs:
                return time.monotonic() - self.t0
            if self.proc.poll() is not None:
                break
            time.sleep(0.001)
        self.stop()
        err = self.err_path.read_text()
        raise NotRunning(f"{self.tool} {self.workload}: never attached (exit {self.status}): {err[-2000:]}",
                         f"never attached (exit {self.status}): {why_failed(err)}")

    def stop(self, sig=signal.SIGINT, grace=None):
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass
        self.wait(STOP_GRACE if grace is None else grace)

    def wait(self, timeout=60.0):
        """Waits `timeout` s for the tool to exit; then stops it with SIGTERM
        and, if that fails too, SIGKILL (bpftrace-aotrt 0.17 ignores SIGINT),
        STOP_GRACE s apart. The launcher outlives the tool, so its figures
        from wait4() stay; .stopped_by names the signal that ended it."""
        self.stopped_by = None
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                self.stopped_by = sig.name
                try:
                    os.kill(self.pid, sig)
                    self.proc.wait(STOP_GRACE)
                    break
                except ProcessLookupError:
                    break
                except subprocess.TimeoutExpired:
                    pass
            else:
                self.proc.kill()        # the launcher itself is stuck
                self.proc.wait()
        self.t_end = time.monotonic()
        Tool.live.discard(self)
        info = self.info_path.read_text()
        m = re.search(r"maxrss (\d+)", info)
        self.rss_kb = int(m.group(1)) if m else None
        m = re.search(r"cpu_us (\d+)", info)
        self.cpu_s = int(m.group(1)) / 1e6 if m else None
        m = re.search(r"status (\d+)", info)
        self.status = int(m.group(1)) if m else self.proc.returncode
        self.out.close()
        self.err.close()

    def lost_reported(self) -> int:
        text = self.err_path.read_text(errors="replace")
        return sum(int(m.group(1) or m.group(2))
                   for m in re.finditer(r"(\d+) events? lost|Lost (\d+) events", text))

    def delivered(self) -> int:
        with open(self.out_path, "rb") as f:
            return sum(1 for line in f if line.startswith(b"bench-load "))


def load(build: Path, *args) -> float:
    """Runs the load generator; the seconds its loop took."""
    return float(run([build / "load", *args]).stdout.strip())


def triggers():
    zero = os.open("/dev/zero", os.O_RDONLY)
    return {"getppid": os.getppid, "read": lambda: os.read(zero, 1), None: None}


# ---------------------------------------------------------------------------
# The measurements

def measure_run(tool: str, w: str, build: Path, tmp: Path, cfg: dict, trig: dict) -> dict:
    """One traced run: start-up to attached, slowdown (bpf_stats off), then
    in-kernel cost per event (bpf_stats on), peak RSS, printf delivery."""
    _, mode, nprogs, trigger = WORKLOADS[w]
    n = str(cfg["n"])
    t = Tool(tool, w, build, tmp)
    set_stats(True)
    t.start()
    try:
        attach = t.wait_attached(nprogs, trig[trigger])
        time.sleep(0.2)
        set_stats(False)
        traced = load(build, mode, n)
        set_stats(True)
        a = prog_stats(t.pid)
        # profile fires ~200 times a second whatever the load: run longer
        # for a few hundred samples.
        traced2 = load(build, mode, str(cfg["n"] * (4 if w == "profile" else 1)))
        b = prog_stats(t.pid)
        kmem = maps_memlock(t.pid)     # after the load: maps that grow have grown
    finally:
        set_stats(True)
        t.stop()
    ns, cnt = stats_delta(a, b)
    r = {"attach_s": attach, "traced_s": traced, "cost_ns": ns / cnt if cnt else None, "events": cnt,
         "rss_kb": t.rss_kb, "kmem_kb": kmem / 1024, "cpu_s": t.cpu_s, "exit": t.status, "stopped_by": t.stopped_by}
    if w != "printf" and tool in ("plyc-bt", *BPFTRACES):
        # bpftrace's output style: every map is printed at exit, as "@...".
        r["maps_printed"] = any(line.startswith(b"@") for line in t.out_path.read_bytes().splitlines())
    if w == "count":
        m = re.search(rb"bench-load[\s\]}]*:\s*(\d+)", t.out_path.read_bytes())
        r["counted"] = int(m.group(1)) if m else None
        r["expected"] = 2 * cfg["n"]
    if w == "printf":
        generated = 2 * cfg["n"]     # (printf's loads are both n calls)
        got = t.delivered()
        r.update(delivered=got, generated=generated, lost=generated - got,
                 lost_reported=t.lost_reported(), delivered_per_s=got / (traced + traced2),
                 cpu_per_line_us=t.cpu_s / got * 1e6 if got and t.cpu_s is not None else None)
    return r


def measure_scrape(build: Path, tmp: Path, cfg: dict, trig: dict, scrape: bool) -> dict:
    """plyc's count tracer with --metrics, under a paced load (100k getppid/s
    for cfg["scrape_s"] seconds): in-kernel ns per event and the tracer's CPU
    time, with Prometheus-like scrapes of /metrics every second, or none."""
    rate, secs = 100_000, cfg.get("scrape_s", 10)
    t = Tool("plyc", "count", build, tmp)
    t.start(["--metrics", "127.0.0.1:0"])
    scrapes, stop = [], threading.Event()
    try:
        t.wait_attached(1, trig["getppid"])
        port = int(re.search(r"serving metrics at http://127\.0\.0\.1:(\d+)/", t.err_path.read_text()).group(1))

        def scraper():
            while not stop.wait(1.0):
                t0 = time.perf_counter()
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    r.read()
                scrapes.append(time.perf_counter() - t0)

        set_stats(True)
        a = prog_stats(t.pid)
        th = threading.Thread(target=scraper) if scrape else None
        if th:
            th.start()
        load(build, "rate", str(rate * secs), str(rate))
        stop.set()
        if th:
            th.join()
        b = prog_stats(t.pid)
    finally:
        stop.set()
        t.stop()
    ns, cnt = stats_delta(a, b)
    return {"scrape": scrape, "cost_ns": ns / cnt if cnt else None, "events": cnt, "cpu_s": t.cpu_s,
            "scrapes": len(scrapes), "scrape_ms": statistics.median(scrapes) * 1e3 if scrapes else None}


def measure_short(tool: str, w: str, build: Path, tmp: Path) -> dict:
    """`TOOL -c 'load getppid 10000'`: exec to exit, wall time and peak RSS."""
    t = Tool(tool, w, build, tmp)
    t.start(["-c", f"{build / 'load'} getppid 10000"])
    t.wait(timeout=120)
    r = {"wall_s": time.monotonic() - t.t0, "rss_kb": t.rss_kb, "exit": t.status}
    if t.stopped_by:
        r["error"] = f"still running after 120 s: stopped by {t.stopped_by}"
    elif t.status:
        # (bpftrace-aotrt 0.17 has no -c: it says so and exits 1.)
        r["error"] = f"exit {t.status}: {why_failed(t.err_path.read_text(errors='replace'))}"
    return r


def measure_sweep(tool: str, build: Path, tmp: Path, cfg: dict, trig: dict) -> list:
    """printf under loads on both CPUs at once, paced at each total rate of
    cfg["rates"] (half on each CPU), then both as fast as they go: the
    events lost at each level (generated minus lines delivered). The tool
    starts afresh for each level."""
    out = []
    for rate in [*cfg["rates"], 0]:
        n = max(10_000, int(rate / 2 * cfg["sweep_s"])) if rate else cfg["n"] // 2
        args = ["rate", str(n), str(rate / 2)] if rate else ["getppid", str(n)]
        t = Tool(tool, "printf", build, tmp)
        t.start()
        try:
            t.wait_attached(1, trig["getppid"])
            loads = [subprocess.Popen([str(build / "load"), *args], stdout=subprocess.PIPE, text=True,
                                      env=dict(os.environ, BENCH_CPU=str(cpu))) for cpu in (0, 1)]
            secs = max(float(p.communicate()[0]) for p in loads)
        finally:
            t.stop()
        got = t.delivered()
        out.append({"rate": rate, "offered_per_s": 2 * n / secs, "generated": 2 * n, "delivered": got,
                    "lost": 2 * n - got, "lost_reported": t.lost_reported()})
    return out


def attempt(measure, tool: str, *args) -> dict:
    """One measurement. bpftrace's AOT runtime is experimental in 0.17: when
    it can't run a workload, that is a result ({"error": why}, shown in the
    table's notes), not the end of the run. Any other tool failing is."""
    try:
        return measure(tool, *args)
    except NotRunning as e:
        if tool not in ("bpftrace-aot", "bpftrace-0.27"):
            raise
        log(f"bench: {e}")
        return {"error": e.why}


# Why bpftrace-aot's map workloads print nothing at exit (bench/README.md).
AOT_NO_MAPS = "bpftrace-aotrt 0.17 does not print them (bench/README.md)"


def notes(w: str, tools: list, binfo: dict, runs: dict, short: dict) -> dict:
    """{tool: [why a figure of its row is missing]}: what a tool could not
    build or run, in the words it printed."""
    out = {}
    for tool in tools:
        said = []
        if binfo.get("unavailable", {}).get(tool):
            said.append(f"not run: {binfo['unavailable'][tool]}")
        said += sorted({f"not run: {r['error']}" for r in runs[tool] if "error" in r})
        said += sorted({f"short run (-c) failed: {s['error']}" for s in short[tool] if "error" in s})
        stopped = sorted({r["stopped_by"] for r in runs[tool] if r.get("stopped_by")})
        if stopped:
            said.append(f"did not exit within {STOP_GRACE:g} s of SIGINT: stopped by {' or '.join(stopped)}")
        if any(r.get("maps_printed") is False for r in runs[tool]):
            said.append("printed no maps at exit" + (f": {AOT_NO_MAPS}" if tool == "bpftrace-aot" else ""))
        if said:
            out[tool] = said
    return out


def summary(values: list) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


# ---------------------------------------------------------------------------
# Output

METRICS = [
    # key, label, unit scale, format
    ("cost_ns", "in-kernel cost per event (ns)", 1, "{:.0f}"),
    ("slowdown", "slowdown of the load (traced/untraced)", 1, "{:.2f}x"),
    ("attach_ms", "start-up: exec to probes attached (ms)", 1, "{:.1f}"),
    ("short_wall_ms", "short run, -c: exec to exit (ms)", 1, "{:.0f}"),
    ("rss_mb", "peak RSS while tracing (MB)", 1, "{:.1f}"),
    ("kmem_kb", "kernel memory locked by its BPF maps (KiB)", 1, "{:.0f}"),
    ("short_rss_mb", "peak RSS of the short run (MB)", 1, "{:.1f}"),
    ("size_mb", "tracer size, stripped, x86_64 (MB)", 1, "{:.2f}"),
    ("build_cold_s", "build, cold cache (s)", 1, "{:.2f}"),
    ("build_warm_s", "build, warm cache (s)", 1, "{:.2f}"),
    ("delivered_per_s", "printf lines delivered (k/s)", 1e-3, "{:.0f}"),
    ("lost", "printf events lost (of 2N)", 1, "{:.0f}"),
    ("cpu_per_line_us", "printf: tracer CPU per line (us)", 1, "{:.2f}"),
    ("cpu_ms", "tracer CPU time, user+sys, whole run (ms)", 1, "{:.0f}"),
]


def fmt(spec, scale, s):
    if s is None:
        return "-"
    med = spec.format(s["median"] * scale)
    if len(s["runs"]) > 1 and s["min"] != s["max"]:
        return f"{med} [{spec.format(s['min'] * scale)}-{spec.format(s['max'] * scale)}]"
    return med


def print_tables(res: dict):
    ms = res.get("metrics_scrape")
    if ms:
        print(f"\n== --metrics: {ms['what']}")
        for k in ("unscraped", "scraped"):
            row = ms[k]
            print(f"   {k:10} in-kernel {fmt('{:.0f}', 1, row['cost_ns'])} ns/event, "
                  f"tracer CPU {fmt('{:.0f}', 1, row['cpu_ms'])} ms"
                  + (f", scrape {fmt('{:.2f}', 1, row['scrape_ms'])} ms" if k == "scraped" else ""))
    for w, wr in res["workloads"].items():
        print(f"\n== {w}: {WORKLOADS[w][0]}")
        print(f"   median [min-max] of {res['meta']['reps']} run(s); load: {WORKLOADS[w][1]} x {res['meta']['n']:,}"
              f" on CPU 0, untraced {fmt('{:.3f}', 1, wr['untraced_s'])} s")
        # The tools measured, in TOOLS' order; a ratio where both were.
        tools = [t for t in TOOLS if t in res["meta"]["tools"]]
        cols = [(f"{a}/{b}", title) for a, b, title in RATIOS if title and a in tools and b in tools]
        rows = [("", *tools, *(title for _, title in cols))]
        for key, label, scale, spec in METRICS:
            m = wr["metrics"].get(key)
            if not m or all(m.get(t) is None for t in tools):
                continue
            cells = [fmt(spec, scale, m.get(t)) for t in tools]
            for i, t in enumerate(tools):
                with_libs = wr["metrics"].get("size_with_libs_mb", {}).get(t)
                if key == "size_mb" and with_libs:
                    cells[i] += f" ({fmt(spec, scale, with_libs)} w/ libs)"
            rr = wr["ratios"].get(key, {})
            rows.append((label, *cells, *("-" if rr.get(k) is None else f"{rr[k]:.2f}" for k, _ in cols)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            print("  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
        for tool in ("plyc", "plyc-musl"):
            by_target = (wr.get("sizes_by_target") or {}).get(tool) or {}
            if len(by_target) > 1:
                print(f"   {tool} tracer size by target (KB, stripped): "
                      + ", ".join(f"{t} {v / 1024:.0f}" for t, v in by_target.items()))
        if wr.get("count_check"):
            print("   exact count of the load's calls: " + ", ".join(
                f"{t} {check_word(v)}" for t, v in wr["count_check"].items()))
        for tool, said in (wr.get("notes") or {}).items():
            for line in said:
                print(f"   note: {tool}: {line}")
        if wr.get("sweep"):
            print("   printf, loads on both CPUs at a paced total rate (what they managed): events lost / generated")
            for tool in wr["sweep"]:
                cells = []
                for s in wr["sweep"][tool]:
                    cells.append(f"{sweep_label(s)}: {s['lost']}/{s['generated']}")
                print(f"     {tool:12}  " + ", ".join(cells))
            print(f"   first level with losses: "
                  + ", ".join(f"{t} {sweep_label(v)}" if v else f"{t} none"
                              for t, v in wr["loss_threshold"].items()))
    print("\n== goals")
    for g in res["goals"]:
        print(f"  [{'met' if g['met'] else 'MISSED' if g['met'] is False else '?'}] {g['goal']}: {g['detail']}")


def check_word(checks: list) -> str:
    """The count check of one tool: [(counted, expected)] over its runs."""
    if all(c == e for c, e in checks):
        return "ok"
    if all(c is None for c, _ in checks):
        return "none printed"
    return f"WRONG {checks}"


def sweep_label(s: dict) -> str:
    if s["rate"]:
        return f"{s['rate'] / 1e3:.0f}k/s (got {s['offered_per_s'] / 1e3:.0f}k)"
    return f"max (got {s['offered_per_s'] / 1e3:.0f}k/s)"


def goals(res: dict) -> list:
    """The project's goals, for plyc's tracers from ply (plyc) and from
    bpftrace syntax (plyc-bt), each against the same peers."""
    out = []
    for w, wr in res["workloads"].items():
        for tool in ("plyc", "plyc-bt"):
            if tool in res["meta"]["tools"]:
                out += tool_goals(tool, w, wr)
    return out


def tool_goals(tool: str, w: str, wr: dict) -> list:
    out = []
    rr = wr["ratios"]
    name = w if tool == "plyc" else f"{w} (.bt, plyc-bt)"
    why = [n for n in (wr.get("notes") or {}).get(tool, []) if n.startswith("not run")]
    if why:
        return [{"goal": f"{name}: plyc builds and runs it", "met": False, "detail": why[0]}]
    c = rr.get("cost_ns", {})
    if c.get(f"{tool}/reference") is not None:
        below = c.get(f"{tool}/bpftrace")
        out.append({"goal": f"{name}: in-kernel cost within 5% of the reference and below bpftrace",
                    "met": c[f"{tool}/reference"] <= 1.05 and (below is None or below < 1),
                    "detail": f"{tool}/reference {c[f'{tool}/reference']:.2f}, {tool}/bpftrace "
                              + (f"{below:.2f}" if below is not None else "-")})
    a = rr.get("attach_ms", {}).get(f"{tool}/bpftrace")
    if a is not None:
        out.append({"goal": f"{name}: start-up to attached at most 1/20 of bpftrace's", "met": a <= 0.05,
                    "detail": f"{tool}/bpftrace {a:.3f}"})
    r = rr.get("rss_mb", {}).get(f"{tool}/bpftrace")
    if r is not None:
        out.append({"goal": f"{name}: peak RSS at most 1/10 of bpftrace's", "met": r <= 0.1,
                    "detail": f"{tool}/bpftrace {r:.3f}"})
    k = rr.get("kmem_kb", {}).get(f"{tool}/bpftrace")
    if k is not None:
        out.append({"goal": f"{name}: kernel memory its maps lock at most bpftrace's", "met": k <= 1,
                    "detail": f"{tool}/bpftrace {k:.2f}"})
    sweep = wr.get("sweep") or {}
    if sweep.get(tool) and sweep.get("reference"):
        # Level by level: the tracer must lose nothing where the reference
        # lost nothing at the same or a higher rate than it was offered.
        bad = [s for s, r in zip(sweep[tool], sweep["reference"])
               if s["lost"] and not r["lost"] and s["offered_per_s"] <= 1.05 * r["offered_per_s"]]
        first = next((s for s in sweep["reference"] if s["lost"]), None)
        out.append({"goal": f"{name}: no lost printf events below the reference's loss threshold",
                    "met": not bad,
                    "detail": (f"reference first loses at {sweep_label(first)}" if first else "reference never lost")
                              + (f"; {tool} lost at {', '.join(sweep_label(s) for s in bad)}" if bad else "")})
    return out


# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run of each, small loads")
    ap.add_argument("--smoke", action="store_true", help="build everything; run each tool once on `count`")
    ap.add_argument("--reps", type=int, help="runs of each measurement (default 5; --quick 1)")
    ap.add_argument("-n", type=int, help="system calls per load run (default 1,000,000)")
    ap.add_argument("--workloads", help="comma-separated subset of " + ",".join(WORKLOADS))
    ap.add_argument("--tools", help="comma-separated subset of " + ",".join(TOOLS))
    ap.add_argument("--build-dir", default=str(BENCH / "build"))
    ap.add_argument("--no-build", action="store_true",
                    help="reuse the tools (and build figures) of an earlier run's --build-dir")
    ap.add_argument("--out", default=str(BENCH / "results" / "latest.json"))
    ap.add_argument("--desk-only", action="store_true",
                    help="only the desk section: one-liners against bpftrace -e (bench/desk.py)")
    ap.add_argument("--no-desk", action="store_true", help="leave the desk section out")
    ap.add_argument("--sizes-only", action="store_true",
                    help="only the sizes section: where a musl tracer's bytes go, by target (bench/sizes.py)")
    args = ap.parse_args(argv)
    if args.desk_only:
        return desk_only(args)
    if args.sizes_only:
        res = {"meta": {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                        "profile": "sizes"}, "sizes": run_sizes()}
        out = write_results(res, Path(args.out))
        print_sizes(res["sizes"])
        print(f"\n(results in {out})")
        return 0

    cfg = dict(PROFILES["smoke" if args.smoke else "quick" if args.quick else "full"])
    if args.reps:
        cfg["reps"] = args.reps
    if args.n:
        cfg["n"] = args.n
    workloads = (args.workloads.split(",") if args.workloads else ["count"] if args.smoke else list(WORKLOADS))
    tools = args.tools.split(",") if args.tools else list(TOOLS)
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"bench: no workload {w!r}")
    for t in tools:
        if t not in TOOLS:
            sys.exit(f"bench: no tool {t!r}")

    started = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # so that `finally` cleans up
    ensure_peers(tools)
    build = Path(args.build_dir)
    log(f"bench: building into {build}")
    if args.no_build and (build / "info.json").exists():
        binfo = json.loads((build / "info.json").read_text())
        # An earlier run may not have built every tool asked for now.
        for w in workloads:
            for t in tools:
                if not binfo[w]["size"].get(t) and t not in binfo[w].get("unavailable", {}) \
                        and t not in ("bpftrace", "bpftrace-0.27"):
                    sys.exit(f"bench: --no-build: {build} has no {t} build of {w} (run without --no-build)")
    else:
        binfo = build_all(build, workloads, cfg, tools)
        (build / "info.json").write_text(json.dumps(binfo))
    log(f"bench: built in {time.monotonic() - started:.1f} s")
    trig = triggers()

    with open(STATS) as f:
        stats_was = f.read().strip()
    raw = {w: {"untraced": [], "runs": {t: [] for t in tools}, "short": {t: [] for t in tools}} for w in workloads}
    sweep = {}
    scrape_runs = []
    noted = []
    try:
        with tempfile.TemporaryDirectory(prefix="plyc-bench-") as tmpd:
            tmp = Path(tmpd)
            for rep in range(cfg["reps"]):
                for w in workloads:
                    foreign = foreign_attachments()
                    if foreign:
                        noted.append({"rep": rep + 1, "workload": w, "attachments": foreign})
                        log(f"bench: note: other BPF programs attached: {len(foreign)} "
                            f"({', '.join(foreign[:4])}{', ...' if len(foreign) > 4 else ''})")
                    set_stats(False)
                    raw[w]["untraced"].append(load(build, WORKLOADS[w][1], str(cfg["n"])))
                    # Rotate the order, so no tool always goes first.
                    order = tools[rep % len(tools):] + tools[:rep % len(tools)]
                    for tool in order:
                        if tool in binfo[w].get("unavailable", {}):
                            continue
                        log(f"bench: run {rep + 1}/{cfg['reps']} {w} {tool}")
                        raw[w]["runs"][tool].append(attempt(measure_run, tool, w, build, tmp, cfg, trig))
                        raw[w]["short"][tool].append(measure_short(tool, w, build, tmp))
            if "count" in workloads and "plyc" in tools and not args.smoke:
                for rep in range(cfg["reps"]):
                    for scrape in (False, True) if rep % 2 == 0 else (True, False):
                        log(f"bench: run {rep + 1}/{cfg['reps']} --metrics, scraped every second: {scrape}")
                        scrape_runs.append(measure_scrape(build, tmp, cfg, trig, scrape))
            if "printf" in workloads and not args.smoke:
                for tool in tools:
                    if all("error" in r for r in raw["printf"]["runs"][tool]):
                        continue    # (not built, or never attached: noted in its table)
                    log(f"bench: printf sweep {tool}")
                    sweep[tool] = measure_sweep(tool, build, tmp, cfg, trig)
    finally:
        for t in list(Tool.live):
            t.kill()
        set_stats(stats_was == "1")

    res = {"meta": {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "kernel": platform.release(),
        "bpftrace": run(["bpftrace", "--version"]).stdout.strip() if shutil.which("bpftrace") else None,
        "bpftrace-0.27": bpftrace_sid.version() if "bpftrace-0.27" in tools and not SID_UNAVAILABLE else None,
        "plyc": run([sys.executable, "-m", "plyc", "--version"], cwd=ROOT).stdout.strip(),
        "profile": "smoke" if args.smoke else "quick" if args.quick else "full",
        "reps": cfg["reps"], "n": cfg["n"], "build_reps": cfg["build_reps"],
        "tools": tools, "workloads": workloads,
    }, "workloads": {}}
    for w in workloads:
        runs, short = raw[w]["runs"], raw[w]["short"]
        untraced = raw[w]["untraced"]
        metrics = {k: {} for k, *_ in METRICS}
        metrics["size_with_libs_mb"] = {}
        for tool in tools:
            # (index i: the repetition, whose untraced load the slowdown is against)
            rs = [(i, r) for i, r in enumerate(runs[tool]) if "error" not in r]
            ss = [s for s in short[tool] if "error" not in s]
            metrics["cost_ns"][tool] = summary([r["cost_ns"] for _, r in rs])
            metrics["slowdown"][tool] = summary([r["traced_s"] / untraced[i] for i, r in rs])
            metrics["attach_ms"][tool] = summary([r["attach_s"] * 1e3 for _, r in rs])
            metrics["rss_mb"][tool] = summary([r["rss_kb"] / 1024 for _, r in rs if r["rss_kb"]])
            metrics["kmem_kb"][tool] = summary([r.get("kmem_kb") for _, r in rs])
            metrics["short_wall_ms"][tool] = summary([s["wall_s"] * 1e3 for s in ss])
            metrics["short_rss_mb"][tool] = summary([s["rss_kb"] / 1024 for s in ss if s["rss_kb"]])
            size = binfo[w]["size"].get(tool, {}).get("x86_64")
            metrics["size_mb"][tool] = summary([size / 1e6]) if size else None
            metrics["cpu_ms"][tool] = summary([r["cpu_s"] * 1e3 for _, r in rs if r["cpu_s"] is not None])
            if w == "printf":
                metrics["cpu_per_line_us"][tool] = summary([r["cpu_per_line_us"] for _, r in rs])
                metrics["delivered_per_s"][tool] = summary([r["delivered_per_s"] for _, r in rs])
                metrics["lost"][tool] = summary([r["lost"] for _, r in rs])
        for tool in BPFTRACES:
            with_libs = binfo[w]["size"].get(f"{tool}_with_libs", {}).get("x86_64")
            if tool in tools and with_libs:
                metrics["size_with_libs_mb"][tool] = summary([with_libs / 1e6])
        metrics["build_cold_s"]["plyc"] = summary(binfo[w]["build_cold_s"])
        metrics["build_warm_s"]["plyc"] = summary(binfo[w]["build_warm_s"])
        metrics["build_cold_s"]["reference"] = summary([binfo[w]["reference_build_s"]])
        if "plyc-bt" in tools:
            metrics["build_cold_s"]["plyc-bt"] = summary(binfo[w].get("bt_build_cold_s", []))
            metrics["build_warm_s"]["plyc-bt"] = summary(binfo[w].get("bt_build_warm_s", []))
        if "bpftrace-aot" in tools and binfo[w].get("aot_build_s"):
            metrics["build_cold_s"]["bpftrace-aot"] = summary([binfo[w]["aot_build_s"]])
        ratios = {key: {f"{a}/{b}": ratio((m.get(a) or {}).get("median"), (m.get(b) or {}).get("median"))
                        for a, b, _ in RATIOS}
                  for key, m in metrics.items()}
        checks = ({t: [(r.get("counted"), r.get("expected")) for r in runs[t] if "error" not in r]
                   for t in tools if runs[t]} if w == "count" else None)
        res["workloads"][w] = {
            "what": WORKLOADS[w][0], "untraced_s": summary(untraced), "metrics": metrics, "ratios": ratios,
            "sizes_by_target": {t: binfo[w]["size"].get(t)
                                for t in (*tools, *(f"{b}_with_libs" for b in BPFTRACES))},
            "runs": runs, "short_runs": short, "notes": notes(w, tools, binfo[w], runs, short),
        }
        if checks:
            res["workloads"][w]["count_check"] = checks
        if w == "printf" and sweep:
            res["workloads"][w]["sweep"] = sweep
            res["workloads"][w]["loss_threshold"] = {
                t: next((s for s in sweep[t] if s["lost"] > 0), None) for t in sweep}
    if scrape_runs:
        res["metrics_scrape"] = {
            "what": "count tracer with --metrics, 100k getppid/s: scraped every second vs never",
            "runs": scrape_runs,
            **{("scraped" if sc else "unscraped"): {
                "cost_ns": summary([r["cost_ns"] for r in scrape_runs if r["scrape"] == sc]),
                "cpu_ms": summary([r["cpu_s"] * 1e3 for r in scrape_runs if r["scrape"] == sc and r["cpu_s"]]),
                "scrape_ms": summary([r["scrape_ms"] for r in scrape_runs if r["scrape"] == sc])}
               for sc in (False, True)}}
    res["meta"]["foreign_attachments"] = noted
    res["goals"] = goals(res)
    if not args.no_desk and not args.smoke:      # (the smoke run's test runs the desk on its own)
        res["desk"] = run_desk(args, cfg, "bpftrace-0.27" in tools)
        res["goals"] += res["desk"]["goals"]
    res["meta"]["elapsed_s"] = time.monotonic() - started

    if not args.smoke and "plyc-musl" in tools:
        res["sizes"] = run_sizes()
    out = write_results(res, Path(args.out))
    print_tables(res)
    if "desk" in res:
        desk.print_tables(res["desk"])
    if "sizes" in res:
        print_sizes(res["sizes"])
    if noted:
        print(f"\nnote: other processes had BPF programs attached during {len(noted)} of the measurements "
              f"(see meta.foreign_attachments): those figures are noisier")
    print(f"\n(results in {out}; {res['meta']['elapsed_s']:.0f} s)")
    return 0


def run_sizes() -> dict:
    """The sizes section: examples/syscall-count.ply's musl tracer for every
    target, its bytes by piece (bench/sizes.py); a target that fails to
    build is an "error" entry."""
    out = {}
    for t in plyc_targets():
        log(f"bench: sizes: {t}")
        try:
            out[t] = sizes.measure(sizes.EXAMPLE, t)
        except (RuntimeError, OSError) as err:
            out[t] = {"error": str(err)[-500:]}
    return out


def print_sizes(res: dict):
    ok = {t: r for t, r in res.items() if "error" not in r}
    print("\n## Where a musl tracer's bytes go (examples/syscall-count.ply, stripped; bench/sizes.py)\n")
    if ok:
        print(sizes.table(ok))
    for t, r in res.items():
        if "error" in r:
            print(f"note: {t}: {r['error'].splitlines()[-1] if r['error'] else 'failed'}")


def write_results(res: dict, out: Path) -> Path:
    """The figures as JSON at out, replaced whole."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmpout = out.with_suffix(".json.tmp")
    tmpout.write_text(json.dumps(res, indent=1) + "\n")
    os.replace(tmpout, out)
    return out


def run_desk(args, cfg: dict, with_027: bool) -> dict:
    """The desk section (bench/desk.py): reps as the other measurements'
    (at least 3 paired runs: a single one says little)."""
    with tempfile.TemporaryDirectory(prefix="plyc-desk-") as tmpd:
        return desk.main(Path(tmpd), args.reps or max(cfg["reps"], 3), with_027)


def desk_only(args) -> int:
    """`run.py --desk-only`: the desk section alone, its JSON in --out."""
    if os.geteuid() != 0:
        sys.exit("bench: needs root (loads BPF programs)")
    started = time.monotonic()
    cfg = dict(PROFILES["smoke" if args.smoke else "quick" if args.quick else "full"])
    cfg["reps"] = args.reps or cfg["reps"]
    tools = args.tools.split(",") if args.tools else list(TOOLS)
    res = {"meta": {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "kernel": platform.release(),
        "bpftrace": run(["bpftrace", "--version"]).stdout.strip() if shutil.which("bpftrace") else None,
        "plyc": run([sys.executable, "-m", "plyc", "--version"], cwd=ROOT).stdout.strip(),
        "profile": "desk", "load_average": os.getloadavg()}}
    res["desk"] = run_desk(args, cfg, "bpftrace-0.27" in tools)
    res["goals"] = res["desk"]["goals"]
    res["meta"]["elapsed_s"] = time.monotonic() - started
    out = write_results(res, Path(args.out))
    desk.print_tables(res["desk"])
    print(f"\n(results in {out}; {res['meta']['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
