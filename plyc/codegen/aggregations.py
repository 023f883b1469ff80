"""The C of every aggregation's update (plyc/aggregations.py holds the
data: arguments, layout, kind): UPDATE maps an aggregation's name to the
C lines the probe runs on the value it looked up."""
from __future__ import annotations

from typing import Callable

from ..aggregations import TSERIES_AGGREGATORS, Aggregation, bt_hist_buckets
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
    k = m.info.params[0] if m.info.params else 0
    signed = "1" if m.info.value_type.signed else "0"
    bucket = f"plyc_bt_hist_bucket_k((__u64)({x}), {signed}, {k})"
    return [f"__u32 {v}_i = {bucket};",
            f"asm volatile(\"\" : \"+r\"({v}_i));",   # as _lquantize's
            f"if ({v}_i < {bt_hist_buckets(k)})",
            "\t" + _add(m, f"{v}->b[{v}_i]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


def _lquantize(v, x, m):
    lo, hi, step = m.info.params
    signed = "1" if m.info.value_type.signed else "0"
    return [f"__u32 {v}_i = plyc_lin_bucket({x}, {signed}, {c_int(lo)}, {c_int(step)}, "
            f"{(hi - lo) // step});",
            # clang can prove the bound and drop the check; the verifier
            # can't follow the division and needs it.
            f"asm volatile(\"\" : \"+r\"({v}_i));",
            f"if ({v}_i < {m.nbuckets})",
            "\t" + _add(m, f"{v}->b[{v}_i]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


def _tseries(v, x, m):
    """bpftrace's tseries(): the slot of the interval now falls in (TAI, as
    bpftrace's sw_tai: the boot clock plus the tracer's offset), restarted
    when it held an older interval; the last value keeps the time it was
    stored (meta), for the CPUs' values to be merged by it."""
    interval, n, agg = m.info.params
    how = TSERIES_AGGREGATORS[agg]
    signed = m.info.value_type.signed
    s = f"{v}_s"
    out = [f"__u64 {v}_now = bpf_ktime_get_boot_ns() + plyc_params.tai_offset;",
           f"__u64 {v}_ep = {v}_now / (__u64){c_int(interval)};",
           f"__u32 {v}_i = {v}_ep % {n};",
           f"asm volatile(\"\" : \"+r\"({v}_i));",     # as _lquantize's
           f"if ({v}_i < {n}) {{",
           f"\tstruct plyc_ts_slot *{s} = &{v}->s[{v}_i];"]
    if how:
        out += [f"\tif ({s}->epoch != {v}_ep) {{", f"\t\t{s}->value = 0;", f"\t\t{s}->meta = 0;", "\t}"]
    if how == "":
        out += [f"\t{s}->value = (__s64){x};", f"\t{s}->meta = {v}_now;"]
    elif how in ("sum", "avg"):
        out += [f"\t{s}->value += (__s64){x};"] + ([f"\t{s}->meta += 1;"] if how == "avg" else [])
    else:
        ctype = "__s64" if signed else "__u64"
        cmp = "<" if how == "min" else ">"
        out += [f"\tif (!{s}->meta || ({ctype}){x} {cmp} ({ctype}){s}->value) {{",
                f"\t\t{s}->value = (__s64){x};", f"\t\t{s}->meta = 1;", "\t}"]
    return out + [f"\t{s}->epoch = {v}_ep;", "}"]


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
    "tseries": _tseries,
}


def update(agg: Aggregation, v: str, x, m) -> list:
    return UPDATE[agg.name](v, x, m)
