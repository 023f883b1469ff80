"""clang started on a `plyc run` build's BPF C before the front end has
written it (docs/performance.md, "At the desk", fourth round): clang takes
~25 ms to load its libraries and set up before it reads a byte, time the
front end's own work now hides (and so is the runtime's key, which the
loader's compile waits on). The source is a FIFO in the build's
private work folder: clang blocks opening it, and reads the C the moment
feed() writes it. The object is the same bytes as from a regular file
(tests/test_toolchain_quick.py)."""
from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import threading
import time
from pathlib import Path

from . import children
from .toolchain import BPF_COMPILE, Toolchain, checked

# How long feed() sleeps between looks for clang's open of the FIFO.
POLL = 0.0005


class EarlyBPF:
    """clang compiling src (a FIFO made here) into out, started now."""

    def __init__(self, tc: Toolchain, src: Path, out: Path, workdir: Path):
        self.src = src
        os.mkfifo(src, 0o600)
        cmd = [str(c) for c in tc.bpf_command(src, out, workdir)]
        tc.show(cmd)
        self.proc = children.start(cmd, stdin=subprocess.DEVNULL, text=True, cwd=workdir)
        # the runtime's key (the loader's precompiled header's) meanwhile too:
        # it is on the loader's way once the front end is done
        threading.Thread(target=self._key, args=(tc,), daemon=True).start()

    @staticmethod
    def _key(tc: Toolchain):
        try:
            tc.runtime_key()
        except Exception:       # noqa: BLE001  (asked again on the loader's way, where it is reported)
            pass

    def feed(self, text: str) -> subprocess.CompletedProcess:
        """The BPF C given to clang; its run once it ended (ToolchainError
        when it failed, as Toolchain.run's)."""
        data = text.encode()
        fd = self._open()
        if fd is not None:
            try:
                # clang opens its main file again once it has read it (for
                # the debug information's checksum): a regular file of the
                # same text is under the name by then.
                tmp = self.src.with_name("." + self.src.name + ".tmp")
                with open(tmp, "xb") as f:
                    f.write(data)
                os.rename(tmp, self.src)
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            except BrokenPipeError:
                pass                # clang ended: its status says why
            finally:
                os.close(fd)
        return checked(children.finish(self.proc), BPF_COMPILE)

    def _open(self):
        """The FIFO's writing end once clang has opened it, or None when
        clang ended first."""
        while True:
            try:
                return os.open(self.src, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as err:
                if err.errno != errno.ENXIO:        # ENXIO: no reader yet
                    raise
            if self.proc.poll() is not None:
                return None
            time.sleep(POLL)

    def stop(self):
        """Not fed (the front end failed, a signal): clang killed and reaped."""
        children.stop(self.proc)
