"""plyc's cache folder, trusted before use, and the error a build raises
when its tools or folders fail (ToolchainError). Below toolchain.py and
what it calls to prepare a target's libraries (sysroot.py, musl.py)."""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional


class ToolchainError(Exception):
    pass


class CacheError(ToolchainError, OSError):
    """plyc's cache cannot be used: a ToolchainError for the build, an
    OSError for what can go without the cache (the grammar's parser)."""


def cache_dir() -> Path:
    """plyc's cache ($PLYC_CACHE, else ~/.cache/plyc): made private if
    missing, refused unless it is ours and only ours (trusted_dir)."""
    base = os.environ.get("PLYC_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "plyc")
    path = Path(base).absolute()     # compiles run elsewhere (the work folder)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        # e.g. a user whose $HOME is not there (nobody's /nonexistent)
        raise CacheError(f"cannot make plyc's cache folder {path}: {err.strerror} "
                         "(set $PLYC_CACHE or $XDG_CACHE_HOME to a folder you can write)") from None
    trusted_dir(path, "plyc's cache")
    return path


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
