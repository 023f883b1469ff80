"""The plyc command line: build, run, check, emit, doctor."""
from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sys

from . import __version__, bounds, doctor, driver, runcache
from .codegen import resources
from . import arch as A
from . import types as T
from .btf import BTFError
from .diag import PlycError
from .toolchain import LIBCS, ToolchainError, cache_dir, default_libc


TARGETS = A.TARGETS


def default_target() -> str:
    return A.host_target() or "x86_64"


def cmd_sysroot(args) -> int:
    if args.libc == "musl":
        from . import musl
        print(musl.prepare(args.target, args.verbose))
        return 0
    from . import sysroot
    print(sysroot.prepare(args.target, args.verbose))
    return 0


def add_libc_arg(p):
    p.add_argument("--libc", choices=LIBCS, default=default_libc(),
                   help=f"the C library linked into the tracer (default: {default_libc()}, or $PLYC_LIBC); "
                   "musl makes tracers about a third of glibc's size")


# The largest script read: /dev/zero or a runaway file is an error, not
# a Python process growing until it is killed.
SCRIPT_MAX = 16 << 20


def read_script(args) -> tuple[str, str]:
    if getattr(args, "e", None) is not None:
        return args.e, "<command-line>"
    if not args.script:
        raise SystemExit("plyc: error: give a script file or -e 'TEXT'")
    path = args.script
    try:
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


def add_script_args(p):
    p.add_argument("script", nargs="?", help="the script: ply, or bpftrace for a .bt file")
    p.add_argument("-e", metavar="TEXT", help="the script as text (one-liners)")
    p.add_argument("--lang", choices=driver.LANGUAGES,
                   help="the script's language (default: bpftrace for a .bt file, else ply)")


def add_build_args(p):
    p.add_argument("--strsize", type=int, default=T.DEFAULT_STRSIZE,
                   help=f"default bytes read by str() ({T.DEFAULT_STRSIZE}, as ply)")
    p.add_argument("--map-entries", type=int, default=resources.DEFAULT_MAP_ENTRIES,
                   help=f"entries per map ({resources.DEFAULT_MAP_ENTRIES})")
    p.add_argument("--hist-entries", type=int, default=resources.DEFAULT_HIST_ENTRIES,
                   help=f"entries per quantize/lquantize map ({resources.DEFAULT_HIST_ENTRIES})")
    p.add_argument("--buffer-size", type=int, default=resources.DEFAULT_BUFFER,
                   help="output ring buffer bytes, a power of two (1 MiB)")
    p.add_argument("--stack-entries", type=int, default=resources.DEFAULT_STACK_ENTRIES,
                   help=f"distinct stacks kept ({resources.DEFAULT_STACK_ENTRIES})")
    p.add_argument("--target", default=default_target(), choices=TARGETS,
                   help="the architecture the tracer runs on (default: this machine's)")
    p.add_argument("--sysroot", metavar="DIR", help="the target's libraries (libbpf, libelf, zlib); "
                   "default $SYSROOT, $SDKTARGETSYSROOT, or a Debian sysroot plyc prepares (glibc only)")
    add_libc_arg(p)
    p.add_argument("--btf", metavar="FILE", help="the target kernel's BTF, for kernel types in casts "
                   "(default: /sys/kernel/btf/vmlinux)")
    p.add_argument("--unsafe", action="store_true", help="allow bpftrace's unsafe functions "
                   "(system, signal, override) in the tracer")
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
                          sysroot=args.sysroot, libc=args.libc, unsafe=args.unsafe)


def cmd_build(args) -> int:
    source, filename = read_script(args)
    out = args.output if args.output is not None else \
        driver.tracer_name(filename if filename != "<command-line>" else "tracer")
    driver.build(source, filename, out, options(args))
    if args.verbose:
        print(f"plyc: wrote {out} ({os.path.getsize(out)} bytes)")
    return 0


def cmd_run(args) -> int:
    source, filename = read_script(args)
    opts = options(args)
    name = driver.tracer_name(filename if filename != "<command-line>" else "tracer")
    out = runcache.entry(runcache.key(source, os.path.basename(filename), opts)) / name
    if not out.exists():
        driver.build(source, filename, str(out), opts)
        runcache.evict()
    runcache.touch(out.parent)
    sys.stdout.flush()
    try:
        os.execv(str(out), [name, *args.tracer_args])
    except OSError as err:
        raise SystemExit(f"plyc: error: cannot run {out}: {err.strerror}")


def cmd_check(args) -> int:
    source, filename = read_script(args)
    driver.lower(source, filename, driver.Options(btf=args.btf, lang=args.lang, unsafe=args.unsafe))
    return 0


def _is_node(value) -> bool:
    """A syntax tree node of any front end: a dataclass with a span."""
    return hasattr(value, "__dataclass_fields__") and hasattr(value, "span")


def dump_ast(node, indent=0) -> str:
    pad = "  " * indent
    if isinstance(node, list):
        return "".join(dump_ast(n, indent) for n in node)
    fields = []
    kids = []
    for name in node.__dataclass_fields__:
        if name in ("span", "name_span"):
            continue
        value = getattr(node, name)
        if _is_node(value) or (isinstance(value, list) and value and _is_node(value[0])):
            kids.append((name, value))
        elif value is not None and value != []:
            fields.append(f"{name}={value!r}")
    out = f"{pad}{type(node).__name__} {' '.join(fields)} @{node.span.line}:{node.span.col}\n"
    for name, value in kids:
        out += f"{pad}  .{name}:\n" + dump_ast(value, indent + 2)
    return out


def cmd_emit(args) -> int:
    source, filename = read_script(args)
    opts = driver.Options(verbose=args.verbose, lang=args.lang)
    if args.stage == "ast":
        sys.stdout.write(dump_ast(driver.parse(source, filename, args.lang)))
        return 0
    if args.stage == "ir":
        from .ir.dump import dump
        sys.stdout.write(dump(driver.lower(source, filename, opts)))
        return 0
    compiled = driver.compile_source(source, filename, opts)
    if args.stage == "resources":
        sys.stdout.write(resources.describe(compiled.resources))
    else:
        g = compiled.generated
        name = compiled.resources.name
        for fname, text in ((f"{name}.bpf.c", g.bpf_c), (f"{name}.h", g.header), (f"{name}.c", g.loader_c)):
            print(f"/* ==== {fname} ==== */")
            sys.stdout.write(text)
    return 0


class Terminated(BaseException):
    """SIGTERM or SIGHUP: raised where plyc is, so every `finally` cleans up
    (the temporary tracer, /tmp/plyc-*) before it exits."""


def _terminate(signum, frame):
    raise Terminated(signum)


def main(argv=None) -> int:
    """plyc's entry point: whatever goes wrong ends in one line, never a
    Python traceback (a plyc bug is an "internal error" to report)."""
    saved = {}
    try:
        try:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                saved[sig] = signal.signal(sig, _terminate)
        except ValueError:
            pass        # called in-process, off the main thread: the caller's signals
        return _main(argv)
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
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as err:
        text = " ".join(str(err).split())[:400]
        print(f"plyc: internal error, please report: {type(err).__name__}: {text}", file=sys.stderr)
        return 2
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "argdist":
        # bcc argdist's own command line, as is.
        from .frontends import argdist
        return argdist.main(argv[1:])
    ap = argparse.ArgumentParser(prog="plyc", description="Compile ply tracing scripts into static tracers.")
    ap.add_argument("--version", action="version", version=f"plyc {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every toolchain command")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("build", help="compile a script into a tracer")
    add_script_args(p)
    p.add_argument("-o", "--output", help="the tracer to write (default: the script's name)")
    add_build_args(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("run", help="build (cached) and run a tracer")
    add_script_args(p)
    add_build_args(p)
    p.add_argument("tracer_args", nargs=argparse.REMAINDER, help="-- then the tracer's own options")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("check", help="report the script's errors, build nothing")
    add_script_args(p)
    p.add_argument("--btf", metavar="FILE", help="the target kernel's BTF")
    p.add_argument("--unsafe", action="store_true", help="allow bpftrace's unsafe functions")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("emit", help="show a stage of the compilation")
    p.add_argument("--stage", choices=["ast", "ir", "resources", "c"], default="c")
    add_script_args(p)
    p.set_defaults(func=cmd_emit)

    sub.add_parser("argdist", help="bcc argdist's command line, compiled into a tracer "
                   "(plyc argdist -h)", add_help=False)

    p = sub.add_parser("doctor", help="what a build for the target uses, and how to get what it lacks")
    p.add_argument("--target", default=default_target(), choices=TARGETS)
    p.add_argument("--sysroot", metavar="DIR", help="check the libraries there, as plyc build --sysroot")
    add_libc_arg(p)
    p.set_defaults(func=lambda a: doctor.main(a))

    p = sub.add_parser("sysroot", help="prepare a target's libbpf, libelf and zlib: a Debian sysroot "
                       "(glibc), or built from Debian's sources with zig (musl)")
    p.add_argument("--target", required=True, choices=[t for t in TARGETS])
    p.add_argument("--libc", choices=LIBCS, default="glibc", help="for which C library (default: glibc)")
    p.set_defaults(func=cmd_sysroot)

    for p in sub.choices.values():
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="print every toolchain command")
    args = ap.parse_args(argv)
    if not getattr(args, "command", None):
        ap.print_help()
        return 2
    if getattr(args, "tracer_args", None) and args.tracer_args[0] == "--":
        args.tracer_args = args.tracer_args[1:]
    try:
        return args.func(args)
    except PlycError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except (ToolchainError, BTFError) as err:
        print(f"plyc: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
