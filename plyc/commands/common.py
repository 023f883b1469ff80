"""What the subcommands share: reading the script, the build options and
their bounds, the front ends' options, running a built tracer."""
from __future__ import annotations

import os
import sys

from .. import arch as A
from .. import bounds, driver
from .. import types as T
from ..frontends import registry
from ..toolchain import LIBCS, default_libc

TARGETS = A.TARGETS

# The largest script read: /dev/zero or a runaway file is an error, not
# a Python process growing until it is killed.
SCRIPT_MAX = 16 << 20


def default_target() -> str:
    return A.host_target() or "x86_64"


def add_libc_arg(p):
    p.add_argument("--libc", choices=LIBCS, default=default_libc(),
                   help=f"the C library linked into the tracer (default: {default_libc()}, or $PLYC_LIBC); "
                   "musl makes tracers about a third of glibc's size")


# The names of a script that is no file (its messages', its tracer's):
# -e TEXT's, and `-`'s, read from stdin
COMMAND_LINE = "<command-line>"
STDIN = "<stdin>"


def read_script(args) -> tuple[str, str]:
    if getattr(args, "e", None) is not None:
        return args.e, COMMAND_LINE
    if not args.script:
        raise SystemExit("plyc: error: give a script file or -e 'TEXT'")
    path = args.script
    try:
        if path == "-":         # the script's text from stdin, as `bpftrace -` reads it
            path, data = STDIN, sys.stdin.buffer.read(SCRIPT_MAX + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(SCRIPT_MAX + 1)
    except OSError as err:
        raise SystemExit(f"plyc: error: cannot read {path}: {err.strerror}")
    if len(data) > SCRIPT_MAX:
        raise SystemExit(f"plyc: error: {path} is larger than {SCRIPT_MAX >> 20} MiB: not a script")
    try:
        return data.decode("utf-8"), path
    except UnicodeDecodeError:
        raise SystemExit(f"plyc: error: {path} is not UTF-8 text")


def script_name(filename: str) -> str:
    """The tracer's default name: the script's, or `tracer` for -e and stdin's."""
    return driver.tracer_name(filename if filename not in (COMMAND_LINE, STDIN) else "tracer")


def add_script_args(p):
    p.add_argument("script", nargs="?", help="the script: ply, or bpftrace for a .bt file")
    p.add_argument("-e", metavar="TEXT", help="the script as text (one-liners)")
    p.add_argument("--lang", choices=driver.LANGUAGES,
                   help="the script's language (default: bpftrace for a .bt file, else ply)")


def add_frontend_args(p):
    """Each front end's options (FrontEnd.options), as flags; bpftrace's -I
    and --include."""
    for o in registry.options():
        if o.choices:
            p.add_argument(f"--{o.name}", dest=o.name.replace("-", "_"), choices=o.choices, metavar="VERSION",
                           help=f"{o.help} ({', '.join(o.choices)}; default {o.choices[0]})")
        else:
            p.add_argument(f"--{o.name}", dest=o.name.replace("-", "_"), action="store_true", help=o.help)
    p.add_argument("-I", dest="include_dirs", metavar="DIR", action="append", default=[],
                   help="search DIR for a bpftrace script's #include headers (again for more)")
    p.add_argument("--include", dest="include_files", metavar="FILE", action="append", default=[],
                   help="#include FILE before a bpftrace script's own (again for more)")


def include_args(args) -> dict:
    """-I's dirs (absolute: headers are read from elsewhere) and --include's
    files, refused where no #include line can hold the name."""
    dirs, files = getattr(args, "include_dirs", None) or [], getattr(args, "include_files", None) or []
    for name in dirs + files:
        if not name or any(c in name for c in '\0\n"<>'):
            raise SystemExit(f"plyc: error: {name!r}: not a name an #include line can hold")
    return dict(include_dirs=tuple(os.path.abspath(d) for d in dirs), include_files=tuple(files))


def frontend_options(args) -> dict:
    """The front-end options given: a flag's True/False, a choice's value
    (None when not given)."""
    return {o.name: (getattr(args, o.name.replace("-", "_"), None) if o.choices
                     else bool(getattr(args, o.name.replace("-", "_"), False)))
            for o in registry.options()}


def add_build_args(p):
    p.add_argument("--strsize", type=int, default=T.DEFAULT_STRSIZE,
                   help=f"default bytes read by str() ({T.DEFAULT_STRSIZE}, as ply)")
    p.add_argument("--map-entries", type=int, default=bounds.DEFAULT_MAP_ENTRIES,
                   help=f"entries per map ({bounds.DEFAULT_MAP_ENTRIES})")
    p.add_argument("--hist-entries", type=int, default=bounds.DEFAULT_HIST_ENTRIES,
                   help=f"entries per keyed quantize/lquantize/hist/tseries map ({bounds.DEFAULT_HIST_ENTRIES})")
    p.add_argument("--buffer-size", type=int, default=bounds.DEFAULT_BUFFER,
                   help="output ring buffer bytes, a power of two (1 MiB)")
    p.add_argument("--stack-entries", type=int, default=bounds.DEFAULT_STACK_ENTRIES,
                   help=f"distinct stacks kept ({bounds.DEFAULT_STACK_ENTRIES})")
    p.add_argument("--target", default=default_target(), choices=TARGETS,
                   help="the architecture the tracer runs on (default: this machine's)")
    p.add_argument("--sysroot", metavar="DIR", help="the target's libraries (libbpf, libelf, zlib); "
                   "default $SYSROOT, $SDKTARGETSYSROOT, or a Debian sysroot plyc prepares (glibc only)")
    add_libc_arg(p)
    p.add_argument("--btf", metavar="FILE", help="the target kernel's BTF, for kernel types in casts "
                   "(default: /sys/kernel/btf/vmlinux)")
    add_frontend_args(p)
    p.add_argument("--keep", metavar="DIR", help="keep the generated files in DIR")
    p.add_argument("--no-strip", action="store_true", help="keep symbols in the tracer")


def options(args) -> driver.Options:
    problems = [bounds.check_buffer("--buffer-size", args.buffer_size)]
    for name, limits in (("strsize", bounds.STRSIZE), ("map_entries", bounds.MAP_ENTRIES),
                         ("hist_entries", bounds.HIST_ENTRIES), ("stack_entries", bounds.STACK_ENTRIES)):
        problems.append(bounds.check(f"--{name.replace('_', '-')}", getattr(args, name), limits))
    problem = next((p for p in problems if p), None)
    if problem:
        raise SystemExit(f"plyc: error: {problem}")
    return driver.Options(lang=args.lang, strsize=args.strsize, map_entries=args.map_entries,
                          hist_entries=args.hist_entries, buffer_size=args.buffer_size,
                          stack_entries=args.stack_entries, target=args.target,
                          verbose=args.verbose, keep_dir=args.keep, strip=not args.no_strip, btf=args.btf,
                          sysroot=args.sysroot, libc=args.libc, frontend=frontend_options(args),
                          **include_args(args))


def execute(path: str, argv: list, prog: str = "plyc"):
    """Replace plyc with the tracer at path (argv: its arguments)."""
    from .. import dccache
    dccache.save()          # what exit would have saved (atexit does not run past exec)
    sys.stdout.flush()
    try:
        os.execv(path, [os.path.basename(path), *argv])
    except OSError as err:
        raise SystemExit(f"{prog}: error: cannot run {path}: {err.strerror}")
