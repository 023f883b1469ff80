"""The plyc command line: one module per subcommand (plyc/commands/); here,
the parser they make up and the one way anything ends (main)."""
from __future__ import annotations

import argparse
import atexit
import errno
import io
import os
import signal
import sys

from . import dccache
dccache.install()       # before the imports below make their dataclasses
atexit.register(dccache.save)

from . import __version__, progress  # noqa: E402
from .commands import argdist, build, check, doctor, emit, run, sysroot  # noqa: E402
from .commands import list as list_cmd  # noqa: E402
from .children import SIGNALS, Terminated, on_signal  # noqa: E402
from .diag import PlycError  # noqa: E402
from .safefile import UnsafeFolder  # noqa: E402
from .cachedir import ToolchainError  # noqa: E402

# The subcommands, in `plyc -h`'s order.
COMMANDS = (build, run, check, emit, list_cmd, argdist, doctor, sysroot)


class _ClosedStdout(io.TextIOBase):
    """sys.stdout when plyc starts with fd 1 closed (Python's None): a
    write is an error said as a full disk's is, not an AttributeError."""

    def write(self, s):
        raise OSError(errno.EBADF, "standard output is closed")


def _internal(err: BaseException) -> int:
    text = " ".join(str(err).split())[:400]
    print(f"plyc: internal error, please report: {type(err).__name__}: {text}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    """plyc's entry point: whatever goes wrong ends in one line, never a
    Python traceback (a plyc bug is an "internal error" to report)."""
    saved = {}
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    try:
        try:
            for sig in SIGNALS:
                saved[sig] = signal.signal(sig, on_signal)
        except ValueError:
            pass        # called in-process, off the main thread: the caller's signals
        rc = _main(argv)
        sys.stdout.flush()      # the output's last write checked here, not lost at exit
        return rc
    except KeyboardInterrupt:
        return 130
    except Terminated as sig:
        return 128 + sig.args[0]
    except BrokenPipeError:
        # The reader of stdout left (plyc doctor | head -1): quiet, exit 0
        # as the tracers after `| head`; stdout pointed at /dev/null so the
        # flush at exit fails no more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF):
            return _internal(err)
        # a full disk or a failed device (plyc list > /dev/full): said, not a
        # plyc bug; stdout pointed at /dev/null so the flush at exit fails no more
        where = err.filename or "writing output"
        print(f"plyc: error: {where}: {err.strerror or os.strerror(err.errno)}", file=sys.stderr)
        if not isinstance(sys.stdout, _ClosedStdout):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as err:
        return _internal(err)
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="plyc", description="Compile ply tracing scripts into static tracers.",
                                 epilog="plyc SCRIPT [ARGS] is plyc run SCRIPT -- ARGS "
                                 "(a #!/usr/bin/env plyc script run as a program)")
    # bpftrace's -V, as bpftrace prints its version
    ap.add_argument("-V", "--version", action="version", version=f"plyc v{__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every toolchain command")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add(sub)
    ap.commands = sub.choices       # each command's own parser, by name (script_form, run.parse_args)
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="no progress lines for long first-time steps (printed on a terminal only)")
    for p in sub.choices.values():
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="print every toolchain command")
        p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="no progress lines for long first-time steps")
    return ap


def script_form(argv: list, ap: argparse.ArgumentParser) -> list:
    """`plyc FILE ARGS` (a `#!/usr/bin/env plyc` script run as a program)
    is `plyc run FILE -- ARGS`: a first word that is no command nor option
    but a file. `plyc run`'s options may come before FILE (`#!/usr/bin/env
    -S plyc --lang bpftrace` for a bpftrace script named without .bt);
    -e, whose text is the script, may not."""
    actions = ap.commands["run"]._option_string_actions
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        name, eq, _ = argv[i].partition("=")
        action = actions.get(name)
        if action is None or name in ("-e", "-h", "--help"):
            return argv
        i += 2 if action.nargs != 0 and not eq else 1
    if i < len(argv) and argv[i] not in ap.commands and not argv[i].startswith("-") and os.path.isfile(argv[i]):
        return ["run", *argv[:i], argv[i], "--", *argv[i + 1:]]
    return argv


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "argdist":
        return argdist.main(argv[1:])     # bcc argdist's own command line, as is
    ap = parser()
    argv = script_form(argv, ap)
    # plyc run -e TEXT's tracer arguments, apart from argparse
    args = run.parse_args(ap, argv) if argv[:1] == ["run"] else ap.parse_args(argv)
    progress.quiet = args.quiet
    if not getattr(args, "command", None):
        ap.print_help()
        return 2
    try:
        return args.func(args)
    except PlycError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except (ToolchainError, UnsafeFolder) as err:
        print(f"plyc: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:
        # A BTFError comes only from plyc.btf, loaded by the builds that read
        # BTF: not imported here for the commands that never do (plyc run of
        # a cached tracer, --version).
        btf = sys.modules.get("plyc.btf")
        if btf is None or not isinstance(err, btf.BTFError):
            raise
        print(f"plyc: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
