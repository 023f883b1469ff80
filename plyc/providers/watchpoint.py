"""watchpoint:ADDRESS:LENGTH:MODE — a hardware breakpoint: the CPU's debug
registers, through perf's PERF_TYPE_BREAKPOINT events, run the probe at
each access (r: read, w: write, x: execution) of LENGTH bytes at ADDRESS.
A kernel address is watched on every CPU; a user address in the process
of -p PID or -c CMD (each of its threads and those they start), else in
whichever process touches it on any CPU. What the CPU takes is known only
on the device (runtime-c/providers/watchpoint.c says it by name); the
modes its architecture has are checked here (arch.py, WATCH_MODES).

    watchpoint:0xffffffff82a05e40:8:w { @[kstack] = count(); }
"""
from __future__ import annotations

import re

from .. import arch as A
from .base import Fields, Provider, Target, c_str, spec_error

LENGTHS = (1, 2, 4, 8)
USAGE = "watchpoint:ADDRESS:LENGTH:MODE, e.g. watchpoint:0x10000000:8:w"
ADDRESS_MAX = (1 << 64) - 1


def fields(spec) -> Fields:
    """`ADDRESS:LENGTH:MODE` (ply's text; bpftrace's parts come split)."""
    parts = spec.arg.split(":")
    if len(parts) != 3:
        raise spec_error(spec, "a watchpoint probe is written watchpoint:ADDRESS:LENGTH:MODE", f"e.g. {USAGE}")
    return Fields(function=parts[0], count=parts[1], mode=parts[2])


def spell(f: Fields) -> str:
    return f"{f.function}:{f.count}:{f.mode}"


def _number(text: str):
    """An unsigned integer as bpftrace writes one in a probe: decimal or 0x hex."""
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
        return int(text, 16)
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    return None


def make(spec, f: Fields) -> Target:
    address = _number(f.function)
    if address is None:
        if "+" in f.function:
            raise spec_error(spec, f"'{f.function}' is not an address",
                             "the watchpoint:FUNCTION+argN form (arm one when a function is called) is "
                             "gone since bpftrace 0.25, as asyncwatchpoint; 0.27 takes an address only")
        raise spec_error(spec, f"'{f.function}' is not an address", f"a number, e.g. {USAGE}")
    if address == 0:
        raise spec_error(spec, "watchpoint must be attached to a non-zero address")
    if address > ADDRESS_MAX:
        raise spec_error(spec, f"watchpoint address {f.function} is more than 64 bits")
    length = _number(f.count)
    if length not in LENGTHS:
        raise spec_error(spec, "watchpoint length must be one of (1,2,4,8)", f"e.g. {USAGE}")
    if not f.mode or any(c not in "rwx" for c in f.mode):
        raise spec_error(spec, "watchpoint mode must be combination of (r,w,x)",
                         "r: read, w: write, x: execute; e.g. w or rw")
    if len(set(f.mode)) != len(f.mode):
        raise spec_error(spec, "watchpoint modes may not be duplicated")
    t = Target(PROVIDER, spec, f"0x{address:x}:{length}:{''.join(sorted(f.mode))}")
    t.extra.update(address=address, length=length, mode="".join(sorted(f.mode)))
    return t


def for_arch(t: Target, arch: str) -> None:
    modes = A.get(arch).watch_modes
    if not modes:
        raise spec_error(t.spec, f"watchpoints not supported on {arch}",
                         "its kernel has no hardware breakpoints for perf (bpftrace 0.27 takes them on "
                         "x86_64, ARM and POWER)")
    if t.extra["mode"] not in modes:
        raise spec_error(t.spec, f"invalid watchpoint mode: {t.extra['mode']}",
                         f"supported modes on {arch}: {', '.join(modes)}")


def c_data(t: Target, p):
    mode = t.extra["mode"]
    bits = " | ".join(f"HW_BREAKPOINT_{c.upper()}" for c in mode)
    return "plyc_watchpoint_data", [
        ("address", f"{t.extra['address']:#x}ULL"), ("length", str(t.extra["length"])),
        ("type", bits), ("mode", c_str(mode))]


PROVIDER = Provider(name="watchpoint", aliases=("w",), fields=fields, make=make, spell=spell,
                    section=lambda t: "perf_event", ctx_decl="void *ctx", for_arch=for_arch,
                    c_provider="plyc_provider_watchpoint", c_data=c_data, example="0x10000000:8:w",
                    doc="hardware breakpoints: each read, write or execution of an address")
