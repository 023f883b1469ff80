"""A step that can take more than a second or two (the tracer runtime's
build, musl's libraries, a sysroot's download, the tests' bpftrace 0.27
chroot) says so on stderr: one line when it starts, one with its time when
it ends. Only on a terminal: nothing when stderr is a pipe or a file (a
build script, a test, CI) or with `plyc -q`."""
from __future__ import annotations

import contextlib
import os
import sys
import time

# `plyc -q` (cli.py); PLYC_QUIET=1 for whoever runs plyc in another way
quiet = False


def shown() -> bool:
    try:
        return not quiet and not os.environ.get("PLYC_QUIET") and sys.stderr.isatty()
    except (AttributeError, ValueError):      # stderr closed or replaced
        return False


@contextlib.contextmanager
def step(what: str):
    if not shown():
        yield
        return
    start = time.monotonic()
    print(f"plyc: {what}...", file=sys.stderr, flush=True)
    ended = "failed after"
    try:
        yield
        ended = "done in"
    finally:
        print(f"plyc: {what}: {ended} {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
