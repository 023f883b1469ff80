"""`plyc run`: build a script's tracer once (the run cache) and run it."""
from __future__ import annotations

import argparse
import os

from .. import driver, runcache
from .common import add_build_args, add_script_args, execute, options, read_script, script_name


def add(sub):
    p = sub.add_parser("run", help="build (cached) and run a tracer")
    add_script_args(p)
    add_build_args(p)
    p.add_argument("tracer_args", nargs=argparse.REMAINDER, help="-- then the tracer's own options")
    p.set_defaults(func=run, after_dashes=[])
    return p


def split(p, argv: list) -> tuple:
    """`plyc run -e TEXT ... -- ARGS`: everything after the first `--` that
    is no option's value goes to the tracer as is, apart from argparse
    (which would take the first of them for the script -e gave). Without
    -e, argparse's REMAINDER after the script does the same."""
    takes_value = {o for a in p._actions if a.option_strings and a.nargs != 0 for o in a.option_strings}
    i, script_text = 0, False
    while i < len(argv):
        if argv[i] == "--" and script_text:
            return argv[:i], argv[i + 1:]
        if argv[i] == "--" or not argv[i].startswith("-"):
            break           # the script (after `--` or not): argparse's REMAINDER takes the rest
        script_text = script_text or argv[i] == "-e" or argv[i].startswith("-e")
        i += 2 if argv[i] in takes_value else 1
    return argv, []


def tracer_argv(args) -> list:
    """The tracer's arguments: with -e, a positional before `--` is one of
    them (bpftrace's `-e TEXT p1 -- ...`), not a script."""
    before = list(args.tracer_args[1:] if args.tracer_args[:1] == ["--"] else args.tracer_args)
    if getattr(args, "e", None) is not None and args.script is not None:
        before.insert(0, args.script)
    return before + args.after_dashes


def run(args) -> int:
    source, filename = read_script(args)
    opts = options(args)
    # a bpftrace script's imports are part of it: a changed one is a new tracer
    imported = [(f.name, f.text) for f in getattr(driver.parse(source, filename, opts.lang), "imported", ())]
    key = runcache.key(source, imported, os.path.basename(filename), opts)
    out = runcache.tracer(key, script_name(filename), lambda path: driver.build(source, filename, path, opts))
    execute(str(out), tracer_argv(args))
