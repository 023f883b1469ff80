"""software:EVENT[:COUNT] / hardware:EVENT[:COUNT] — a perf event counted on
every CPU, the probe run every COUNT events (bpftrace's names, aliases and
default counts). The program's context is profile's: pid, comm, stacks.
Whether the device has the event (a hardware PMU: most VMs have none) is
known only there: the tracer opens it before the load and says so.

    software:page-faults:1 /pid == $target/ { @ = count(); }
"""
from __future__ import annotations

import re

from .base import Fields, Provider, Target, c_str, spec_error

# name: (alias, perf config, default count)
SOFTWARE_EVENTS = {
    "cpu-clock": ("cpu", "PERF_COUNT_SW_CPU_CLOCK", 1000000),
    "task-clock": ("", "PERF_COUNT_SW_TASK_CLOCK", 1),
    "page-faults": ("faults", "PERF_COUNT_SW_PAGE_FAULTS", 100),
    "context-switches": ("cs", "PERF_COUNT_SW_CONTEXT_SWITCHES", 1000),
    "cpu-migrations": ("", "PERF_COUNT_SW_CPU_MIGRATIONS", 1),
    "minor-faults": ("", "PERF_COUNT_SW_PAGE_FAULTS_MIN", 100),
    "major-faults": ("", "PERF_COUNT_SW_PAGE_FAULTS_MAJ", 1),
    "alignment-faults": ("", "PERF_COUNT_SW_ALIGNMENT_FAULTS", 1),
    "emulation-faults": ("", "PERF_COUNT_SW_EMULATION_FAULTS", 1),
    "dummy": ("", "PERF_COUNT_SW_DUMMY", 1),
    "bpf-output": ("", "PERF_COUNT_SW_BPF_OUTPUT", 1),
}
HARDWARE_EVENTS = {
    "cpu-cycles": ("cycles", "PERF_COUNT_HW_CPU_CYCLES", 1000000),
    "instructions": ("", "PERF_COUNT_HW_INSTRUCTIONS", 1000000),
    "cache-references": ("", "PERF_COUNT_HW_CACHE_REFERENCES", 1000000),
    "cache-misses": ("", "PERF_COUNT_HW_CACHE_MISSES", 1000000),
    "branch-instructions": ("branches", "PERF_COUNT_HW_BRANCH_INSTRUCTIONS", 100000),
    "branch-misses": ("", "PERF_COUNT_HW_BRANCH_MISSES", 100000),
    "bus-cycles": ("", "PERF_COUNT_HW_BUS_CYCLES", 100000),
    "frontend-stalls": ("", "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND", 1000000),
    "backend-stalls": ("", "PERF_COUNT_HW_STALLED_CYCLES_BACKEND", 1000000),
    "ref-cycles": ("", "PERF_COUNT_HW_REF_CPU_CYCLES", 1000000),
}
# The kernel takes a sample period of up to 2^63 - 1.
PERIOD_MAX = (1 << 63) - 1


def _events(provider: Provider) -> dict:
    return SOFTWARE_EVENTS if provider is SOFTWARE else HARDWARE_EVENTS


def fields(spec) -> Fields:
    """`EVENT[:COUNT]`."""
    name, sep, count = spec.arg.partition(":")
    return Fields(function=name, count=count if sep else None)


def spell(f: Fields) -> str:
    return f.function + (f":{f.count}" if f.count is not None else "")


def _make(hardware: bool):
    def make(spec, f: Fields) -> Target:
        prov = HARDWARE if hardware else SOFTWARE
        events = _events(prov)
        name, sep = f.function, f.count is not None
        count = f.count or ""
        canon = next((n for n, (alias, _, _) in events.items() if name in (n, alias)), None)
        if canon is None:
            known = ", ".join(f"{n} ({a})" if a else n for n, (a, _, _) in events.items())
            raise spec_error(spec, f"unknown {prov.name} event '{name}'", f"{prov.name} events are: {known}")
        count = count.replace("_", "")
        if sep and not re.fullmatch(r"\d+", count):
            raise spec_error(spec, f"'{count}' is not a count of events",
                             f"e.g. {prov.name}:{canon}:{events[canon][2]}: the probe runs every COUNT events")
        period = int(count) if sep else events[canon][2]
        if not 1 <= period <= PERIOD_MAX:
            raise spec_error(spec, f"a count of {period} events is out of range (1 to {PERIOD_MAX})")
        t = Target(prov, spec, canon)
        t.extra["period"] = period
        return t
    return make


def c_data(t: Target, p):
    hw = t.provider is HARDWARE
    return "plyc_perfevent_data", [
        ("event", c_str(t.target)), ("type", "PERF_TYPE_HARDWARE" if hw else "PERF_TYPE_SOFTWARE"),
        ("config", _events(t.provider)[t.target][1]), ("period", f"{t.extra['period']}ULL")]


SOFTWARE = Provider(name="software", aliases=("s",), fields=fields, make=_make(False), spell=spell, section=lambda t: "perf_event", pid_filtered=True,
                    ctx_decl="void *ctx", c_provider="plyc_provider_software", c_data=c_data,
                    example="page-faults:100",
                    doc="kernel software events (page faults, context switches, ...) on every CPU")
HARDWARE = Provider(name="hardware", aliases=("h",), fields=fields, make=_make(True), spell=spell, section=lambda t: "perf_event", pid_filtered=True,
                    ctx_decl="void *ctx", c_provider="plyc_provider_hardware", c_data=c_data,
                    example="cache-misses:1000000",
                    doc="hardware counters (cycles, cache misses, ...) on every CPU")
