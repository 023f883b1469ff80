"""The C of every aggregation's update (plyc/aggregations.py holds the
data: arguments, layout, kind): UPDATE maps an aggregation's name to the
C lines the probe runs on the value it looked up."""
from __future__ import annotations

from typing import Callable

from ..aggregations import BT_HIST_BUCKETS, Aggregation
from .cescape import c_int


def _add(m, lvalue: str, amount: str) -> str:
    """lvalue += amount: atomically where all CPUs share the value
    (resources.storage()); the result unused, so clang emits the add that
    every kernel takes (BPF_XADD), not a fetch (5.12)."""
    if m.shared:
        return f"__sync_fetch_and_add(&{lvalue}, {amount});"
    return f"{lvalue} += {amount};"


def _count(v, x, m):
    return [f"*{v} += 1;"]


def _sum(v, x, m):
    return [f"*{v} += {x};"]


def _minmax(cmp: str) -> Callable:
    def update(v, x, m):
        return [f"if (!{v}->set || (__s64){x} {cmp} {v}->value) {{",
                f"\t{v}->value = {x};",
                f"\t{v}->set = 1;",
                "}"]
    return update


def _avg(v, x, m):
    return [f"{v}->sum += {x};", f"{v}->count += 1;"]


def _quantize(v, x, m):
    signed = "1" if m.info.value_type.signed else "0"
    return [_add(m, f"{v}->b[plyc_log2_bucket({x}, {signed}) & 63]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


def _bcc_log2(v, x, m):
    return [_add(m, f"{v}->b[plyc_log2_hist_bucket({x}) & 63]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


def _bt_log2(v, x, m):
    return [f"__u32 {v}_i = plyc_bt_hist_bucket((__s64)({x}));",
            f"asm volatile(\"\" : \"+r\"({v}_i));",   # as _lquantize's
            f"if ({v}_i < {BT_HIST_BUCKETS})",
            "\t" + _add(m, f"{v}->b[{v}_i]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


def _lquantize(v, x, m):
    lo, hi, step = m.info.params
    return [f"__u32 {v}_i = plyc_lin_bucket({x}, {c_int(lo)}, {c_int(hi)}, {c_int(step)}, "
            f"{m.nbuckets});",
            # clang can prove the bound and drop the check; the verifier
            # can't follow the division and needs it.
            f"asm volatile(\"\" : \"+r\"({v}_i));",
            f"if ({v}_i < {m.nbuckets})",
            "\t" + _add(m, f"{v}->b[{v}_i]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


# (value pointer, x, MapRes) -> C lines run on the looked-up value
UPDATE = {
    "count": _count,
    "sum": _sum,
    "min": _minmax("<"),
    "max": _minmax(">"),
    "avg": _avg,
    "quantize": _quantize,
    "lquantize": _lquantize,
    "log2": _bcc_log2,
    "stats": _avg,
    "hist": _bt_log2,
}


def update(agg: Aggregation, v: str, x, m) -> list:
    return UPDATE[agg.name](v, x, m)
