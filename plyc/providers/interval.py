"""interval:N[unit] — a timer on one CPU (cpu-clock perf event on CPU 0)."""
from __future__ import annotations

import re

from .base import Fields, Provider, Target, spec_error

UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000}
# perf_event_open refuses a sample period with the top bit set: about 292 years.
MAX_PERIOD_NS = (1 << 63) - 1


def fields(spec) -> Fields:
    """`N[unit]` or `unit:N`."""
    arg = spec.arg.replace("_", "")
    m = re.fullmatch(r"(\d+)(ns|us|ms|s|m)?", arg) or re.fullmatch(r"(?P<u>ns|us|ms|s|m):(\d+)", arg)
    if not m:
        raise spec_error(spec, f"interval '{spec.arg}' is not a number with an optional unit",
                         "e.g. interval:1s, interval:500ms; units: ns us ms s m (default s)")
    if m.re.pattern.startswith("(?P<u>"):
        return Fields(count=m.group(2), unit=m.group(1))
    return Fields(count=m.group(1), unit=m.group(2) or "")


def parse_period(spec, f: Fields) -> int:
    period = int(f.count) * UNITS[f.unit or "s"]
    if period <= 0:
        raise spec_error(spec, "an interval must be longer than zero")
    if period > MAX_PERIOD_NS:
        raise spec_error(spec, f"interval '{spec.arg}' is too long: at most {MAX_PERIOD_NS // UNITS['s']}s")
    return period


def make(spec, f: Fields) -> Target:
    return Target(PROVIDER, spec, spec.arg, period_ns=parse_period(spec, f), cpu=0)


def c_data(t: Target, p):
    return "plyc_interval_data", [("period_ns", f"{t.period_ns}ULL"), ("cpu", str(t.cpu))]


PROVIDER = Provider(
    name="interval",
    aliases=("i",),
    fields=fields,
    make=make,
    spell=lambda f: f"{f.count}{f.unit}",
    section=lambda t: "perf_event",
    ctx_decl="void *ctx",
    c_provider="plyc_provider_interval",
    example="1s",
    c_data=c_data,
    has_stack=False,
    doc="a timer on one CPU",
)
