"""Common map-lookup elimination: every read of a plain map's entry
(MapRead, MapHas) under keys that stay the same within the run
(keys.invariant) becomes a read through a pointer that one LookupLet,
placed before the statement that first needs it, bound; later reads of
the same entry reuse it while nothing may have changed the entry since:

- a store, delete, or clear/zero of that map ends every binding of the
  map (the kernel may free the entry the pointer points at);
- setting a $local ends the bindings whose keys read it;
- a binding made inside an if's branch or a loop's body lives there only
  (its C scope), and one made before a loop serves the loop only when
  nothing in the loop changes it;
- a for-each body runs in a callback of its own: it starts with none,
  and makes its own.

What another CPU does to the entry meanwhile is read through the pointer
as the kernel's own tools read it (runqlat's single lookup). Reads of
aggregations (per-CPU, merged by the tracer) and under keys that may
change within the run (a string read from memory, a counter) are left as
they are."""
from __future__ import annotations

from .. import nodes as ir
from . import rewrite
from .keys import forget, invariant

# Events whose tracer-side action empties a map (the lookup must not
# outlive them even though the tracer acts later).
MAP_EVENTS = (ir.CLEAR, ir.ZERO)


def effects(s: ir.Stmt) -> tuple:
    """(maps, locals) that s or a statement in it may change."""
    maps, locs = set(), set()
    for n in ir.walk(s):
        if isinstance(n, (ir.MapStore, ir.MapDelete, ir.Aggregate)):
            maps.add(n.map)
        elif isinstance(n, ir.EmitEvent) and n.event.kind in MAP_EVENTS and n.event.map:
            maps.add(n.event.map)
        elif isinstance(n, ir.SetLocal):
            locs.add(n.name)
        elif isinstance(n, ir.ForMap):
            locs.update(n.keys + [n.value])
    return maps, locs


class Binder:
    def __init__(self, program: ir.Program):
        self.program = program
        self.count = 0

    def bindable(self, e) -> tuple:
        """The entry a read names, (map, key signatures), or None."""
        if not isinstance(e, (ir.MapRead, ir.MapHas)):
            return None
        m = self.program.maps.get(e.map)
        if m is None or m.is_agg:
            return None
        sigs = tuple(invariant(k) for k in e.keys)
        return None if None in sigs else (e.map, sigs)

    def bind(self, s: ir.Stmt, avail: dict, pre: list, new: bool = True):
        """Rewrite s's own expressions: reads of bound entries through their
        binding, others bound anew (by LookupLets added to pre) if `new`."""
        def reuse(e):
            entry = self.bindable(e)
            if entry is None:
                return e
            if entry not in avail:
                if not new:
                    return e
                self.count += 1
                name = f"lookup{self.count}"
                pre.append(ir.LookupLet(name, e.map, e.keys, span=s.span))
                avail[entry] = name
            kind = ir.LookupValue if isinstance(e, ir.MapRead) else ir.LookupFound
            return kind(avail[entry], e.map, type=e.type, span=e.span)
        rewrite.own_exprs(s, reuse)

    def block(self, s: ir.Stmt, avail: dict) -> ir.Stmt:
        """s with its reads bound; bindings it makes in its own scope stay
        in avail only if s is a Block (the caller's copy otherwise)."""
        if isinstance(s, ir.Block):
            out = []
            for sub in s.stmts:
                out += self.stmt(sub, avail)
            s.stmts = out
            return s
        out = self.stmt(s, avail)
        return out[0] if len(out) == 1 else ir.Block(out, span=s.span)

    def stmt(self, s: ir.Stmt, avail: dict) -> list:
        """s, with the LookupLets it needs before it; avail updated for what follows."""
        pre = []
        if isinstance(s, ir.Block):
            return [self.block(s, avail)]
        if isinstance(s, ir.If):
            self.bind(s, avail, pre)
            s.then = self.block(s.then, dict(avail))
            if s.other is not None:
                s.other = self.block(s.other, dict(avail))
        elif isinstance(s, ir.While):
            # cond and step run again after the body: only what the loop
            # leaves alone serves them, and nothing new is bound for them.
            forget(avail, *effects(s))
            self.bind(s, avail, pre, new=False)
            if s.step is not None:
                s.step = self.block(s.step, dict(avail))
            s.body = self.block(s.body, dict(avail))
        elif isinstance(s, ir.ForMap):
            s.body = self.block(s.body, {})
        else:
            self.bind(s, avail, pre)
        forget(avail, *effects(s))
        return pre + [s]


def run(program: ir.Program) -> None:
    for p in program.probes:
        # Names count on from those of a previous run over the same probe.
        done = [n for n in ir.walk(p.body) if isinstance(n, ir.LookupLet)]
        gen = Binder(program)
        gen.count = len(done)
        p.body = gen.block(p.body, {})
