"""`plyc run`: build a script's tracer once (the run cache) and run it."""
from __future__ import annotations

import argparse
import os
import sys

from .. import driver, runcache
from .common import add_build_args, add_script_args, execute, options, read_script, script_name


def add(sub):
    p = sub.add_parser("run", help="build (cached) and run a tracer")
    add_script_args(p)
    add_build_args(p)
    p.add_argument("tracer_args", nargs=argparse.REMAINDER,
                   help="-- then the tracer's own options; with -e, words before -- are the script's $1..")
    p.set_defaults(func=run, split_args=None)
    return p


def parse_args(ap, argv: list):
    """ap.parse_args(argv) of `plyc run ...` (argv[0]), -e's tracer arguments
    set apart first (split)."""
    mine, tracer_args = split(ap.commands["run"], argv[1:])
    args = ap.parse_args(["run", *mine])
    args.split_args = tracer_args
    return args


def split(p, argv: list) -> tuple:
    """`plyc run -e TEXT [P1...] [-- ARGS]`: (plyc's options, the tracer's
    arguments). The words that are neither plyc's options nor their values
    are the script's $1.. (bpftrace's `-e TEXT p1 -- -c CMD`), ARGS go to
    the tracer as they are; argparse would take the first of either for the
    script -e gave. Without -e, (argv, None): argparse's REMAINDER after
    the script does that."""
    takes_value = {o for a in p._actions if a.option_strings and a.nargs != 0 for o in a.option_strings}
    head = argv[:argv.index("--")] if "--" in argv else argv
    if not any(a.startswith("-e") for a in head):
        return argv, None
    mine, positional, i = [], [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return mine, _merge(positional, argv[i + 1:])
        if not a.startswith("-") or a == "-":
            positional.append(a)
        else:
            mine.append(a)
            if a in takes_value and i + 1 < len(argv):      # its value (-e TEXT, -I DIR)
                i += 1
                mine.append(argv[i])
        i += 1
    return mine, _merge(positional, [])


# The tracer's own options (runtime-c/load/loader.c, parse_args), which stop
# at its first other argument: the script's $1.. and named options come after.
TRACER_TAKES_VALUE = ("-c", "-p", "-d", "-f", "-o", "--btf", "--metrics", "--metrics-prefix")
TRACER_LONG_FLAGS = ("--version", "--help")


def _tracer_options(argv: list) -> int:
    """How many of argv's first words are the tracer's own options."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--" or not a.startswith("-") or a == "-":
            break
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            if name in TRACER_LONG_FLAGS or "=" in a and name in TRACER_TAKES_VALUE:
                i += 1
            elif name in TRACER_TAKES_VALUE:
                i += 2
            else:
                break           # a script's named option (getopt())
        else:
            # -q, -kq, -c CMD, -cCMD, -qc CMD
            flags = a[1:]
            at = next((j for j, ch in enumerate(flags) if f"-{ch}" in TRACER_TAKES_VALUE), None)
            i += 2 if at is not None and at == len(flags) - 1 else 1
    return min(i, len(argv))


def _merge(before: list, after: list) -> list:
    """The script's $1.. given before `--` go after the tracer's options
    that follow it (the tracer's options stop at its first other word)."""
    k = _tracer_options(after)
    return after[:k] + before + after[k:]


def tracer_argv(args) -> list:
    if args.split_args is not None:
        return args.split_args
    return list(args.tracer_args[1:] if args.tracer_args[:1] == ["--"] else args.tracer_args)


# The tracer's options that print and exit without tracing: it takes them
# from any user (runtime-c/load/loader.c refuses the rest without root).
TRACER_NO_TRACE = ("-h", "--help", "--version")


def traces(argv: list) -> bool:
    """Whether the tracer run with argv traces (then needs root)."""
    return not any(a in TRACER_NO_TRACE for a in argv[:_tracer_options(argv)])


def run(args) -> int:
    argv = tracer_argv(args)
    if os.geteuid() != 0 and traces(argv):
        # the tracer would refuse it, after the build: said now, as bpftrace says it at once
        print("plyc: error: tracing needs root (CAP_BPF and CAP_PERFMON); run it with sudo", file=sys.stderr)
        return 1
    source, filename = read_script(args)
    opts = options(args)
    opts.quick = True
    key = runcache.script_key(source, filename, opts)
    out = runcache.tracer(key, script_name(filename), lambda path: driver.build(source, filename, path, opts))
    execute(str(out), argv)
