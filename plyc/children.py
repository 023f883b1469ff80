"""The programs plyc runs (compilers, the linker, pahole, apt-get), and the
signals that stop plyc while they run. SIGINT, SIGTERM and SIGHUP raise
(KeyboardInterrupt, Terminated) where plyc is, so every `finally` cleans up;
run() then kills and reaps the child. A signal that lands while the child
is being started (after the fork, before Popen returns: subprocess.run
would have no process to kill, and the compiler ran on alone) is held
until the child is plyc's to kill."""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from typing import Optional


class Terminated(BaseException):
    """SIGTERM or SIGHUP: raised where plyc is, so every `finally` cleans up
    (the temporary tracer, /tmp/plyc-*) before it exits."""


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_holding = False
_pending: Optional[int] = None


def _raise(signum: int):
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def on_signal(signum, frame):
    """The handler cli installs for SIGNALS."""
    global _pending
    if _holding:
        _pending = signum
        return
    _raise(signum)


def _release():
    """A signal held while a child started: raised now."""
    global _holding, _pending
    _holding = False
    signum, _pending = _pending, None
    if signum is not None:
        _raise(signum)


# How long the main thread waits on a child at a time: a process-directed
# signal the kernel hands to another thread (at_once's) does not interrupt
# the main thread's poll(), and Python runs handlers in the main thread
# only: the signal would wait for the child to end (for ever, for a
# compiler that hangs). Waking up this often lets the handler run.
WAKE = 0.25


def _communicate(proc, input, timeout: Optional[float], main: bool) -> tuple:
    if not main:
        return proc.communicate(input, timeout=timeout)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = WAKE if deadline is None else max(0.0, min(WAKE, deadline - time.monotonic()))
        try:
            return proc.communicate(input, timeout=left)     # input is taken once, on the first call
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout) from None


def run(cmd: list, *, input=None, capture_output: bool = False, timeout: Optional[float] = None,
        check: bool = False, **popen) -> subprocess.CompletedProcess:
    """subprocess.run, with the child killed and reaped whenever plyc stops
    (a signal, a timeout, any exception), the moment it started included."""
    global _holding
    # Signals are handled in the main thread only: a call from another
    # thread (toolchain.at_once's) holds nothing, the main thread's
    # exception stops the build and that thread's child runs to its end.
    main = threading.current_thread() is threading.main_thread()
    if capture_output:
        popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    if main:
        _holding = True
    try:
        proc = subprocess.Popen(cmd, **popen)
    except BaseException:
        if main:
            _holding = False
        raise
    return finish(proc, input=input, timeout=timeout, check=check, released=not main)


def start(cmd: list, **popen) -> subprocess.Popen:
    """A child started now and ended later by finish() (or stop()), its
    output captured: a signal while it starts is held until it is ours."""
    global _holding
    popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    main = threading.current_thread() is threading.main_thread()
    if main:
        _holding = True
    try:
        proc = subprocess.Popen(cmd, **popen)
    except BaseException:
        if main:
            _holding = False
        raise
    if main:
        try:
            _release()
        except BaseException:
            stop(proc)
            raise
    return proc


def stop(proc: subprocess.Popen) -> None:
    """A child start() started, not wanted any more: killed and reaped."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for f in (proc.stdout, proc.stderr, proc.stdin):
        if f is not None:
            f.close()


def finish(proc: subprocess.Popen, *, input=None, timeout: Optional[float] = None, check: bool = False,
           released: bool = True) -> subprocess.CompletedProcess:
    """run()'s end for a child started (start()'s, or run()'s own with the
    signal still held: released False): its output and status once it
    ends, the child killed and reaped whenever plyc stops meanwhile."""
    main = threading.current_thread() is threading.main_thread()
    cmd = proc.args
    try:
        if not released:
            _release()
        out, err = _communicate(proc, input, timeout, main)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        for f in (proc.stdout, proc.stderr, proc.stdin):
            if f is not None:
                f.close()
    result = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if check:
        result.check_returncode()
    return result
