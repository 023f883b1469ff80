"""`plyc build`: a script into a tracer."""
from __future__ import annotations

import os

from .. import driver
from .common import add_build_args, add_script_args, options, read_script, script_name


def add(sub):
    p = sub.add_parser("build", help="compile a script into a tracer")
    add_script_args(p)
    p.add_argument("-o", "--output", help="the tracer to write (default: the script's name)")
    add_build_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    source, filename = read_script(args)
    out = args.output if args.output is not None else script_name(filename)
    opts = options(args)
    compiled = driver.build(source, filename, out, opts)
    from .. import presence  # its readers load only for a build that warns
    presence.warn(compiled.ir, filename, source, opts.target, opts.btf)
    if args.verbose:
        print(f"plyc: wrote {out} ({os.path.getsize(out)} bytes)")
    return 0
