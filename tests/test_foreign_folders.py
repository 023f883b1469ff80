"""Issue 29 (items 5-7): root building into folders another user controls,
and caches plyc cannot use. The attacker is a real other user (`nobody`,
through setpriv) running a rename-and-symlink loop while root builds; the
canary is a root-owned file whose mode and bytes must not change
(docs/safety.md, "Folders other users control", "Caches")."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plyc import output, safefile  # noqa: E402
from test_build_safety import clear_error, plyc  # noqa: E402
from plyc.cachedir import CacheError, ToolchainError  # noqa: E402

NOBODY = 65534
BT_SCRIPT = 'BEGIN { printf("hello\\n"); exit(); }\n'
CANARY = b"root's secret\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (the victim) and nobody (the attacker)")

# The attacker, run as nobody with the system's Python (stdlib only): it
# swaps every plyc temporary that appears in its folder for a link to the
# canary (keeping plyc's file aside, as a real attacker would), until told
# to stop; it says how often it got one.
ATTACKER = r'''
import os, sys
folder, canary = sys.argv[1], sys.argv[2]
swaps = 0
open(os.path.join(folder, "ready"), "w").close()
while not os.path.exists(os.path.join(folder, "stop")):
    for name in os.listdir(folder):
        if name.endswith(".plyc-tmp"):
            path = os.path.join(folder, name)
            try:
                os.rename(path, os.path.join(folder, "stolen-%d" % swaps))
                os.symlink(canary, path)
            except OSError:
                continue
            swaps += 1
            with open(os.path.join(folder, "swaps.new"), "w") as f:
                f.write(str(swaps))
            os.rename(os.path.join(folder, "swaps.new"), os.path.join(folder, "swaps"))
'''


@pytest.fixture
def arena():
    """A folder below /tmp that nobody can reach (0711, root's), with
    `theirs`: a folder nobody owns, where root will be asked to write; and
    a root-owned canary (0600) outside it."""
    top = Path(tempfile.mkdtemp(prefix="plyc-foreign-", dir="/tmp"))
    try:
        top.chmod(0o711)
        theirs = top / "theirs"
        theirs.mkdir()
        os.chown(theirs, NOBODY, NOBODY)
        theirs.chmod(0o755)
        canary = top / "canary"
        canary.write_bytes(CANARY)
        canary.chmod(0o600)
        yield top, theirs, canary
    finally:
        shutil.rmtree(top, ignore_errors=True)


def canary_intact(canary: Path):
    st = os.lstat(canary)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0, oct(st.st_mode)
    assert canary.read_bytes() == CANARY


class Attacker:
    def __init__(self, folder: Path, canary: Path):
        self.folder = folder
        script = folder / "attack.py"
        script.write_text(ATTACKER)
        os.chown(script, NOBODY, NOBODY)
        self.proc = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                                      "/usr/bin/python3", str(script), str(folder), str(canary)])
        deadline = time.monotonic() + 60
        while not (folder / "ready").exists():        # a marker, not a sleep
            assert self.proc.poll() is None, "the attacker did not start"
            assert time.monotonic() < deadline
            time.sleep(0.01)

    def swaps(self) -> int:
        try:
            return int((self.folder / "swaps").read_text())
        except FileNotFoundError:
            return 0

    def stop(self) -> int:
        (self.folder / "stop").touch()
        assert self.proc.wait(timeout=60) == 0
        return self.swaps()


def test_a_root_build_into_another_users_folder_never_writes_through_their_links(arena, tmp_path):
    """Before: the linker wrote, and finish() chmod'ed, the temporary by
    path: the first build made the canary a 0755 tracer. Now the linker
    writes in plyc's private folder and the copy beside the target goes
    through a descriptor of a file plyc made O_EXCL."""
    top, theirs, canary = arena
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    attacker = Attacker(theirs, canary)
    try:
        results = []
        for _ in range(3):
            proc = plyc("build", str(script), "-o", str(theirs / "tracer"), "--keep", str(top / "kept"))
            results.append(proc)
            canary_intact(canary)
    finally:
        attacker.stop()
    for proc in results:
        # built, or refused because the temporary was taken: never a write through the link
        err = proc.stderr.decode()
        assert proc.returncode == 0 or "not written" in err, err
        assert "Traceback" not in err and "internal error" not in err, err
    canary_intact(canary)


def test_installing_while_another_user_swaps_the_temporary(arena, tmp_path):
    """The window that is left (the copy beside the target, its fchmod,
    fsync and rename) raced many times by nobody's loop: the canary never
    changes, and each install either lands or is refused as swapped."""
    top, theirs, canary = arena
    built = tmp_path / "built"
    built.write_bytes(os.urandom(1 << 20))
    attacker = Attacker(theirs, canary)
    outcomes = {"installed": 0, "refused": 0}
    try:
        for _ in range(300):
            try:
                output.install(built, str(theirs / "tracer"))
                outcomes["installed"] += 1
            except ToolchainError as err:
                assert "not written" in str(err), err
                outcomes["refused"] += 1
            canary_intact(canary)
            if attacker.swaps() >= 5 and outcomes["installed"]:
                break
    finally:
        swaps = attacker.stop()
    canary_intact(canary)
    assert swaps >= 1, f"the attacker never caught a temporary in 300 installs: {outcomes}"


def test_a_temporary_swapped_under_plyc_is_refused_by_inode(tmp_path):
    """Deterministic: the temporary is renamed away and a link to the canary
    put in its place while plyc writes it: the rename is refused (the name
    no longer holds the inode plyc wrote), and the link is removed, not
    followed; the target is untouched."""
    canary = tmp_path / "canary"
    canary.write_bytes(CANARY)
    canary.chmod(0o600)
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "t").write_text("old")

    def swap_then_write(fd):
        tmp = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        os.rename(folder / tmp, folder / "stolen")
        os.symlink(canary, folder / tmp)
        os.write(fd, b"new")

    fd = safefile.open_dir(str(folder))
    try:
        with pytest.raises(safefile.Swapped):
            safefile.replace(fd, "t", swap_then_write, 0o755)
    finally:
        os.close(fd)
    canary_intact(canary)
    assert (folder / "t").read_text() == "old"
    assert sorted(p.name for p in folder.iterdir()) == ["stolen", "t"]


def test_the_file_is_synced_always_its_name_unless_a_cache_entry(tmp_path, monkeypatch):
    """safefile.replace syncs the new file's bytes before the rename (a name
    never names half a file after a crash) and then the folder, except for
    the run cache's tracers (durable_name=False: a lost name is a rebuild,
    and the folder's sync was ~10 ms on the way to a new one-liner's probes)."""
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append("folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file")
        real(fd)

    monkeypatch.setattr(safefile.os, "fsync", fsync)
    built = tmp_path / "built"
    built.write_bytes(b"\x7fELF tracer")
    output.install(built, str(tmp_path / "t"))
    assert synced == ["file", "folder"]
    synced.clear()
    output.install(built, str(tmp_path / "cached"), durable_name=False)
    assert synced == ["file"] and (tmp_path / "cached").read_bytes() == b"\x7fELF tracer"


def test_output_replaces_a_link_to_a_file_never_what_it_names(tmp_path):
    """-o naming a link (planted by whoever owns the folder) to a root file:
    the link is replaced by the tracer; the file it named keeps its bytes."""
    canary = tmp_path / "canary"
    canary.write_bytes(CANARY)
    canary.chmod(0o600)
    built = tmp_path / "built"
    built.write_bytes(b"\x7fELF tracer")
    os.symlink(canary, tmp_path / "t")
    output.install(built, str(tmp_path / "t"))
    canary_intact(canary)
    assert not (tmp_path / "t").is_symlink() and (tmp_path / "t").read_bytes() == b"\x7fELF tracer"


# --- --keep DIR ---------------------------------------------------------------------

def test_keep_in_a_folder_someone_else_owns_is_refused(arena, tmp_path):
    top, theirs, canary = arena
    os.symlink(canary, theirs / "t.h")
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), "--keep", str(theirs)),
                f"--keep {theirs}: is owned by uid {NOBODY}, not by you")
    canary_intact(canary)
    assert not (tmp_path / "t").exists()


def test_keep_replaces_planted_links_never_writes_through_them(tmp_path):
    """A folder of root's that others may write (mode 777): each kept file
    is made anew and renamed in, so the links planted under the names plyc
    keeps are replaced; the canary they name is untouched."""
    canary = tmp_path / "canary"
    canary.write_bytes(CANARY)
    canary.chmod(0o600)
    kept = tmp_path / "kept"
    kept.mkdir()
    kept.chmod(0o777)
    names = ["t.h", "t.c", "t.bpf.c", "t.bpf.o", "t.obj.c"]
    for n in names:
        os.symlink(canary, kept / n)
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    proc = plyc("build", str(script), "-o", str(tmp_path / "t"), "--keep", str(kept))
    assert proc.returncode == 0, proc.stderr.decode()
    canary_intact(canary)
    for n in names:
        assert not (kept / n).is_symlink() and (kept / n).stat().st_size > 0, n
    assert "plyc_bpf_object" in (kept / "t.obj.c").read_text()
    assert not [p for p in kept.iterdir() if p.name.endswith(".plyc-tmp")]


def test_keep_holds_the_sources_of_a_failed_build(tmp_path):
    """--keep is for looking into a build: a failing one leaves what it made."""
    kept = tmp_path / "kept"
    (tmp_path / "s.bt").write_text(BT_SCRIPT)
    proc = plyc("build", str(tmp_path / "s.bt"), "-o", str(tmp_path / "t"), "--keep", str(kept),
                env={"PLYC_CLANG": shutil.which("false")})
    clear_error(proc, "compiling the BPF program failed")
    assert (kept / "t.bpf.c").exists() and (kept / "t.c").exists()


# --- the work folder ------------------------------------------------------------------

def test_a_temporary_folder_another_user_can_change_is_refused(arena, tmp_path):
    """$TMPDIR in nobody's folder: plyc's private work folder there could be
    renamed and replaced by a link while the compilers write in it."""
    top, theirs, canary = arena
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), env={"TMPDIR": str(theirs)}),
                f"the temporary folder {theirs} is not safe to build in", f"owned by uid {NOBODY}",
                "set TMPDIR")
    assert [p.name for p in theirs.iterdir()] == []


def test_changeable_reads_the_whole_way():
    assert safefile.changeable("/tmp") is None            # sticky, root's
    assert safefile.changeable(tempfile.gettempdir()) is None


def test_changeable_follows_links_through_other_users_folders(arena, tmp_path):
    top, theirs, canary = arena
    (theirs / "inner").mkdir()
    os.symlink(theirs / "inner", tmp_path / "link")
    assert f"{theirs} is owned by uid {NOBODY}" in safefile.changeable(str(tmp_path / "link"))
    assert f"owned by uid {NOBODY}" in safefile.changeable(str(theirs / "inner" / "deeper"))
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    assert "writable by others (mode 777, not sticky)" in safefile.changeable(str(open_folder / "x"))
    open_folder.chmod(0o1777)
    assert safefile.changeable(str(open_folder)) is None


# --- caches plyc cannot use -------------------------------------------------------------

def no_cache_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PLYC_CACHE", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


def test_a_home_that_does_not_exist_is_an_error_not_a_folder(tmp_path):
    home = tmp_path / "nonexistent"
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", str(script), "-o", str(tmp_path / "t")],
                          capture_output=True, env=no_cache_env(HOME=str(home)), timeout=300)
    clear_error(proc, f"the home folder {home} does not exist", "PLYC_CACHE=")
    assert not home.exists()


@pytest.fixture
def mount(tmp_path):
    """mount(options) -> a fresh tmpfs with those options, unmounted after."""
    points = []

    def make(options: str) -> Path:
        point = tmp_path / f"mnt{len(points)}"
        point.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "plyc-test", str(point)], check=True)
        points.append(point)
        return point
    yield make
    for p in points:
        subprocess.run(["umount", str(p)], check=False)


def test_a_read_only_cache_is_a_clear_error(mount, tmp_path):
    cache = mount("ro,mode=0700")
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), env={"PLYC_CACHE": str(cache)}),
                f"plyc's cache {cache} is on a read-only file system", "PLYC_CACHE=")


def test_a_full_cache_is_a_clear_error(mount, tmp_path):
    cache = mount("size=8k,mode=0700")
    script = tmp_path / "s.bt"
    script.write_text(BT_SCRIPT)
    err = clear_error(plyc("build", str(script), "-o", str(tmp_path / "t"), env={"PLYC_CACHE": str(cache)}))
    assert "No space left on device" in err, err
    assert not (tmp_path / "t").exists()


NOBODY_BUILD = r'''
import os, sys
from plyc import cachedir, cli
# as root, first: the imports a build makes on its way (jinja's, lark's),
# which nobody could not read in root's Python; and the cache, made by
# root as `sudo plyc` keeping $HOME makes it
assert cli.main(["build", sys.argv[1], "-o", sys.argv[2] + "/warm"]) == 0
os.environ["PLYC_CACHE"] = sys.argv[3]
cachedir.cache_dir()
os.setegid(65534)
os.seteuid(65534)
sys.exit(cli.main(["build", sys.argv[1], "-o", sys.argv[2] + "/t"]))
'''


def test_a_cache_root_made_is_a_plain_error_for_a_user(arena, tmp_path):
    """Before: `internal error ... PermissionError ... libplycrt.a`."""
    top, theirs, canary = arena
    script = theirs / "s.bt"
    script.write_text(BT_SCRIPT)
    work = top / "work"
    work.mkdir()
    work.chmod(0o1777)
    cache = top / "cache"
    proc = subprocess.run([sys.executable, "-c", NOBODY_BUILD, str(script), str(theirs), str(cache)],
                          capture_output=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(work)))
    clear_error(proc, f"plyc's cache {cache} is not writable by you (owned by uid 0, mode 700)", "PLYC_CACHE=")


def test_cache_dir_errors_are_cache_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "c"))
    from plyc.cachedir import cache_dir
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv("PLYC_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "gone"))
    with pytest.raises(CacheError, match="does not exist"):
        cache_dir()


def test_the_cache_is_checked_once_a_process(tmp_path, monkeypatch):
    # each call made and checked the folder again (a stat of every folder
    # above it): a build asks for it many times; another euid checks anew
    from plyc import cachedir
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "once"))
    checks = []
    real = cachedir.trusted_dir
    monkeypatch.setattr(cachedir, "trusted_dir", lambda *a: checks.append(a) or real(*a))
    assert cachedir.cache_dir() == cachedir.cache_dir() == tmp_path / "once"
    assert len(checks) == 1, checks
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "other"))
    assert cachedir.cache_dir() == tmp_path / "other" and len(checks) == 2
