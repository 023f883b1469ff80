"""bpftrace 0.27's words for the errors of its aggregations' arguments
(hist()'s bits, tseries()'s bounds), where plyc/aggregations.py's entries
check them: the Typer's AGG_WORDS, by the table's keys, each a template of
the values the entry gives."""

WORDS = {
    "hist_k": "hist: bits {k} must be 0..{max}",
    "hist_other_k": "Different bits in a single hist unsupported",
    "tseries_const": "tseries: invalid {what} value (must be non-negative literal)",
    "tseries_range": "tseries: invalid {what} value (must be non-negative literal)",
    "tseries_zero": "tseries() {what} must be >= 1 (0 provided)",
    "tseries_aggregator": "tseries() expects one of the following aggregation functions: avg, max, min, sum "
                          "(\"{name}\" provided)",
    "tseries_other": "Different tseries bounds in a single map unsupported",
}
