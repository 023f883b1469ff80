"""`plyc argdist`: bcc argdist's command line, compiled into a standalone
tracer (-o OUT), or built once into the run cache and run (--run). The
specifiers are the argdist front end's (plyc/frontends/argdist/)."""
from __future__ import annotations

import argparse
import sys

from .. import driver, runcache
from ..diag import PlycError
from ..toolchain import ToolchainError
from .common import TARGETS, add_libc_arg, default_target, execute

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




def add(sub):
    """Listed in `plyc -h`; _main hands `plyc argdist ...` to main() as is."""
    sub.add_parser("argdist", help="bcc argdist's command line, compiled into a tracer "
                   "(plyc argdist -h)", add_help=False)


def main(argv) -> int:
    # imported here: the argdist front end (pycparser) is no other command's
    from ..frontends.argdist import (SpecError, locate_lines, lower_args, probe_origin, render_plyc_error,
                                     render_spec_error)
    from ..ir.dump import dump
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
                              origin=probe_origin(lowered), quick=not args.output)
        source = "\n".join(s.raw for s in lowered.spec_list)
        text = dump(lowered.program)
        if args.verbose:
            print(text)

        def build(out: str):
            compiled = driver.build_ir(lowered.program, source, "argdist", out, opts)
            if args.verbose:
                print(compiled.generated.bpf_c)

        if args.output:
            out = args.output
            build(out)
        else:
            out = str(runcache.tracer(runcache.key(text, repr(report), args.target, args.libc, args.sysroot,
                                                   args.btf), "argdist", build))
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
        execute(out, args.tracer_args, "plyc argdist")
    return 0
