"""`plyc doctor`: what a build for the target uses, what it lacks."""
from __future__ import annotations

from .common import TARGETS, add_libc_arg, default_target


def add(sub):
    p = sub.add_parser("doctor", help="what a build for the target uses, and how to get what it lacks")
    p.add_argument("--target", default=default_target(), choices=TARGETS)
    p.add_argument("--sysroot", metavar="DIR", help="check the libraries there, as plyc build --sysroot")
    add_libc_arg(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import doctor       # here: it loads musl's and the sysroots' modules
    return doctor.main(args)
