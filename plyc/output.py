"""Where a build writes: the tracer (-o) and the generated files (--keep).
The tracer is linked in plyc's private work folder, then copied into a
new file of its own beside the target (safefile.replace: O_EXCL, by
descriptor, so two builds never share one and no one can swap it) and
renamed over the target only when the target is a regular file or absent:
as root, `-o /dev/null` must not turn the device into a file. A failure or
a signal leaves no temporary behind."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from . import safefile
from .cachedir import ToolchainError


KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def check_target(out: str, option: str = "-o") -> None:
    """ToolchainError unless `out` names a regular file, a symbolic link to
    one, or nothing yet in a directory that exists."""
    if not out:
        raise ToolchainError(f"{option}: an empty file name")
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise ToolchainError(f"{option} {out}: {err.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        hint = " (give the tracer's file name)" if stat.S_ISDIR(st.st_mode) else ""
        raise ToolchainError(f"{option} {out}: is {_kind(st.st_mode)}, not a file plyc may replace{hint}")
    parent = os.path.dirname(out) or "."
    if not os.path.isdir(parent):
        raise ToolchainError(f"{option} {out}: no directory {parent}")


# The tracer as the linker writes it, in the work folder.
LINKED = "linked.plyc-out"


def work_folder() -> Path:
    """A new private folder (mkdtemp: 0700) for a build's files, in a
    temporary folder ($TMPDIR, /tmp) no one but us and root can change
    (a sticky /tmp is fine: our folder in it is ours)."""
    try:
        return Path(safefile.new_private_folder("plyc-"))
    except safefile.UnsafeFolder as err:
        raise ToolchainError(str(err)) from None


def install(built: Path, out: str, option: str = "-o", durable_name: bool = True) -> None:
    """The tracer `built` (linked in plyc's private work folder) copied to
    `out`: into a new file beside it, made O_EXCL|O_NOFOLLOW by the
    folder's descriptor and made executable (as the umask allows) by its
    own, then renamed over `out`, checked again (it may have changed during
    the build). Nothing here writes, or chmods, a path another user could
    have swapped for a link (safefile.py). durable_name=False: the rename
    not synced to disk (safefile.replace), for the run cache's tracers."""
    check_target(out, option)
    parent = os.path.dirname(out) or "."
    umask = safefile.umask()
    try:
        dir_fd = safefile.open_dir(parent)
    except OSError as err:
        raise ToolchainError(f"{option} {out}: {parent}: {err.strerror}") from None
    try:
        name = os.path.basename(out)
        # the last look at the target, by the folder the rename goes through
        try:
            st = os.stat(name, dir_fd=dir_fd)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ToolchainError(f"{option} {out}: is {_kind(st.st_mode)}, not a file plyc may replace")
        safefile.replace(dir_fd, name, safefile.copy_from(str(built)), 0o777 & ~umask, durable_name)
    except safefile.Swapped as err:
        raise ToolchainError(f"{option} {out}: not written: {err}") from None
    except OSError as err:
        raise ToolchainError(f"{option} {out}: cannot write in {parent}: {err.strerror}") from None
    finally:
        os.close(dir_fd)


def _owners() -> tuple:
    """Who may own --keep's folder: us, root, and the user sudo ran us for."""
    sudo = os.environ.get("SUDO_UID", "") if os.geteuid() == 0 else ""
    return (os.geteuid(), 0) + ((int(sudo),) if sudo.isdigit() else ())


def _keep_fd(path: str) -> int:
    """A descriptor of --keep's folder, refused when someone else owns it
    (they could have planted links for root to write through; the files
    are written exclusively anyway, see keep())."""
    try:
        fd = safefile.open_dir(path)
    except OSError as err:
        raise ToolchainError(f"--keep {path}: {err.strerror}") from None
    st = os.fstat(fd)
    if st.st_uid not in _owners():
        os.close(fd)
        raise ToolchainError(f"--keep {path}: is owned by uid {st.st_uid}, not by you: "
                             "plyc writes only in a folder of yours (give another --keep folder)")
    return fd


def keep_dir(path: str) -> Path:
    """--keep DIR: made if missing, ours (or root's); a clear error when it
    cannot be. Checked before the build, so that a bad one costs nothing."""
    if not path:
        raise ToolchainError("--keep: an empty directory name")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ToolchainError(f"--keep {path}: is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ToolchainError(f"--keep {path}: cannot make the directory: {err.strerror}") from None
    os.close(_keep_fd(path))
    return p


def keep(path: str, workdir: Path, skip: tuple = ()) -> None:
    """The build's files (made in plyc's private work folder) copied into
    --keep's folder, each one replaced exclusively by descriptor
    (safefile.replace), so a link planted there is replaced, never followed."""
    umask = safefile.umask()
    dir_fd = _keep_fd(path)
    try:
        for f in sorted(workdir.iterdir()):
            if f.is_file() and not f.is_symlink() and f.name not in skip:
                safefile.replace(dir_fd, f.name, safefile.copy_from(str(f)), 0o666 & ~umask)
    except OSError as err:
        raise ToolchainError(f"--keep {path}: cannot write in it: {err.strerror or err}") from None
    finally:
        os.close(dir_fd)
