"""`plyc argdist`: bcc's argdist, compiled into a standalone tracer.

The specifiers lower to a ply script (plyc/argdist/lower.py), which is
compiled like any other; the tracer prints argdist's report every interval
instead of ply's map dump at exit."""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

from .. import __version__, driver
from ..diag import PlycError
from ..toolchain import ToolchainError, cache_dir
from .lower import lower
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
plyc argdist -C 't:syscalls:sys_enter_openat():char*:args->filename' -o opens
        Files opened, counted
plyc argdist -H 't:block:block_rq_complete():u32:args->nr_sector' -o sectors
        Histogram of sectors per completed block request
plyc argdist -C 'p:c:write(int fd):int:fd' -T 5 -i 5 -n 3 -o writes
        The 5 file descriptors most written to, every 5 s, three times
"""


@dataclass
class Report:
    specs: list = field(default_factory=list)
    count: Optional[int] = None
    top: Optional[int] = None
    cumulative: bool = False
    duration: Optional[float] = None
    default_pid: Optional[int] = None
    interval: int = 1


def parser() -> argparse.ArgumentParser:
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
    ap.add_argument("-v", "--verbose", action="store_true", help="print the generated ply script and C")
    ap.add_argument("-T", "--top", type=int, help="number of top results to show (not applicable to "
                    "histograms)")
    ap.add_argument("-H", "--histogram", nargs="+", action="extend", dest="histspecifier",
                    metavar="specifier", help="probe specifier to capture histogram of")
    ap.add_argument("-C", "--count", nargs="+", action="extend", dest="countspecifier",
                    metavar="specifier", help="probe specifier to capture count of")
    ap.add_argument("-I", "--include", nargs="+", action="extend", metavar="header",
                    help="accepted for compatibility: kernel types come from the kernel's BTF")
    ap.add_argument("-o", "--output", help="the tracer to write")
    ap.add_argument("--run", action="store_true", help="build (cached) and run the tracer at once")
    ap.add_argument("--btf", metavar="FILE", help="the target kernel's BTF, for struct types")
    ap.add_argument("tracer_args", nargs=argparse.REMAINDER, help="with --run: -- then tracer options")
    return ap


def build_report(args) -> tuple:
    specs = [parse(s, "freq") for s in (args.countspecifier or [])]
    specs += [parse(s, "hist") for s in (args.histspecifier or [])]
    if not specs:
        raise SpecError("at least one specifier is required (-C or -H)")
    for name in ("interval", "string_size"):
        if getattr(args, name) < 1:
            raise SpecError(f"-{'i' if name == 'interval' else 'z'} must be at least 1")
    lowered = lower(specs, interval=args.interval, strsize=args.string_size, tid=args.tid)
    report = Report(lowered.specs, args.count, args.top, args.cumulative, args.duration, args.pid,
                    args.interval)
    return lowered.script, report


def main(argv) -> int:
    args = parser().parse_args(argv)
    if not args.output and not args.run:
        print("plyc argdist: error: give -o OUT (or --run)", file=sys.stderr)
        return 2
    try:
        script, report = build_report(args)
        opts = driver.Options(strsize=args.string_size, verbose=False, btf=args.btf, argdist=report)
        if args.verbose:
            print(script)
        out = args.output
        if not out:
            key = hashlib.sha256(repr((script, vars(report), __version__)).encode()).hexdigest()[:20]
            out = str(cache_dir() / "run" / key / "argdist")
            os.makedirs(os.path.dirname(out), exist_ok=True)
        if not (args.run and not args.output and os.path.exists(out)):
            compiled = driver.build(script, "argdist.ply", out, opts)
            if args.verbose:
                print(compiled.generated.bpf_c)
    except SpecError as err:
        print(f"plyc argdist: error: {err}", file=sys.stderr)
        return 1
    except PlycError as err:
        print(err.render(), file=sys.stderr)
        print("plyc argdist: error: the specifiers above lowered to a script plyc can't compile "
              "(run with -v to see it)", file=sys.stderr)
        return 1
    except ToolchainError as err:
        print(f"plyc argdist: error: {err}", file=sys.stderr)
        return 1
    if args.run:
        extra = args.tracer_args[1:] if args.tracer_args[:1] == ["--"] else args.tracer_args
        sys.stdout.flush()
        os.execv(out, [os.path.basename(out), *extra])
    return 0
