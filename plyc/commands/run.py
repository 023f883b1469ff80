"""`plyc run`: build a script's tracer once (the run cache) and run it."""
from __future__ import annotations

import argparse

from .. import driver, runcache
from .common import add_build_args, add_script_args, execute, options, read_script, script_name


def add(sub):
    p = sub.add_parser("run", help="build (cached) and run a tracer")
    add_script_args(p)
    add_build_args(p)
    p.add_argument("tracer_args", nargs=argparse.REMAINDER, help="-- then the tracer's own options")
    p.set_defaults(func=run)


def run(args) -> int:
    source, filename = read_script(args)
    opts = options(args)
    key = runcache.script_key(source, filename, opts)
    out = runcache.tracer(key, script_name(filename), lambda path: driver.build(source, filename, path, opts))
    tracer_args = args.tracer_args[1:] if args.tracer_args[:1] == ["--"] else args.tracer_args
    execute(str(out), tracer_args)
