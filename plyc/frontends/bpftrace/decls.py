"""Current bpftrace's map declarations, `let @m = lruhash(N);`: the BPF map
type and size of a map, carried to the IR's Map (lru, max_entries) for
plyc/codegen/resources.py. hash and lruhash hold values, percpuhash and
percpulruhash aggregations, as bpftrace 0.27 checks them."""
from __future__ import annotations

from ...diag import Collector
from ...ir import nodes as ir
from . import ast as A

# kind -> (LRU, holds an aggregation)
KINDS = {"hash": (False, False), "lruhash": (True, False),
         "percpuhash": (False, True), "percpulruhash": (True, True)}
MAX_ENTRIES = (1 << 32) - 1


def check(decls: list, diag: Collector):
    """The declarations' own errors (bpftrace's words where it has them)."""
    seen = set()
    for d in decls:
        if d.kind not in KINDS:
            diag.error(f"invalid bpf map type: {d.kind}", d.span,
                       "valid map types: " + ", ".join(KINDS))
        if not 1 <= d.entries.value <= MAX_ENTRIES:
            diag.error(f"a map's size must be from 1 to {MAX_ENTRIES}", d.entries.span)
        if d.name in seen:
            diag.error(f"{d.name} is declared twice", d.span)
        seen.add(d.name)


def apply(decls: list, maps: dict, diag: Collector):
    """Each declared map its type and size; a map the probes never use is
    left out (bpftrace warns 'Unused map' and makes it anyway)."""
    for d in decls:
        info: ir.Map = maps.get(d.name)
        if info is None or d.kind not in KINDS:
            continue
        lru, agg = KINDS[d.kind]
        if agg != info.is_agg:
            other = ("percpu" + ("lru" if lru else "") + "hash") if info.is_agg else \
                ("lruhash" if lru else "hash")
            diag.error(f"incompatible map types: {d.name} is declared {d.kind}, its values need {other}",
                       info.span, "percpuhash and percpulruhash hold aggregations (count(), sum(), hist(), ...); "
                       "hash and lruhash other values")
            continue
        info.lru = lru
        info.max_entries = d.entries.value
