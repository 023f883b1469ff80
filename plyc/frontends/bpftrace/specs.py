"""bpftrace probe specs as plyc's providers take them: each spec's parts as
its provider's Fields (plyc/providers/base.py), the spec's span kept so a
provider's error points at what was written; the core names the probe as
the provider spells it. Probe types plyc has no provider for are refused
by name."""
from __future__ import annotations

import re

from ... import providers
from ...diag import error
from ...ir import nodes as ir
from ...providers import Fields
from . import ast as A

UNIT_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}
# Suffixes of a one-part period (`interval:1m`) that are no unit of their own.
LONG_NS = {"m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9}


def _count(text: str) -> str:
    """A count as bpftrace reads it in a probe: digits, `_` separators, or
    its integer scientific notation (`hardware:cache-misses:1e6`)."""
    t = text.replace("_", "")
    m = re.fullmatch(r"(\d+)e(\d{1,2})", t)
    return str(int(m.group(1)) * 10 ** int(m.group(2))) if m else t

# bpftrace probe types with no plyc provider yet, and why.
NOT_YET = {
    # 0.24's watchpoints armed at run time; 0.25 dropped them (0.27: "Invalid probe type")
    "asyncwatchpoint": "bpftrace dropped asyncwatchpoint probes in 0.25 (0.27: Invalid probe type: "
                       "asyncwatchpoint); watch a fixed address with watchpoint:ADDRESS:LENGTH:MODE",
    # current bpftrace runs these only in a mode of its own (--test, --bench)
    "test": "bpftrace runs test probes under `bpftrace --test` only; a plyc tracer has no test mode",
    "bench": "bpftrace runs bench probes under `bpftrace --bench` only; a plyc tracer has no bench mode",
}


def _period_ns(spec: A.ProbeSpec) -> tuple:
    """(unit, count) of interval/profile: `s:1`, `hz:99`, or `1s`/`1000` (ns)."""
    if len(spec.parts) == 2:
        unit, count = spec.parts[0], _count(spec.parts[1])
    else:
        m = re.fullmatch(r"(\d+(?:e\d{1,2})?)(ns|us|ms|s|m|h|d)?", spec.parts[0].replace("_", ""))
        if not m:
            raise error(f"'{spec.parts[0]}' is not a count with an optional unit (ns us ms s m h d)",
                        spec.span)
        unit, count = m.group(2) or "ns", _count(m.group(1))
        if unit in LONG_NS:
            unit, count = "ns", str(int(count) * LONG_NS[unit])
    if unit not in UNIT_NS and unit != "hz":
        raise error(f"unknown unit '{unit}' in {spec.provider}: use us, ms, s or hz", spec.span)
    if not count.replace("_", "").isdigit() or int(count.replace("_", "")) <= 0:
        raise error(f"'{count}' is not a positive count", spec.span)
    return unit, int(count.replace("_", ""))


def fields(spec: A.ProbeSpec) -> Fields:
    """The spec's parts for its provider; PlycError for what has none."""
    p, parts, span = spec.provider, spec.parts, spec.span
    if p in NOT_YET:
        hint = NOT_YET[p]
        raise error(f"{p} probes are not supported by plyc yet", span, hint)
    if p in ("BEGIN", "END"):
        return Fields()
    if p == "self":
        return Fields(group=parts[0], function=parts[1])
    if p == "iter":
        return Fields(function=parts[0], extra=":".join(parts[1:]))
    if p == "tracepoint":
        return Fields(group=parts[0], function=parts[1])
    if p in ("kprobe", "kretprobe"):
        # kprobe:module:f is resolved in that module's symbols only
        given = [x for x in parts if x]
        function, plus, offset = (given[-1] if given else "").partition("+")
        return Fields(module=given[0] if len(given) == 2 else "", function=function,
                      offset=offset if plus else None)
    if p in ("uprobe", "uretprobe"):
        if len(parts) == 3:
            raise error(f"{p}s with a language ({parts[1]}) are not supported by plyc yet", span)
        path = parts[0]
        # bpftrace names a library as "libc"; plyc's short name is "c".
        if "/" not in path and path.startswith("lib") and ".so" not in path:
            path = path[3:]
        function, plus, offset = parts[1].partition("+")
        return Fields(binary=path, function=function, offset=offset if plus else None)
    if p in ("kfunc", "kretfunc", "rawtracepoint"):
        # [module:]name; a BPF program's functions (kfunc:bpf:ID:f) are not kernel ones
        if len(parts) == 3:
            raise error(f"{p} probes on BPF programs ({':'.join(parts)}) are not supported by plyc yet", span)
        return Fields(module=parts[0] if len(parts) == 2 else "", function=parts[-1])
    if p == "usdt":
        return Fields(binary=parts[0], group=parts[1] if len(parts) == 3 else None, function=parts[-1])
    if p == "watchpoint":
        return Fields(function=parts[0], count=parts[1], mode=parts[2])
    if p in ("software", "hardware"):
        given = [x for x in parts if x]
        return Fields(function=given[0] if given else "", count=_count(":".join(given[1:])) or None)
    if p == "interval":
        unit, count = _period_ns(spec)
        if unit == "hz":
            if 10**9 % count:
                raise error(f"interval:hz:{count} is not a whole number of nanoseconds", span)
            return Fields(count=str(10**9 // count), unit="ns")
        return Fields(count=str(count), unit=unit)
    if p == "profile":
        unit, count = _period_ns(spec)
        if unit == "hz":
            return Fields(count=str(count))
        period = count * UNIT_NS[unit]
        if 10**9 % period:
            raise error(f"profile:{unit}:{count} is not a whole number of samples a second; "
                        "plyc's profile probes take a frequency (profile:hz:N)", span)
        return Fields(count=str(10**9 // period))
    raise AssertionError(p)


def probe_name(written: A.ProbeSpec, target) -> str:
    """An exact probe's name as bpftrace 0.27 prints `probe`: the spec as
    written, but kfunc/kretfunc and rawtracepoint as 0.27 names them,
    with their module (`fentry:vmlinux:vfs_read`, as in their wildcards)."""
    provider = target.provider.name
    if provider in ("kfunc", "kretfunc"):
        module = target.extra.get("module") or "vmlinux"
        kind = "fentry" if provider == "kfunc" else "fexit"
        return f"{kind}:{module}:{target.target}"
    if provider == "rawtracepoint":
        module = written.parts[0] if len(written.parts) == 2 and written.parts[0] else "vmlinux"
        return f"rawtracepoint:{module}:{written.parts[-1]}"
    return str(written)


def to_ir(spec: A.ProbeSpec) -> tuple:
    """(the core's spec, named as its provider spells it; its Fields)."""
    f = fields(spec)
    prov = providers.lookup(spec.provider)
    return ir.Spec(spec.provider, prov.spell(f), span=spec.span), f
