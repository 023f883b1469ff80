"""plyc's cache folder, trusted before use, and the error a build raises
when its tools or folders fail (ToolchainError). Below toolchain.py and
what it calls to prepare a target's libraries (sysroot.py, musl.py, sdklibs.py)."""
from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path
from typing import Callable, Optional

from .safefile import changeable


class ToolchainError(Exception):
    pass


def built_once(folder: Path, ready: Callable[[], bool], build: Callable[[], None]) -> None:
    """build() what folder is to hold unless ready() says it is there.
    Builds running side by side (make test's parallel run) build it once:
    the others wait on the folder's lock and find it ready."""
    if ready():
        return
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not ready():
                build()


class CacheError(ToolchainError, OSError):
    """plyc's cache cannot be used: a ToolchainError for the build, an
    OSError for what can go without the cache (the grammar's parser)."""


FIX = "set PLYC_CACHE=DIR to a folder you can write"


def _base() -> str:
    """Where the cache is: $PLYC_CACHE, else $XDG_CACHE_HOME/plyc, else
    ~/.cache/plyc (nothing made under a home folder that is not there)."""
    if os.environ.get("PLYC_CACHE"):
        return os.environ["PLYC_CACHE"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "plyc")
    home = os.path.expanduser("~")
    if home == "~" or not os.path.isdir(home):
        # nobody's /nonexistent: making it would leave root's folders there
        raise CacheError(f"no folder for plyc's cache: the home folder {home} does not exist; {FIX}")
    return os.path.join(home, ".cache", "plyc")


# The cache folders checked in this process, by (path, effective uid): a
# build asks for the cache many times, and each check stats every folder
# above it; a process that changes its euid (sudo's user) checks anew.
_CHECKED: dict = {}


def cache_dir() -> Path:
    """plyc's cache ($PLYC_CACHE, else ~/.cache/plyc): made private if
    missing, refused unless it is ours and only ours (trusted_dir) and we
    can write in it; checked once a process."""
    path = Path(_base()).absolute()     # compiles run elsewhere (the work folder)
    key = (str(path), os.geteuid())
    if key in _CHECKED:
        return _CHECKED[key]
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        # e.g. a user whose $HOME is not there (nobody's /nonexistent)
        raise CacheError(f"cannot make plyc's cache folder {path}: {err.strerror} "
                         "(set $PLYC_CACHE or $XDG_CACHE_HOME to a folder you can write)") from None
    trusted_dir(path, "plyc's cache")
    writable(path)
    _CHECKED[key] = path
    return path


def writable(path: Path) -> None:
    """CacheError, saying what to do, unless we can add files to the cache."""
    if os.access(path, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        return
    try:
        readonly = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        readonly = False
    if readonly:
        why = "is on a read-only file system"
    else:
        st = os.stat(path)
        why = f"is not writable by you (owned by uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o})"
    raise CacheError(f"plyc's cache {path} {why}; {FIX}")


@contextlib.contextmanager
def writing(path: Path):
    """Writes in the cache: a failure (a full disk) is an error naming the
    folder and what to do, not an internal error."""
    try:
        yield
    except CacheError:
        raise
    except OSError as err:
        raise CacheError(f"cannot write in plyc's cache {path}: {err.strerror or err}; "
                         f"free some space there, or {FIX}") from None


def trusted_dir(path: Path, what: str) -> None:
    """plyc unpickles its grammar and links libplycrt.a from its cache: a
    directory another user owns or may write to could hand root code to
    run. ToolchainError unless path is a directory (not a link) owned by us
    or root, not writable by group or others."""
    try:
        st = os.lstat(path)
    except OSError as err:
        raise CacheError(f"{what} {path}: {err.strerror}") from None
    problem = None
    if not stat.S_ISDIR(st.st_mode):
        problem = "is not a directory (a symbolic link?)"
    elif st.st_uid not in (os.geteuid(), 0):
        problem = f"is owned by uid {st.st_uid}, not by you"
    elif st.st_mode & 0o022:
        problem = f"is writable by {'group and others' if st.st_mode & 0o022 == 0o022 else 'group' if st.st_mode & 0o020 else 'others'} (mode {stat.S_IMODE(st.st_mode):o})"
    else:
        # a folder on the way someone else can change could swap the cache
        # for a link or a folder of theirs between this check and its use
        on_the_way = changeable(str(path.parent))
        if on_the_way:
            problem = f"is in a folder another user can change ({on_the_way})"
    if problem:
        raise CacheError(f"{what} {path} {problem}: not used; remove it, fix it (chmod go-w), "
                             "or set $PLYC_CACHE to a directory of your own")


def untrusted_file(path: Path) -> Optional[str]:
    """Why a file in plyc's (checked) cache is not to be used, or None: a
    regular file (not a link), owned by us or root, writable by no one
    else. The directory's check keeps others from adding files; this one
    catches a file made before, by hand or another tool (a hard link to
    someone else's file, a group-writable copy)."""
    try:
        st = os.lstat(path)
    except OSError as err:
        return err.strerror
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid not in (os.geteuid(), 0):
        return f"is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o022:
        return f"is writable by others than its owner (mode {stat.S_IMODE(st.st_mode):o})"
    return None
