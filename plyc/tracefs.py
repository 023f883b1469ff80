"""Tracepoint formats of the build machine, for type-checking `data->field`.
The tracer reads the device's own format files when it starts, so offsets
here are never baked into the binary; only names, sizes and types are."""
from __future__ import annotations

import fnmatch
import functools
import os
import re
import subprocess
from dataclasses import dataclass

from . import types as T

CANDIDATES = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


@dataclass(frozen=True)
class Field:
    name: str
    ctype: str
    offset: int
    size: int
    signed: bool
    type: T.Type
    decl: str = ""          # the name as declared, [N] of an array kept (tp_btf's; for `plyc list -v`)


class TracefsError(Exception):
    pass


@functools.lru_cache(maxsize=1)
def root() -> str:
    override = os.environ.get("PLYC_TRACEFS")
    if override:
        return override
    for cand in CANDIDATES:
        if os.path.isdir(os.path.join(cand, "events")):
            return cand
    # Not mounted yet (the usual state at boot): mount it where it belongs.
    if os.geteuid() == 0 and os.path.isdir(CANDIDATES[0]):
        subprocess.run(["mount", "-t", "tracefs", "tracefs", CANDIDATES[0]],
                       capture_output=True, check=False)
        if os.path.isdir(os.path.join(CANDIDATES[0], "events")):
            return CANDIDATES[0]
    raise TracefsError("tracefs is not available on the build machine "
                       "(mount it: mount -t tracefs tracefs /sys/kernel/tracing, or run as root)")


FIELD_RE = re.compile(r"field:(?P<decl>[^;]*);\s*offset:(?P<off>\d+);\s*size:(?P<size>\d+);\s*signed:(?P<signed>\d+);")


# Declared C integer types: a field's value is one of these, whatever size
# its slot has (syscall arguments sit in word-sized slots).
C_INTS = {
    "char": (1, True), "signed char": (1, True), "unsigned char": (1, False), "bool": (1, False),
    "short": (2, True), "unsigned short": (2, False), "int": (4, True), "unsigned int": (4, False),
    "unsigned": (4, False), "long": (8, True), "unsigned long": (8, False), "long long": (8, True),
    "unsigned long long": (8, False), "s8": (1, True), "u8": (1, False), "s16": (2, True), "u16": (2, False),
    "s32": (4, True), "u32": (4, False), "s64": (8, True), "u64": (8, False), "pid_t": (4, True),
    "uid_t": (4, False), "gid_t": (4, False), "umode_t": (2, False), "size_t": (8, False),
    "ssize_t": (8, True), "loff_t": (8, True), "off_t": (8, True), "gfp_t": (4, False),
    "key_serial_t": (4, True), "clockid_t": (4, True), "qid_t": (4, False), "rwf_t": (4, True),
    "aio_context_t": (8, False), "key_t": (4, True), "mqd_t": (4, True), "timer_t": (4, True),
}


def field_type(group: str, ctype: str, name: str, size: int, signed: bool) -> T.Type:
    array = re.search(r"\[(\d*)\]$", name)
    base = re.sub(r"\b(const|volatile|__user)\b", "", ctype).strip()
    base = re.sub(r"\s+", " ", base)
    if ctype.startswith("__data_loc"):
        return T.Type("dataloc", 4, False, pointee="char" if "char" in ctype else "u8")
    if array:
        if "char" in base:
            return T.Str(size)
        return T.Buf(size)
    if "*" in base:
        # `const char *const * argv` points to a `char *`: the last '*' is the field's
        pointee = re.sub(r"\s*\*$", "", base).strip()
        pointee = re.sub(r"\s*\*", " *", pointee)
        # Pointers in syscall arguments point into the caller's memory.
        return T.Ptr(pointee, user=(group == "syscalls" or "__user" in ctype), size=8)
    key = base.lstrip("_") if base.lstrip("_") in C_INTS else base
    if key in C_INTS:
        csize, csigned = C_INTS[key]
        return T.Int(csize, csigned)
    if size not in (1, 2, 4, 8):
        return T.Buf(size)
    return T.Int(size, signed)


def parse_format(group: str, text: str) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    for m in FIELD_RE.finditer(text):
        decl = m["decl"].strip()
        dm = re.match(r"(?P<ctype>.*?)\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<arr>\[\d*\])?$", decl)
        if not dm:
            continue
        name = dm["name"]
        size, signed = int(m["size"]), m["signed"] == "1"
        ctype = dm["ctype"]
        typ = field_type(group, ctype, name + (dm["arr"] or ""), size, signed)
        fields[name] = Field(name, ctype, int(m["off"]), size, signed, typ)
    return fields


@functools.lru_cache(maxsize=None)
def event_fields(group: str, event: str) -> dict[str, Field]:
    path = os.path.join(root(), "events", group, event, "format")
    try:
        with open(path) as f:
            return parse_format(group, f.read())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise TracefsError(f"no tracepoint {group}:{event} on the build machine") from None
    except PermissionError:
        raise TracefsError(f"cannot read {path}: permission denied (run as root)") from None
    except OSError as err:
        raise TracefsError(f"cannot read {path}: {err.strerror}") from None


def matching_events(group: str, pattern: str) -> list:
    """The build machine's events of a group that a glob matches, by name."""
    path = os.path.join(root(), "events", group)
    try:
        names = sorted(os.listdir(path))
    except FileNotFoundError:
        raise TracefsError(f"no tracepoint group {group} on the build machine") from None
    except OSError as err:
        raise TracefsError(f"cannot read {path}: {err.strerror}") from None
    return [n for n in names if fnmatch.fnmatchcase(n, pattern)
            and os.path.isfile(os.path.join(path, n, "format"))]
