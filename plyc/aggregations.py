"""Every aggregation (`@map[...] = f(x)`) in one table: its arguments and
their typing, the layout of its BPF value, the update the probe runs, and
the kind (runtime-c/plyc_rt.h's enum plyc_agg) by which the tracer's
runtime merges, prints and exports it (runtime-c/maps/aggregations.c).
docs/design.md says how to add one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import types as T

# Above this many lquantize buckets a map value grows past what a per-CPU
# map allocates comfortably; the script should use a larger step.
LQUANTIZE_MAX_BUCKETS = 1000
# bpftrace's hist(): below 0, 0, then [2^k, 2^(k+1)) up to 2^63 (PLYC_HIST_BUCKETS)
BT_HIST_BUCKETS = 65


@dataclass(frozen=True)
class Layout:
    ctype: str          # C type of one CPU's value
    size: int           # its bytes
    nbuckets: int = 0   # histograms: u64 b[nbuckets] then u64 s (the sum), as struct <map>_hist


@dataclass(frozen=True)
class Aggregation:
    name: str
    takes_x: bool       # the first argument is the integer aggregated
    arity: int
    kind: str           # PLYC_A_*: how the runtime merges, prints and exports it
    # (map cname, ir.Map) -> the value's layout
    layout: Callable[[str, object], Layout]
    # (value pointer, x, MapRes) -> C lines run on the looked-up value
    update: Callable[[str, Optional[str], object], list]
    # (typer, ir.Map, call as written) -> the arguments past x, checked
    # constants (ir.Map.params); the typer as builtins.py describes it
    params: Optional[Callable] = None
    # ply scripts may name it; the others are the core's, for front ends
    # that lower to it themselves (AGGREGATIONS[name])
    public: bool = True

    @property
    def example_args(self) -> str:
        return "x" if self.takes_x else ""


def _u64(cname, info) -> Layout:
    return Layout("__u64", 8)


def _buckets(nbuckets: int) -> Callable:
    return lambda cname, info: Layout(f"struct {cname}_hist", 8 * nbuckets + 8, nbuckets)


def _lq_layout(cname, info) -> Layout:
    lo, hi, step = info.params
    return _buckets(-(-(hi - lo) // step) + 2)(cname, info)   # + below min, at or above max


def _minmax(cmp: str) -> Callable:
    def update(v, x, m):
        return [f"if (!{v}->set || (__s64){x} {cmp} {v}->value) {{",
                f"\t{v}->value = {x};",
                f"\t{v}->set = 1;",
                "}"]
    return update


def _add(m, lvalue: str, amount: str) -> str:
    """lvalue += amount: atomically where all CPUs share the value
    (resources.storage()); the result unused, so clang emits the add that
    every kernel takes (BPF_XADD), not a fetch (5.12)."""
    if m.shared:
        return f"__sync_fetch_and_add(&{lvalue}, {amount});"
    return f"{lvalue} += {amount};"


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
    from .codegen.cgen import c_int   # the code generator imports this table
    lo, hi, step = m.info.params
    return [f"__u32 {v}_i = plyc_lin_bucket({x}, {c_int(lo)}, {c_int(hi)}, {c_int(step)}, "
            f"{m.nbuckets});",
            # clang can prove the bound and drop the check; the verifier
            # can't follow the division and needs it.
            f"asm volatile(\"\" : \"+r\"({v}_i));",
            f"if ({v}_i < {m.nbuckets})",
            "\t" + _add(m, f"{v}->b[{v}_i]", "1"),
            _add(m, f"{v}->s", f"(__u64)({x})")]


def _lq_params(chk, info, call):
    lo, hi, step = (chk.const_int(a, "lquantize()'s min, max and step must be constant integers")
                    for a in call.args[1:])
    if step <= 0 or hi <= lo:
        chk.err("lquantize(x, min, max, step) needs min < max and step > 0", call.span)
    if (hi - lo) // step > LQUANTIZE_MAX_BUCKETS:
        chk.err(f"lquantize has more than {LQUANTIZE_MAX_BUCKETS} buckets; use a larger step", call.span)
    if info.params and info.params != (lo, hi, step):
        chk.err(f"{info.name} uses other lquantize bounds elsewhere", call.span)
    return (lo, hi, step)


TABLE = (
    Aggregation("count", False, 0, "PLYC_A_COUNT", _u64, lambda v, x, m: [f"*{v} += 1;"]),
    Aggregation("sum", True, 1, "PLYC_A_SUM",
                lambda cname, info: Layout("__s64" if (info.value_type or T.S64).signed else "__u64", 8),
                lambda v, x, m: [f"*{v} += {x};"]),
    Aggregation("min", True, 1, "PLYC_A_MIN", lambda cname, info: Layout("struct plyc_minmax", 16),
                _minmax("<")),
    Aggregation("max", True, 1, "PLYC_A_MAX", lambda cname, info: Layout("struct plyc_minmax", 16),
                _minmax(">")),
    Aggregation("avg", True, 1, "PLYC_A_AVG", lambda cname, info: Layout("struct plyc_avg", 16),
                lambda v, x, m: [f"{v}->sum += {x};", f"{v}->count += 1;"]),
    Aggregation("quantize", True, 1, "PLYC_A_QUANTIZE", _buckets(64), _quantize),
    Aggregation("lquantize", True, 4, "PLYC_A_LQUANTIZE", _lq_layout, _lquantize, _lq_params),
    # The rest are other front ends' (ply scripts don't name them):
    # a log2 histogram of non-negative values in bcc's layout (argdist):
    # [0] is 0, [i] is [2^(i-1), 2^i)
    Aggregation("log2", True, 1, "PLYC_A_LOG2", _buckets(64), _bcc_log2, public=False),
    # bpftrace's stats(x) (count, average, total) and hist(x), a log2
    # histogram in its buckets; its lhist() is lquantize
    Aggregation("stats", True, 1, "PLYC_A_STATS", lambda cname, info: Layout("struct plyc_avg", 16),
                lambda v, x, m: [f"{v}->sum += {x};", f"{v}->count += 1;"], public=False),
    Aggregation("hist", True, 1, "PLYC_A_HIST", _buckets(BT_HIST_BUCKETS), _bt_log2, public=False),
)

AGGREGATIONS = {a.name: a for a in TABLE}


def get(name: str) -> Optional[Aggregation]:
    """The aggregation a ply script's `name(...)` means."""
    agg = AGGREGATIONS.get(name)
    return agg if agg is not None and agg.public else None


def public_names() -> list:
    """ply's names."""
    return [a.name for a in TABLE if a.public]
