"""An aggregation read in a probe (bpftrace's `@c > 5`, `(int64)@s`, a `for`
over `@c`) and a key-less one's delete: C calling plyc.bpf.h's PLYC_AGG_READ
functions, which combine the CPUs' values with bpf_map_lookup_percpu_elem
(Linux 5.19), and the tracer's table entry asking the kernel for that helper
before the load (runtime-c/load/needs.c)."""
from __future__ import annotations

from ..ir import nodes as ir
from ..span import script_line
from .cescape import c_string

# BPF_FUNC_map_lookup_percpu_elem's number, name, release.
HELPER = (195, "bpf_map_lookup_percpu_elem", "5.19")


def _ncpus(g) -> str:
    # the tracer's count of possible CPUs (resources.device_consts adds it)
    return f"plyc_params.dconst[{g.res.dconst(ir.DeviceConst(ir.NCPUS))}]"


def value(g, m, key: str, mapref: str = "") -> str:
    """A C expression for the aggregation m's value under the key at
    pointer `key`, over every CPU; mapref: the map's pointer where its
    name is not in scope (a for loop's callback gets it as an argument)."""
    assert not m.shared, m.name      # count/sum/min/max/avg are per-CPU (resources.storage)
    signed = int(bool(m.info.value_type and m.info.value_type.signed))
    kind = m.info.agg.name
    args = f"{mapref or '&' + m.cname}, {key}, {_ncpus(g)}"
    typ = "__s64" if signed else "__u64"      # as the front end typed the read
    if kind in ("count", "sum"):
        return g.cast(typ, f"plyc_agg_sum({args})")
    if kind in ("min", "max"):
        return g.cast(typ, f"plyc_agg_extreme({args}, {int(kind == 'min')}, {signed})")
    assert kind == "avg", kind
    return g.cast(typ, f"plyc_agg_avg({args}, {signed})")


def read(g, e: ir.MapRead, m) -> str:
    key = g.key(e.keys, m)
    return value(g, m, f"&{key}")


def zero(g, m) -> None:
    """delete() of a key-less aggregation: each CPU's slot back to zero."""
    g.line(f"plyc_agg_zero(&{m.cname}, {m.value_size}, {_ncpus(g)});")


def reads(maps: dict, n) -> bool:
    """Whether IR node n reads an aggregation across the CPUs (maps: name
    -> ir.Map)."""
    m = maps.get(getattr(n, "map", None))
    if m is None or not m.is_agg:
        return False
    return isinstance(n, (ir.MapRead, ir.ForMap)) or (isinstance(n, ir.MapDelete) and not m.key_types)


def needs(res) -> list:
    """The tracer's table entries: the helper each such read needs."""
    out = []
    maps = {m.name: m.info for m in res.maps}
    for p in res.probes:
        for n in ir.walk(p.probe.body):
            if reads(maps, n):
                what = f"deleting from the aggregation {n.map}" if isinstance(n, ir.MapDelete) else \
                    f"a for loop over the aggregation {n.map}" if isinstance(n, ir.ForMap) else \
                    f"reading the aggregation {n.map}"
                number, name, since = HELPER
                entry = dict(prog=p.prog, helper=number, helper_name=name, since=since,
                             line=script_line(n.span), what=c_string(what))
                if entry not in out:
                    out.append(entry)
    return out
