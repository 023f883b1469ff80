"""Where a build writes: the tracer (-o) and the generated files (--keep).
The tracer is linked into a temporary of its own beside the target
(created O_EXCL, so two builds never share one) and renamed over the
target only when the target is a regular file or absent: as root, `-o
/dev/null` must not turn the device into a file. A failure or a signal
leaves no temporary behind (the caller's finally: discard)."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .toolchain import ToolchainError


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


def temporary(out: str) -> Path:
    """A new, empty file beside `out` for the linker to write, mode 0600
    until finish() makes it the tracer."""
    check_target(out)
    parent = os.path.dirname(out) or "."
    try:
        fd, name = tempfile.mkstemp(prefix=f".{os.path.basename(out)}.", suffix=".plyc-tmp", dir=parent)
    except OSError as err:
        raise ToolchainError(f"-o {out}: cannot write in {parent}: {err.strerror}") from None
    os.close(fd)
    return Path(name)


def finish(tmp: Path, out: str) -> None:
    """The linked temporary renamed over `out` (checked again: it may have
    changed during the build), executable as the umask allows."""
    check_target(out)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    try:
        os.replace(tmp, out)
    except OSError as err:
        raise ToolchainError(f"-o {out}: {err.strerror}") from None


def discard(tmp) -> None:
    if tmp is not None:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def keep_dir(path: str) -> Path:
    """--keep DIR: made if missing; a clear error when it cannot be."""
    if not path:
        raise ToolchainError("--keep: an empty directory name")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ToolchainError(f"--keep {path}: is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ToolchainError(f"--keep {path}: cannot make the directory: {err.strerror}") from None
    return p
