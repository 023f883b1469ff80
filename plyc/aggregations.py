"""Every aggregation (`@map[...] = f(x)`) in one table: its arguments and
their typing, the layout of its BPF value, and the kind (runtime-c/plyc_rt.h's
enum plyc_agg) by which the tracer's runtime merges, prints and exports it
(runtime-c/maps/aggregations.c). The update the probe runs is the code
generator's (plyc/codegen/aggregations.py). docs/design.md says how to add
one. Entries are named for what they are; each front end names those its
language has in a table of its own (its lower.py), and may word their
errors as its tool does (Sema.AGG_WORDS, by the keys below)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import types as T

# Above this many lquantize buckets a map value grows past what a per-CPU
# map allocates comfortably; the script should use a larger step.
LQUANTIZE_MAX_BUCKETS = 1000
# hist(x): below 0, 0, then [2^k, 2^(k+1)) up to 2^64 (PLYC_HIST_BUCKETS;
# the last, [2^63, 2^64), for unsigned values). hist(x, k): each power of
# two in 2^k buckets (0 <= k <= 5): below 0, then (65 - k) * 2^k buckets,
# the first 2^(k+1) of them one value each (k = 0: the 66 above). The
# tracer reads k back from the count (runtime-c/output/btrows.c).
BT_HIST_MAX_K = 5


def bt_hist_buckets(k: int) -> int:
    return (65 - k) * (1 << k) + 1


BT_HIST_BUCKETS = bt_hist_buckets(0)
# tseries(): its intervals are slots of one per-CPU value (24 bytes each),
# which the kernel caps at 32 KiB per CPU (PCPU_MIN_UNIT_SIZE)
TSERIES_MAX_INTERVALS = 1000
# tseries()'s aggregators, as PLYC_TS_* (plyc_rt.h) numbers them: "" keeps
# the last value of each interval
TSERIES_AGGREGATORS = ("", "avg", "max", "min", "sum")


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
    # (typer, ir.Map, call as written) -> the arguments past x, checked
    # constants (ir.Map.params); the typer as builtins.py describes it
    params: Optional[Callable] = None

    @property
    def example_args(self) -> str:
        return "x" if self.takes_x else ""


def _u64(cname, info) -> Layout:
    return Layout("__u64", 8)


def _buckets(nbuckets: int) -> Callable:
    return lambda cname, info: Layout(f"struct {cname}_hist", 8 * nbuckets + 8, nbuckets)


def lq_top(params) -> int:
    """The lower bound of lquantize's last bucket: max where step divides
    max - min, else the last multiple of step above min below max (as
    a histogram's last bucket starts where its steps end)."""
    lo, hi, step = params
    return lo + (hi - lo) // step * step


def _lq_layout(cname, info) -> Layout:
    lo, hi, step = info.params
    return _buckets((hi - lo) // step + 2)(cname, info)   # + below min, at or above the top


def _lq_params(chk, info, call):
    lo, hi, step = (chk.const_int(a, "lquantize()'s min, max and step must be constant integers")
                    for a in call.args[1:])
    # the tracer's bounds are 64-bit signed (a bound past it would print wrapped)
    for value, arg, what in zip((lo, hi, step), call.args[1:], ("min", "max", "step")):
        if not -(1 << 63) <= value < 1 << 63:
            chk.err(f"lquantize()'s {what} must be between -9223372036854775808 and "
                    f"9223372036854775807", arg.span)
    if step <= 0 or hi <= lo:
        chk.err("lquantize(x, min, max, step) needs min < max and step > 0", call.span)
    if (hi - lo) // step > LQUANTIZE_MAX_BUCKETS:
        chk.err(f"lquantize has more than {LQUANTIZE_MAX_BUCKETS} buckets; use a larger step", call.span)
    if info.params and info.params != (lo, hi, step):
        chk.err(f"{info.name} uses other lquantize bounds elsewhere", call.span)
    return (lo, hi, step)


def _hist_layout(cname, info) -> Layout:
    return _buckets(bt_hist_buckets(info.params[0] if info.params else 0))(cname, info)


def words(chk, key: str, default: str, **values) -> str:
    """An error's text: the front end's wording of `key` (Sema.AGG_WORDS)
    or the core's, filled with values."""
    return chk.AGG_WORDS.get(key, default).format(**values)


def _hist_params(chk, info, call):
    """hist(x, k): k a constant from 0 to 5 (the front end gives 0 when
    the script writes none), one k a map."""
    k = chk.const_int(call.args[1], "hist()'s second argument must be a constant integer")
    if not 0 <= k <= BT_HIST_MAX_K:
        chk.err(words(chk, "hist_k", "hist()'s k must be from 0 to {max}, not {k}", k=k, max=BT_HIST_MAX_K),
                call.span)
    if info.params and info.params != (k,):
        chk.err(words(chk, "hist_other_k", "{map} is a hist() of another k elsewhere", map=info.name), call.span)
    return (k,)


def _ts_layout(cname, info) -> Layout:
    return Layout(f"struct {cname}_ts", 24 * info.params[1])


def _ts_params(chk, info, call):
    """tseries(x, interval_ns, num_intervals, aggregator): constants, the
    aggregator's name as a string ("" for the last value)."""
    const = "tseries()'s {what} must be a constant integer"
    interval = chk.const_int(call.args[1], words(chk, "tseries_const", const, what="interval_ns"))
    n = chk.const_int(call.args[2], words(chk, "tseries_const", const, what="num_intervals"))
    for value, what in ((interval, "interval_ns"), (n, "num_intervals")):
        if value < 0 or value >= 1 << 63:
            chk.err(words(chk, "tseries_range", "tseries()'s {what} must be from 1 to 9223372036854775807",
                          what=what), call.span)
        if value == 0:
            chk.err(words(chk, "tseries_zero", "tseries()'s {what} must be from 1 to 9223372036854775807",
                          what=what), call.span)
    if n > TSERIES_MAX_INTERVALS:
        chk.err(f"tseries() has more than {TSERIES_MAX_INTERVALS} intervals in plyc", call.span,
                "plyc keeps a time series in one per-CPU map value, which the kernel caps at 32 KiB")
    name = chk.literal_string(call.args[3]) if len(call.args) > 3 else b""
    if name is None:
        chk.err("tseries()'s aggregation function must be a string literal: avg, max, min or sum",
                call.args[3].span)
    if name.decode("utf-8", "replace") not in TSERIES_AGGREGATORS:
        chk.err(words(chk, "tseries_aggregator", "tseries()'s aggregation function is avg, max, min or sum, "
                      "not \"{name}\"", name=name.decode("utf-8", "replace")), call.span)
    params = (interval, n, TSERIES_AGGREGATORS.index(name.decode()))
    if info.params and info.params != params:
        chk.err(words(chk, "tseries_other", "{map} is a tseries() of other bounds elsewhere", map=info.name),
                call.span)
    return params


TABLE = (
    Aggregation("count", False, 0, "PLYC_A_COUNT", _u64),
    Aggregation("sum", True, 1, "PLYC_A_SUM",
                lambda cname, info: Layout("__s64" if (info.value_type or T.S64).signed else "__u64", 8)),
    Aggregation("min", True, 1, "PLYC_A_MIN", lambda cname, info: Layout("struct plyc_minmax", 16)),
    Aggregation("max", True, 1, "PLYC_A_MAX", lambda cname, info: Layout("struct plyc_minmax", 16)),
    Aggregation("avg", True, 1, "PLYC_A_AVG", lambda cname, info: Layout("struct plyc_avg", 16)),
    Aggregation("quantize", True, 1, "PLYC_A_QUANTIZE", _buckets(64)),
    Aggregation("lquantize", True, 4, "PLYC_A_LQUANTIZE", _lq_layout, _lq_params),
    # a log2 histogram of non-negative values in bcc's layout: [0] is 0,
    # [i] is [2^(i-1), 2^i)
    Aggregation("log2", True, 1, "PLYC_A_LOG2", _buckets(64)),
    # stats(x): count, average and total; hist(x, k): a log2 histogram, each
    # power of two in 2^k buckets
    Aggregation("stats", True, 1, "PLYC_A_STATS", lambda cname, info: Layout("struct plyc_avg", 16)),
    Aggregation("hist", True, 2, "PLYC_A_HIST", _hist_layout, _hist_params),
    # tseries(x, interval_ns, n[, aggregator]): x per interval of the last
    # n, each interval's slot {value, meta, epoch} (plyc_rt.h)
    Aggregation("tseries", True, 4, "PLYC_A_TSERIES", _ts_layout, _ts_params),
)

AGGREGATIONS = {a.name: a for a in TABLE}
