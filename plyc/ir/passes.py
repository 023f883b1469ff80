"""Checking as an ordered list of passes. A front end lists its own (parse
tree in, IR out) followed by the core's, which take the IR; `run` calls them
in order and stops after the first that reported an error, so the user sees
every error of that pass and none that follow from them. (A front end's
resolve pass finds each probe's provider with providers.resolve_specs.)"""
from __future__ import annotations

from ..diag import Collector, PlycError
from . import nodes as ir
from . import constants, report


def run(passes, state) -> None:
    """Each pass is `fn(state, diag)`; raise the first pass's errors."""
    for fn in passes:
        diag = Collector()
        try:
            fn(state, diag)
        except PlycError as err:   # a pass that stops at its first error
            diag.diags.extend(err.diags)
        diag.check()


# --- the core's passes, over a typed ir.Program ------------------------------

def maps_written(program: ir.Program, diag: Collector):
    """A plain map read (or deleted from) somewhere must be written somewhere."""
    for m in program.maps.values():
        if not m.is_agg and not m.written:
            diag.error(f"map '{m.name}' is read but never assigned", m.span)


def map_refs(program: ir.Program, diag: Collector):
    """Every map a statement, expression or event names exists (a front end's bug otherwise)."""
    names = set(program.maps)
    for p in program.probes:
        for n in ir.walk(p.body):
            name = getattr(n, "map", None)
            if isinstance(name, str) and name not in names:
                raise AssertionError(f"probe {p.index} uses an undeclared map {name}")
    for ev in program.events:
        if ev.map is not None and ev.map not in names:
            raise AssertionError(f"event {ev.id} names an undeclared map {ev.map}")


def report_sections(program: ir.Program, diag: Collector):
    """The periodic report's sections show maps that exist and hold what
    their style shows (a front end's bug otherwise: report.ReportError)."""
    report.check(program.report, {name: m.agg.name if m.is_agg else None for name, m in program.maps.items()})


# The core's passes, in order: a front end lists them after its own.
CORE = (maps_written, map_refs, report_sections, constants.check)


def on_ir(fns) -> tuple:
    """Passes over ir.Program as passes over a front end's state, whose
    `ir` its own passes have set."""
    return tuple(lambda st, diag, fn=fn: fn(st.ir, diag) for fn in fns)
