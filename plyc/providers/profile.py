"""profile:[C:]Nhz — a timer on every CPU (or CPU C), N times a second."""
from __future__ import annotations

import re

from .base import Fields, Provider, Target, spec_error

# CPU numbers a profile probe may name (Linux's NR_CPUS is at most 8192).
MAX_CPU = 8191


def fields(spec) -> Fields:
    """`Nhz` or `C:Nhz`."""
    m = re.fullmatch(r"(?:(\d+):)?(\d+)(?:hz)?", spec.arg)
    if not m:
        raise spec_error(spec, f"profile '{spec.arg}' is not Nhz or C:Nhz", "e.g. profile:99hz, profile:0:100hz")
    return Fields(cpu=m.group(1) or "", count=m.group(2))


def make(spec, f: Fields) -> Target:
    cpu = int(f.cpu) if f.cpu else -1
    if cpu > MAX_CPU:
        raise spec_error(spec, f"CPU {cpu} is out of range (0 to {MAX_CPU})")
    freq = int(f.count)
    if not 1 <= freq <= 1000:
        raise spec_error(spec, f"profile frequency {freq} is out of range (1 to 1000 hz)")
    return Target(PROVIDER, spec, spec.arg, freq=freq, cpu=cpu)


def c_data(t: Target, p):
    return "plyc_profile_data", [("freq", str(t.freq)), ("cpu", str(t.cpu))]


PROVIDER = Provider(
    name="profile", pid_filtered=True,
    aliases=(),
    fields=fields,
    make=make,
    spell=lambda f: f"{f.cpu + ':' if f.cpu else ''}{f.count}hz",
    section=lambda t: "perf_event",
    ctx_decl="void *ctx",
    c_provider="plyc_provider_profile",
    example="99hz",
    c_data=c_data,
    doc="a timer on every CPU",
)
