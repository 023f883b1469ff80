"""`plyc sysroot`: a target's libraries, prepared for cross builds."""
from __future__ import annotations

from ..toolchain import LIBCS
from .common import TARGETS


def add(sub):
    p = sub.add_parser("sysroot", help="prepare a target's libbpf, libelf and zlib: a Debian sysroot "
                       "(glibc), or built from Debian's sources with zig (musl)")
    p.add_argument("--target", required=True, choices=[t for t in TARGETS])
    p.add_argument("--libc", choices=LIBCS, default="glibc", help="for which C library (default: glibc)")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.libc == "musl":
        from .. import musl
        print(musl.prepare(args.target, args.verbose))
        return 0
    from .. import sysroot
    print(sysroot.prepare(args.target, args.verbose))
    return 0
