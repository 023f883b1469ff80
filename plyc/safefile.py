"""Writing files where another user may be at work: plyc often runs as root,
and `-o DIR/tracer` or `--keep DIR` may name a folder someone else can
write. Such a user can swap any name in it for a symbolic link (to
/etc/shadow) at any moment, so a path there is never written, chmod'ed or
opened twice: the folder is opened once, a new file is made in it by its
descriptor (O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file or link),
written, fchmod'ed and fsync'ed through its own descriptor, and renamed
over the name last. The rename changes only a name in that folder, which
its owner could change anyway; it never writes through a link
(docs/safety.md, "Folders other users control")."""
from __future__ import annotations

import contextlib
import os
import stat
from typing import Callable, Iterator, Optional

CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeFolder(Exception):
    """The temporary folder ($TMPDIR) is one another user can change."""


class Swapped(OSError):
    """The new file's name no longer names the file plyc wrote."""


def open_dir(path: str) -> int:
    """A descriptor of the folder `path` (OSError if it is not one)."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def create(dir_fd: int, prefix: str, suffix: str, mode: int = 0o600) -> tuple:
    """(fd, name) of a new empty file in the folder dir_fd, made by plyc now
    (a name no one can have planted: EEXIST on a file or link is a retry
    with another name)."""
    for _ in range(100):
        name = f"{prefix}{os.urandom(4).hex()}{suffix}"
        try:
            return os.open(name, CREATE, mode, dir_fd=dir_fd), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name {prefix}*{suffix}")


def replace(dir_fd: int, name: str, write: Callable[[int], None], mode: int, durable_name: bool = True) -> None:
    """The file `name` in the folder dir_fd replaced by a new one that
    write(fd) fills, with mode `mode` set on the descriptor: no half-written
    file under `name`, no link followed. Swapped if the new file's
    temporary name was taken over before the rename. durable_name=False:
    the rename is not synced to disk (the file's bytes always are), for a
    cache, where a crash that loses the name only costs a rebuild."""
    fd, tmp = create(dir_fd, f".{name}.", ".plyc-tmp")
    try:
        try:
            write(fd)
            os.fchmod(fd, mode)
            os.fsync(fd)
            mine = os.fstat(fd)
        finally:
            os.close(fd)
        swapped = Swapped(f"{tmp} was moved or replaced while plyc wrote it "
                          "(another user can write in that folder)")
        try:
            now = os.stat(tmp, dir_fd=dir_fd, follow_symlinks=False)
            if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
                raise swapped
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except FileNotFoundError:
            raise swapped from None
        tmp = None
    finally:
        if tmp is not None:
            unlink(dir_fd, tmp)
    if not durable_name:
        return
    try:
        os.fsync(dir_fd)      # the rename itself on disk (not every file system can)
    except OSError:
        pass


def unlink(dir_fd: int, name: str) -> None:
    """name removed from the folder (a link is removed, never followed)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def copy_from(path: str) -> Callable[[int], None]:
    """A write() for replace(): the bytes of the file at `path` (one plyc
    made in a folder of its own)."""
    def write(fd: int) -> None:
        with open(path, "rb") as src:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
    return write


def _open_folder(st: os.stat_result) -> bool:
    """Others than its owner may add, remove or rename entries: a folder
    writable by group or others and not sticky."""
    return bool(st.st_mode & 0o022) and not st.st_mode & stat.S_ISVTX


def _prefixes(path: str) -> list:
    parts = [p for p in path.split("/") if p]
    return ["/"] + ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def changeable(path: str) -> Optional[str]:
    """Why a user other than us and root could change what the folder
    `path` names, or None: a folder on the way (each one the path's links
    lead through) that is owned by someone else, or that others may write
    and is not sticky (in a sticky one, /tmp, an entry is its owner's).
    None means that the folder and every file plyc makes in it are plyc's
    alone."""
    me = os.geteuid()
    lexical = os.path.abspath(path)
    for prefix in _prefixes(lexical):
        # each name on the way, and each folder its links lead through
        for folder in _prefixes(os.path.realpath(prefix)):
            try:
                st = os.lstat(folder)
            except OSError:
                continue        # not there (yet): made by us, below folders that passed
            if st.st_uid not in (me, 0):
                return f"{folder} is owned by uid {st.st_uid}"
            if stat.S_ISDIR(st.st_mode) and _open_folder(st):
                return f"{folder} is writable by others (mode {stat.S_IMODE(st.st_mode):o}, not sticky)"
    return None


def umask() -> int:
    """The process's umask (os.umask can only be read by setting it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_base() -> str:
    """The temporary folder ($TMPDIR, /tmp) to make plyc's private folders
    in: UnsafeFolder when another user could rename one of them away and
    put a link in its place while a compiler writes there."""
    import tempfile        # here: a cached `plyc run` needs none of this (docs/performance.md)
    base = tempfile.gettempdir()
    why = changeable(base)
    if why:
        raise UnsafeFolder(f"the temporary folder {base} is not safe to build in: {why}; "
                           "set TMPDIR to a folder of your own")
    return base


def new_private_folder(prefix: str) -> str:
    """A new folder of plyc's own (mkdtemp: 0700) in temp_base(): the
    caller removes it. UnsafeFolder where it cannot be made there either."""
    import tempfile
    base = temp_base()
    try:
        return tempfile.mkdtemp(prefix=prefix, dir=base)
    except OSError as err:
        raise UnsafeFolder(f"cannot make a folder in {base}: {err.strerror}; "
                           "set TMPDIR to a folder you can write") from None


@contextlib.contextmanager
def private_folder(prefix: str) -> Iterator[str]:
    """A new folder of plyc's own (new_private_folder), removed after."""
    import shutil
    path = new_private_folder(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
