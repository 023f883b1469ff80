"""A program's periodic report: what a front end asks of the tracer when it
wants its maps printed every N seconds as report sections rather than dumped
by the tracer at exit (the runtime half is runtime-c/output/bccreport.c).

Every `interval` seconds the tracer prints a `[HH:MM:SS]` line, then each
section in order, then clears the maps unless `cumulative`; it stops after
`count` reports or at the first report `duration` seconds in, and reports
once more when tracing ends for another reason (the time since the last)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# How a section shows its map:
#   counts: a frequency table (bcc's): the header, "COUNT EVENT", one row per
#           key sorted by count ascending, "label = value, ..." (a count map)
#   log2:   a log2 histogram (bcc's print_log2_hist), the header as its
#           value column's label (a log2 map: [0] is 0, [i] is [2^(i-1), 2^i))
STYLES = {"counts": "count", "log2": "log2"}   # style -> the aggregation it shows


@dataclass(frozen=True)
class Section:
    map: str                        # the map's name in the program
    style: str                      # a key of STYLES
    header: str
    key_labels: tuple = ()          # counts: how each key is named in a row
    keyless_row: str = ""           # counts, a map without keys: the row's text ("total calls")


@dataclass(frozen=True)
class Report:
    interval: int                   # seconds
    sections: tuple
    count: int = 0                  # stop after this many reports (0: never)
    duration: float = 0.0           # stop at the first report this many seconds in (0: never)
    top: int = 0                    # counts sections: only the N largest rows (0: all)
    cumulative: bool = False        # never clear the maps
    default_pid: int = 0            # the tracer's -p when it is given none (0: every process)


class ReportError(ValueError):
    """A request the tracer can't honour (a front end's bug, not the user's)."""


def check(report: Optional[Report], maps: dict) -> None:
    """That every section's map exists and holds what its style shows.
    maps: name -> the aggregation's name (None for a plain map)."""
    if report is None:
        return
    if report.interval < 1:
        raise ReportError(f"report interval {report.interval}: must be at least 1 s")
    for s in report.sections:
        if s.style not in STYLES:
            raise ReportError(f"report section {s.map}: unknown style {s.style!r}")
        if s.map not in maps:
            raise ReportError(f"report section {s.map}: no such map")
        if maps[s.map] != STYLES[s.style]:
            raise ReportError(f"report section {s.map}: a {s.style} section shows a "
                              f"{STYLES[s.style]} map, not {maps[s.map] or 'a plain map'}")
