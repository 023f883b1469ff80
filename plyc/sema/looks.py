"""How plain integers print, which is the output style's, not their Type:
ply pads some values to a column (pid to 5, uid to 4, cpu to 2), and an
address prints in hex (a pointer's value, a uprobe's `caller`). A Style
names the built-in variables it pads or shows in hex; `attach` follows
their values through the typed IR as the typer flowed their types
(locals, maps' keys and values, `?:`, aggregations, print arguments), and
marks the maps and events the tracer prints them from (Map.key_widths,
Map.value_width, Map.key_hex, Map.value_hex, Event.arg_widths,
Event.arg_hex; codegen's printers read them). A pointer's own type says
it is an address; the marks carry that on where the typer's unify leaves
a plain integer (a map written a pointer and a number)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import builtins as B
from ..ir import nodes as ir


@dataclass(frozen=True)
class Style:
    widths: dict            # built-in variable -> its column
    hex: frozenset          # built-in variables that are addresses
    agg_hex: bool           # an aggregation of addresses prints them in hex


# ply's (argdist prints as ply): columns, uprobes' caller.
PLY = Style({"pid": 5, "kpid": 5, "uid": 4, "gid": 4, "cpu": 2}, frozenset({"caller"}), True)
# bpftrace's: no columns; its aggregations' values are numbers.
BPFTRACE = Style({}, frozenset(), False)

# Events whose argument types are their arguments' (others' are fixed: exit's s64).
SHOWN = (ir.PRINT, ir.PRINTF)


def attach(prog: ir.Program, style: Style = PLY):
    """Mark prog's maps and events with how what they print looks."""
    stmts = [(p.index, n) for p in prog.probes for n in ir.walk(p.body)]
    # (width, hex) of locals ((probe index, name)), maps' values and keys, events' arguments
    local: dict = {}
    value: dict = {}
    keys: dict = {}
    args: dict = {}

    def look(p: int, e) -> tuple:
        if isinstance(e, ir.Variable):
            own = e.var in B.VARIABLES and e.type == e.var.type
            return (style.widths.get(e.var.name, 0) if own else 0,
                    e.type.is_pointer or e.var.name in style.hex and e.type == e.var.type)
        if isinstance(e, ir.Local):
            return local.get((p, e.name), (0, False))
        if isinstance(e, ir.MapRead):
            return value.get(e.map, (0, False))
        if isinstance(e, ir.Ternary):
            return join(look(p, e.then), look(p, e.other))
        return 0, e.type is not None and e.type.is_pointer

    def join(a: tuple, b: tuple) -> tuple:
        return max(a[0], b[0]), a[1] or b[1]

    def widen(store: dict, key, w: tuple):
        store[key] = join(store.get(key, (0, False)), w)

    # Types unify to the widest of what flows in (types.unify), in the
    # order the typer meets them: a silent run, then the final one, which
    # starts from the maps' and locals' types the first found.
    for final in (False, True):
        for p, n in stmts:
            if isinstance(n, (ir.MapStore, ir.MapRead, ir.MapDelete, ir.Aggregate)):
                ws = keys.setdefault(n.map, [(0, False)] * len(n.keys))
                for i, k in enumerate(n.keys[:len(ws)]):
                    ws[i] = join(ws[i], look(p, k))
            if isinstance(n, ir.SetLocal):
                widen(local, (p, n.name), look(p, n.value))
            elif isinstance(n, ir.MapStore):
                widen(value, n.map, look(p, n.value))
            elif isinstance(n, ir.Aggregate) and style.agg_hex and n.args:
                widen(value, n.map, (0, look(p, n.args[0])[1]))
            elif isinstance(n, ir.EmitEvent) and final and n.event.kind in SHOWN:
                ws = args.setdefault(n.event.id, [(0, False)] * len(n.args))
                for i, a in enumerate(n.args[:len(ws)]):
                    ws[i] = join(ws[i], look(p, a))
    for m in prog.maps.values():
        ks = keys.get(m.name)
        m.key_widths = None if ks is None else [w for w, h in ks]
        m.key_hex = None if ks is None else [h for w, h in ks]
        w, m.value_hex = value.get(m.name, (0, False))
        m.value_width = 0 if m.is_agg else w
    for ev in prog.events:
        ev.arg_widths = [w for w, h in args.get(ev.id, [])]
        ev.arg_hex = [h for w, h in args.get(ev.id, [])]
