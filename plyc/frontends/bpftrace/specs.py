"""bpftrace probe specs as plyc's providers spell them.

The providers (plyc/providers/) parse ply's spelling (`tracepoint:sched:x`,
`interval:1s`, `profile:99hz`); a bpftrace spec is rewritten into it here,
keeping its span, so a provider's error still points at what was written.
Probe types plyc has no provider for are refused by name."""
from __future__ import annotations

import re

from ...diag import error
from ...ir import nodes as ir
from . import ast as A

UNIT_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}

# bpftrace probe types with no plyc provider yet, and why.
NOT_YET = {
    "watchpoint": None, "asyncwatchpoint": None, "iter": None, "self": None,
}


def _period_ns(spec: A.ProbeSpec) -> tuple:
    """(unit, count) of interval/profile: `s:1`, `hz:99`, or `1s`/`1000` (ns)."""
    if len(spec.parts) == 2:
        unit, count = spec.parts
    else:
        m = re.fullmatch(r"(\d+)(ns|us|ms|s|m|h|d)?", spec.parts[0].replace("_", ""))
        if not m:
            raise error(f"'{spec.parts[0]}' is not a count with an optional unit (ns us ms s)", spec.span)
        unit, count = m.group(2) or "ns", m.group(1)
    if unit not in UNIT_NS and unit != "hz":
        raise error(f"unknown unit '{unit}' in {spec.provider}: use us, ms, s or hz", spec.span)
    if not count.replace("_", "").isdigit() or int(count.replace("_", "")) <= 0:
        raise error(f"'{count}' is not a positive count", spec.span)
    return unit, int(count.replace("_", ""))


def to_ir(spec: A.ProbeSpec) -> ir.Spec:
    """The spec in plyc's providers' spelling; PlycError for what has none."""
    p, parts, span = spec.provider, spec.parts, spec.span
    if p in NOT_YET:
        hint = NOT_YET[p]
        raise error(f"{p} probes are not supported by plyc yet", span, hint)
    if p in ("BEGIN", "END"):
        return ir.Spec(p, "", span=span)
    if p == "tracepoint":
        return ir.Spec("tracepoint", f"{parts[0]}:{parts[1]}", span=span)
    if p in ("kprobe", "kretprobe"):
        # kprobe:module:f is resolved in that module's symbols only
        return ir.Spec(p, ":".join(x for x in parts if x), span=span)
    if p in ("uprobe", "uretprobe"):
        if len(parts) == 3:
            raise error(f"{p}s with a language ({parts[1]}) are not supported by plyc yet", span)
        path = parts[0]
        # bpftrace names a library as "libc"; plyc's short name is "c".
        if "/" not in path and path.startswith("lib") and ".so" not in path:
            path = path[3:]
        return ir.Spec(p, f"{path}:{parts[1]}", span=span)
    if p in ("kfunc", "kretfunc", "rawtracepoint"):
        # [module:]name; a BPF program's functions (kfunc:bpf:ID:f) are not kernel ones
        if len(parts) == 3:
            raise error(f"{p} probes on BPF programs ({':'.join(parts)}) are not supported by plyc yet", span)
        return ir.Spec(p, ":".join(parts), span=span)
    if p == "usdt":
        return ir.Spec("usdt", ":".join(parts), span=span)
    if p in ("software", "hardware"):
        return ir.Spec(p, ":".join(x for x in parts if x), span=span)
    if p == "interval":
        unit, count = _period_ns(spec)
        if unit == "hz":
            if 10**9 % count:
                raise error(f"interval:hz:{count} is not a whole number of nanoseconds", span)
            return ir.Spec("interval", f"{10**9 // count}ns", span=span)
        return ir.Spec("interval", f"{count}{unit}", span=span)
    if p == "profile":
        unit, count = _period_ns(spec)
        if unit == "hz":
            return ir.Spec("profile", f"{count}hz", span=span)
        period = count * UNIT_NS[unit]
        if 10**9 % period:
            raise error(f"profile:{unit}:{count} is not a whole number of samples a second; "
                        "plyc's profile probes take a frequency (profile:hz:N)", span)
        return ir.Spec("profile", f"{10**9 // period}hz", span=span)
    raise AssertionError(p)
