"""Print widths: ply's output style pads some values to a column (pid to
5, uid to 4, cpu to 2), which is how they print, not what they are, so
they are not in their Type. The style's table names the built-in variables
it pads; `attach` follows their values through the typed IR as the
typer flowed their types (locals, maps' keys and values, `?:`, print
arguments), and
marks the maps and events the tracer prints them from (Map.key_widths,
Map.value_width, Event.arg_widths; codegen's printers read them)."""
from __future__ import annotations

from .. import builtins as B
from ..ir import nodes as ir

# ply's columns (the built-in variables as every ply front end names them).
PLY = {"pid": 5, "kpid": 5, "uid": 4, "gid": 4, "cpu": 2}

# Events whose argument types are their arguments' (others' are fixed: exit's s64).
SHOWN = (ir.PRINT, ir.PRINTF)


def attach(prog: ir.Program, table: dict = PLY):
    """Mark prog's maps and events with the widths of what they print."""
    stmts = [(p.index, n) for p in prog.probes for n in ir.walk(p.body)]
    local: dict = {}        # (probe index, name) -> width
    value: dict = {}        # map name -> width of its values
    keys: dict = {}         # map name -> [width of each key]
    args: dict = {}         # event id -> [width of each argument]

    def width(p: int, e) -> int:
        if isinstance(e, ir.Variable):
            return table.get(e.var.name, 0) if e.var in B.VARIABLES and e.type == e.var.type else 0
        if isinstance(e, ir.Local):
            return local.get((p, e.name), 0)
        if isinstance(e, ir.MapRead):
            return value.get(e.map, 0)
        if isinstance(e, ir.Ternary):
            return max(width(p, e.then), width(p, e.other))
        return 0

    def widen(store: dict, key, w: int):
        store[key] = max(store.get(key, 0), w)

    # Types unify to the widest of what flows in (types.unify), in the
    # order the typer meets them: a silent run, then the final one, which
    # starts from the maps' and locals' types the first found.
    for final in (False, True):
        for p, n in stmts:
            if isinstance(n, (ir.MapStore, ir.MapRead, ir.MapDelete, ir.Aggregate)):
                ws = keys.setdefault(n.map, [0] * len(n.keys))
                for i, k in enumerate(n.keys[:len(ws)]):
                    ws[i] = max(ws[i], width(p, k))
            if isinstance(n, ir.SetLocal):
                widen(local, (p, n.name), width(p, n.value))
            elif isinstance(n, ir.MapStore):
                widen(value, n.map, width(p, n.value))
            elif isinstance(n, ir.EmitEvent) and final and n.event.kind in SHOWN:
                ws = args.setdefault(n.event.id, [0] * len(n.args))
                for i, a in enumerate(n.args[:len(ws)]):
                    ws[i] = max(ws[i], width(p, a))
    for m in prog.maps.values():
        m.key_widths = keys.get(m.name)
        m.value_width = 0 if m.is_agg else value.get(m.name, 0)
    for ev in prog.events:
        ev.arg_widths = args.get(ev.id, [])
