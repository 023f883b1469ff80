"""`plyc check`: the script's errors, nothing built."""
from __future__ import annotations

from .. import driver
from .common import add_frontend_args, add_script_args, frontend_options, include_args, read_script


def add(sub):
    p = sub.add_parser("check", help="report the script's errors, build nothing")
    add_script_args(p)
    p.add_argument("--btf", metavar="FILE", help="the target kernel's BTF")
    add_frontend_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    source, filename = read_script(args)
    opts = driver.Options(btf=args.btf, lang=args.lang, frontend=frontend_options(args), **include_args(args))
    prog = driver.lower(source, filename, opts)
    # the kernel's fixed limits too (maps per program, programs per tracepoint)
    driver.plan(prog, source, filename, opts)
    from .. import presence  # its readers load only for a build that warns
    presence.warn(prog, filename, source, None, args.btf)
    return 0
