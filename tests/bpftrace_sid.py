"""bpftrace 0.27 (Debian sid's), the second reference beside Debian 12's 0.17.

Debian 12 ships bpftrace 0.17; the language people write today is 0.2x's
(issue 24). sid's bpftrace runs on this kernel from a sid chroot, built once
into the cache (~/.cache/plyc/bpftrace-sid/root-N, $PLYC_BPFTRACE_SID elsewhere):

    debootstrap --variant=minbase --include=bpftrace,libc6-dev sid DIR

(libc6-dev: the C headers bpftrace's clang reads, <sys/socket.h> for AF_INET
among them, as Debian 12's bpftrace finds them on the host)

and run in a mount namespace of its own, with /proc, /sys (tracefs, debugfs
and bpffs under it), /dev and /tmp (where the tests' scripts and workload
programs are) bound in, so the binds never show on the host and go with the
process. The command execs down to bpftrace itself: the PID started is
bpftrace's (bench/run.py reads its BPF programs' fdinfo).

    python3 tests/bpftrace_sid.py [--build] [BPFTRACE-ARGS...]

builds the chroot if needed (--build: only that) and runs bpftrace 0.27.
"""
import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# plyc's progress lines (plyc/progress.py) for the chroot's build, also when
# this file runs as a script
if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from plyc import progress  # noqa: E402

MIRROR = "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# Host folders seen at the same path inside the chroot: the kernel's
# (bound recursively: /sys/kernel/tracing, /sys/kernel/debug, /sys/fs/bpf
# come with /sys) and /tmp, where scripts, workloads and cwd live.
BINDS = ("/proc", "/sys", "/dev", "/tmp")
PACKAGES = ("bpftrace", "libc6-dev")
# Bumped when PACKAGES or the way the chroot is made changes: a new folder
# is built beside the old one, which is then removed.
LAYOUT = 2


class Unavailable(Exception):
    """The chroot cannot be built here; str() says why."""


def cache_dir() -> Path:
    return Path(os.environ.get("PLYC_BPFTRACE_SID") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "plyc", "bpftrace-sid"))


def root() -> Path:
    return cache_dir() / f"root-{LAYOUT}"


@contextlib.contextmanager
def _lock():
    """One builder at a time (pytest-xdist's workers, a bench beside a test run)."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def archive_reachable(timeout: float = 15) -> bool:
    """Whether sid's Release file can be fetched (the network, a proxy)."""
    import urllib.request
    try:
        with urllib.request.urlopen(f"{MIRROR}/dists/sid/Release", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def ensure(log=None) -> Path:
    """The chroot, built on first use (atomically: debootstrap fills a
    scratch folder renamed into place at the end, so a killed build leaves
    nothing that looks complete). Raises Unavailable where the archive
    cannot be reached, RuntimeError where debootstrap fails otherwise."""
    dest = root()
    if (dest / "usr" / "bin" / "bpftrace").exists():
        return dest
    with _lock():
        if (dest / "usr" / "bin" / "bpftrace").exists():   # built meanwhile
            return dest
        if not shutil.which("debootstrap"):
            raise RuntimeError("debootstrap is not installed (sh scripts/setup.sh installs it)")
        if not archive_reachable():
            raise Unavailable(f"Debian's archive cannot be reached ({MIRROR}): "
                              "no bpftrace 0.27 chroot (tests/bpftrace_sid.py)")
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache_dir()))
        start = time.monotonic()
        try:
            with progress.step("building bpftrace 0.27's Debian sid chroot (debootstrap), once"):
                _debootstrap(tmp)
            os.rename(tmp / "root", dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for old in cache_dir().glob("root*"):     # older layouts' (400 MB each)
            if old != dest:
                shutil.rmtree(old, ignore_errors=True)
        if log:
            log(f"bpftrace 0.27: built {dest} in {time.monotonic() - start:.0f} s")
    return dest


def _debootstrap(tmp: Path):
    proc = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                           f"--keyring={KEYRING}", "sid", str(tmp / "root"), MIRROR],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        log_file = tmp / "root" / "debootstrap" / "debootstrap.log"
        detail = log_file.read_text()[-3000:] if log_file.exists() else proc.stderr[-3000:]
        raise RuntimeError(f"debootstrap sid failed (exit {proc.returncode}):\n{detail}")
    # apt's lists and downloaded packages: 100+ MB nobody reads again
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (tmp / "root" / sub).glob("*.deb" if "archives" in sub else "*_*"):
            p.unlink()


FTRACE_LIST = "/sys/kernel/tracing/available_filter_functions"


def ftrace_list() -> str:
    """A stand-in for the kernel's list of traceable functions where this
    machine's cannot be opened (here: EPERM): its text symbols, made once
    into the cache. bpftrace 0.27 refuses iter probes without the list (its
    feature probe of them opens it first, src/bpffeature.cpp); "" where the
    real one opens."""
    try:
        with open(FTRACE_LIST):
            return ""
    except OSError:
        pass
    path = cache_dir() / "available_filter_functions"
    if not path.exists():
        cache_dir().mkdir(parents=True, exist_ok=True)
        with open("/proc/kallsyms") as f:
            names = sorted({w[2] for w in (line.split() for line in f) if len(w) == 3 and w[1] in "tT"})
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(n + "\n" for n in names))
        os.rename(tmp, path)
    return str(path)


def command(args, cwd=None, chroot: Path = None, binds=(), ftrace=False) -> list:
    """argv that runs sid's bpftrace with `args` in a private mount
    namespace (cwd: a folder under /tmp, $TMPDIR or `binds`; the chroot's
    own else); `binds`: more host folders seen at their own path inside
    (made in the chroot if needed); `ftrace`: the kernel's list of
    traceable functions made readable inside if it is not (ftrace_list:
    for iter probes)."""
    d = str(chroot or root())
    mounts = [f"mount --rbind {b} {shlex.quote(d + b)}" for b in BINDS]
    stand_in = ftrace_list() if ftrace else ""
    if stand_in:
        mounts.append(f"mount --bind {shlex.quote(stand_in)} {shlex.quote(d + FTRACE_LIST)}")
    tmp = os.path.realpath(tempfile.gettempdir())    # $TMPDIR: pytest's tmp_path, the bench's
    if not (tmp + "/").startswith("/tmp/"):
        binds = [tmp, *binds]
    mounts += [f"mkdir -p {shlex.quote(d + str(b))} && mount --bind {shlex.quote(str(b))} {shlex.quote(d + str(b))}"
               for b in binds]
    # chroot(1) starts in /: sid's sh changes to cwd, then execs bpftrace
    inner = 'cd "$0" && exec bpftrace "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-ec",
            f'{"; ".join(mounts)}; exec chroot {shlex.quote(d)} sh -c {shlex.quote(inner)} "$@"',
            "sh", str(cwd or "/"), *map(str, args)]


def version(chroot: Path = None) -> str:
    proc = subprocess.run(command(["--version"], chroot=chroot), capture_output=True, text=True)
    return proc.stdout.strip() or proc.stderr.strip()


def main(argv) -> int:
    build_only = argv[:1] == ["--build"]
    try:
        ensure(log=lambda m: print(m, file=sys.stderr))
    except (Unavailable, RuntimeError) as e:
        print(f"bpftrace_sid: {e}", file=sys.stderr)
        return 1
    if build_only:
        return 0
    # the folder it is run from is seen inside too: relative script paths work
    cwd = os.getcwd()
    cmd = command(argv, cwd=cwd, binds=[] if (cwd + "/").startswith("/tmp/") else [cwd])
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
