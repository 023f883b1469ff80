"""`plyc argdist`: bcc's argdist, compiled into a standalone tracer.

The specifiers lower straight to the core IR (plyc/frontends/argdist/lower.py),
with the core's periodic report (plyc/ir/report.py) asked for: the tracer
prints argdist's tables every interval instead of dumping its maps at exit.
Errors, whether found in a specifier or by the core's passes, are shown under
the specifier the user typed: `-H #2:14: error: ...`, the specifier, a caret
(an IR span's line is the specifier's number, its columns are offsets in it)."""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
from typing import Optional

from ... import bounds, driver, runcache
from ...diag import Diagnostic, PlycError
from ...ir import passes
from ...ir.dump import dump
from ...ir.nodes import Span
from ...ir.report import Report
from ...toolchain import ToolchainError
from .ctypes import CTypeError, header_problem, shown_name
from .lower import Context, Lowered, SpecErrors, lower
from .spec import SpecError, parse

EXAMPLES = """examples:

plyc argdist -H 'p::__kmalloc(u64 size):u64:size' -o kmalloc-sizes
        Histogram of kernel allocation sizes
plyc argdist -C 'p:c:malloc(size_t size):size_t:size:size==16' -o mallocs
        Count malloc() calls of 16 bytes
plyc argdist -C 'r:c:gets():char*:(char*)$retval#snooped strings' -o gets
        Snoop on the strings gets() returns
plyc argdist -H 'r::__kmalloc(size_t size):u64:$latency/$entry(size)#ns per byte' -o kmalloc-ns
        Nanoseconds per byte of __kmalloc(), as a histogram
plyc argdist -C 'p::__kmalloc(size_t size, gfp_t flags):size_t:size:flags&GFP_ATOMIC' -o atomic
        Sizes of the allocations that have GFP_ATOMIC (a kernel constant)
plyc argdist -C 't:syscalls:sys_enter_openat():char*:filename' -o opens
        Files opened, counted (tracepoint fields by name, or as args->field)
plyc argdist -H 'p:c:nanosleep(struct timespec *req):long:req->tv_nsec' -o sleeps
        Histogram of nanosleep() requests (struct timespec from the C library's headers)
plyc argdist -C 'p:c:write(int fd):int:fd' -T 5 -i 5 -n 3 -o writes
        The 5 file descriptors most written to, every 5 s, three times
"""


def parser() -> argparse.ArgumentParser:
    from ...cli import TARGETS, add_libc_arg, default_target
    ap = argparse.ArgumentParser(
        prog="plyc argdist", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
        description="Build a tracer that displays a summary of a function's parameter values "
                    "(bcc's argdist, as one static executable).")
    ap.add_argument("-p", "--pid", type=int, help="id of the process to trace (the tracer's -p overrides it)")
    ap.add_argument("-t", "--tid", type=int, help="id of the thread to trace")
    ap.add_argument("-z", "--string-size", default=80, type=int,
                    help="maximum string size to read from char* arguments (80)")
    ap.add_argument("-i", "--interval", default=1, type=int, help="output interval, in seconds (1)")
    ap.add_argument("-d", "--duration", type=float, help="total duration of trace, in seconds")
    ap.add_argument("-n", "--number", type=int, dest="count", help="number of outputs")
    ap.add_argument("-c", "--cumulative", action="store_true", help="do not clear histograms and "
                    "freq counts at each interval")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the IR the specifiers lower to, and the C")
    ap.add_argument("-T", "--top", type=int, help="number of top results to show (not applicable to "
                    "histograms)")
    ap.add_argument("-H", "--histogram", nargs="+", action="extend", dest="histspecifier",
                    metavar="specifier", help="probe specifier to capture histogram of")
    ap.add_argument("-C", "--count", nargs="+", action="extend", dest="countspecifier",
                    metavar="specifier", help="probe specifier to capture count of")
    ap.add_argument("-I", "--include", nargs="+", action="extend", metavar="header",
                    help="headers whose types (user probes) and constants (all probes) the specifiers "
                         "use: a path, or a name on the include path")
    ap.add_argument("-o", "--output", help="the tracer to write")
    ap.add_argument("--run", action="store_true", help="build (cached) and run the tracer at once")
    ap.add_argument("--btf", metavar="FILE", help="the target kernel's BTF, for struct types")
    ap.add_argument("--target", default=default_target(), choices=TARGETS, help="the architecture to build for")
    ap.add_argument("--sysroot", metavar="DIR", help="the target's libraries and C headers (as plyc build)")
    add_libc_arg(ap)
    ap.add_argument("--kernel-headers", metavar="DIR", help="the target kernel's headers (a build tree or "
                    "Debian's /usr/src/linux-headers-VERSION), to read -I headers with")
    return ap


def parse_args(argv: list):
    """argdist's options; after `--`, the tracer's own (with --run)."""
    argv = list(argv)
    tracer_args: list = []
    if "--" in argv:
        k = argv.index("--")
        argv, tracer_args = argv[:k], argv[k + 1:]
    args = parser().parse_args(argv)
    args.tracer_args = tracer_args
    return args


def check_bounds(args):
    """Every size and count option in its range (plyc/bounds.py)."""
    for option, name, limits in (("-z", "string_size", bounds.STRSIZE), ("-i", "interval", bounds.INTERVAL),
                                 ("-n", "count", bounds.COUNT), ("-T", "top", bounds.COUNT),
                                 ("-p", "pid", bounds.PID), ("-t", "tid", bounds.PID)):
        value = getattr(args, name, None)
        problem = bounds.check(option, value, limits) if value is not None else None
        if problem:
            raise SpecError(problem)
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise SpecError(f"-d must be a positive number of seconds, not {args.duration}")
    for name in args.include or ():
        problem = header_problem(name)
        if problem:
            raise SpecError(f"-I {shown_name(name)}: {problem}")


def lower_args(args) -> tuple:
    specs, errors = [], []
    for option, dest, kind in (("-C", "countspecifier", "freq"), ("-H", "histspecifier", "hist")):
        for n, raw in enumerate(getattr(args, dest) or [], 1):
            try:
                specs.append(parse(raw, kind, option, n))
            except SpecError as err:
                errors.append(err)
    if errors:
        raise errors[0] if len(errors) == 1 else SpecErrors(errors)
    if not specs:
        raise SpecError("at least one specifier is required (-C or -H)")
    check_bounds(args)
    ctx = Context(getattr(args, "target", "x86_64"), getattr(args, "sysroot", None), args.btf,
                  tuple(args.include or ()), getattr(args, "kernel_headers", None),
                  bool(getattr(args, "verbose", False)), " ".join(s.raw for s in specs))
    if ctx.kernel_headers:
        try:
            ctx.tree()
        except CTypeError as err:
            raise SpecError(str(err), note=err.note) from None
    lowered = lower(specs, strsize=args.string_size, tid=args.tid, ctx=ctx)
    try:
        missing = ctx.missing_includes()
    except CTypeError as err:
        raise SpecError(str(err), note=err.note) from None
    lowered.warnings = [f"-I {h}: no such header (nothing in the specifiers needed it: kernel types come "
                        "from BTF)" for h in missing]
    report = Report(args.interval, tuple(lowered.sections), count=args.count or 0,
                    duration=float(args.duration or 0), top=args.top or 0, cumulative=args.cumulative,
                    default_pid=args.pid or 0)
    lowered.program.report = report
    try:
        passes.run(passes.CORE, lowered.program)
    except PlycError as err:
        raise SpecErrors([spec_error(d, lowered) for d in err.diags]) from None
    return lowered, report


# --- errors, shown under the specifier -------------------------------------------------

def render_at(spec, start: Optional[int], end: Optional[int], message: str, note: Optional[str] = None) -> str:
    """`plyc argdist: -H #2:14: error: message`, the specifier, a caret
    under [start, end)."""
    if spec is None:
        text = f"plyc argdist: error: {message}"
        return text + (f"\nnote: {note}" if note else "")
    raw = spec.raw
    if start is None or start < 0:
        start, end = 0, len(raw)
    start = min(start, len(raw))
    end = max(start + 1, min(end if end is not None else start + 1, len(raw)))
    line = raw.count("\n", 0, start) + 1
    lines = raw.split("\n")
    line_start = raw.rfind("\n", 0, start) + 1
    col = start - line_start + 1
    end_col = min(end, line_start + len(lines[line - 1])) - line_start + 1
    d = Diagnostic(message, Span(line, col, line, max(end_col, col + 1)), note=note)
    text = d.render_lines(spec.name, lines)
    # One-line specifiers need no line number: "-H #2:14:", not "-H #2:1:14:".
    if len(lines) == 1:
        text = text.replace(f"{spec.name}:1:{col}:", f"{spec.name}:{col}:", 1)
    return "plyc argdist: " + text


def render_spec_error(err: SpecError) -> str:
    errs = err.errors if isinstance(err, SpecErrors) else [err]
    return "\n".join(render_at(e.spec, e.start, e.end, e.message, e.note) for e in errs)


def probe_origin(lowered: Lowered):
    """The specifier a probe came from (its span's line), as the tracer
    names it in its messages: ("-C #1", the specifier as typed)."""
    def origin(line: int, spec: str) -> Optional[tuple]:
        found = lowered.spec_at(line)
        return (found.name, found.raw) if found is not None else None
    return origin


def spec_error(d: Diagnostic, lowered: Lowered) -> SpecError:
    """A diagnostic of the core's, on the specifier its span points into."""
    spec = lowered.spec_at(d.span.line) if d.span is not None else None
    if spec is None:
        return SpecError(d.message, note=d.note)
    end = d.span.end_col - 1 if d.span.end_line == d.span.line else len(spec.raw)
    return SpecError(d.message, spec, d.span.col - 1, end, d.note)


def render_plyc_error(err: PlycError, lowered: Lowered) -> str:
    return "\n".join(render_spec_error(spec_error(d, lowered)) for d in err.diags)


def locate_lines(message: str, lowered: Optional[Lowered]) -> str:
    """`argdist:LINE:` (a compiler message about the C of a statement) as
    the specifier that statement came from."""
    if lowered is None:
        return message

    def spec_of(m):
        spec = lowered.spec_at(int(m.group(1)))
        return f"{spec.name}:" if spec is not None else m.group(0)
    return re.sub(r"argdist:(\d+):", spec_of, message)


def main(argv) -> int:
    args = parse_args(argv)
    if not args.output and not args.run:
        print("plyc argdist: error: give -o OUT (or --run)", file=sys.stderr)
        return 2
    if args.tracer_args and not args.run:
        print("plyc argdist: error: arguments after '--' are the tracer's, for --run", file=sys.stderr)
        return 2
    lowered = None
    try:
        lowered, report = lower_args(args)
        for w in lowered.warnings:
            print(f"plyc argdist: warning: {w}", file=sys.stderr)
        opts = driver.Options(strsize=args.string_size, verbose=False, btf=args.btf,
                              target=args.target, sysroot=args.sysroot, libc=args.libc,
                              origin=probe_origin(lowered))
        source = "\n".join(s.raw for s in lowered.spec_list)
        text = dump(lowered.program)
        if args.verbose:
            print(text)
        out = args.output
        if not out:
            out = str(runcache.entry(runcache.key(text, repr(report), args.target, args.libc, args.sysroot,
                                                  args.btf)) / "argdist")
        if not (args.run and not args.output and os.path.exists(out)):
            compiled = driver.build_ir(lowered.program, source, "argdist", out, opts)
            if args.verbose:
                print(compiled.generated.bpf_c)
            if not args.output:
                runcache.evict()
    except SpecError as err:
        print(render_spec_error(err), file=sys.stderr)
        return 1
    except PlycError as err:
        print(render_plyc_error(err, lowered), file=sys.stderr)
        return 1
    except ToolchainError as err:
        print(f"plyc argdist: error: {locate_lines(str(err), lowered)}", file=sys.stderr)
        return 1
    if args.run:
        sys.stdout.flush()
        os.execv(out, [os.path.basename(out), *args.tracer_args])
    return 0
