"""Key hoisting: a map key that several accesses in a run build from the
same values (keys.invariant: the same entry) is built once, by a KeyLet
before the first, and each access names it by a KeyRef. A key serves the
accesses after it in its block and the blocks nested in it, until a
$local its values read is set; a loop that sets one gets none from before
it, and a for-each body (a callback) builds its own. Maps whose keys have
one C type (keyless, or one integer of the same size and sign) share
keys, as `@start[tid]` and `@seen[tid]` can. Single uses keep their keys
where they are: the key is built where the access is."""
from __future__ import annotations

from .. import nodes as ir
from . import lookups, rewrite
from .keys import forget, invariant

ACCESSES = (ir.MapRead, ir.MapHas, ir.MapStore, ir.MapDelete, ir.Aggregate, ir.LookupLet)


class Hoister:
    def __init__(self, program: ir.Program):
        self.program = program
        self.count = 0

    def kind(self, name: str) -> tuple:
        """What keys of map `name` share a C type with."""
        types = self.program.maps[name].key_types or []
        if not types:
            return ("none",)
        if len(types) == 1 and not types[0].is_bytes and types[0].kind == "int":
            return ("int", types[0].size, types[0].signed)
        return ("map", name)

    def entry(self, node) -> tuple:
        if not isinstance(node, ACCESSES) or node.map not in self.program.maps:
            return None
        sigs = tuple(invariant(k) for k in node.keys)
        return None if None in sigs else (self.kind(node.map), sigs)

    def uses(self, stmts: list) -> dict:
        """How many accesses in stmts (nested ones too) build each key."""
        out = {}
        for s in stmts:
            for n in ir.walk(s):
                e = self.entry(n)
                if e is not None:
                    out[e] = out.get(e, 0) + 1
        return out

    def block(self, s: ir.Stmt, avail: dict) -> ir.Stmt:
        stmts = s.stmts if isinstance(s, ir.Block) else [s]
        out = []
        for i, sub in enumerate(stmts):
            out += self.stmt(sub, avail, stmts[i:])
        if isinstance(s, ir.Block):
            s.stmts = out
            return s
        return out[0] if len(out) == 1 else ir.Block(out, span=s.span)

    def stmt(self, s: ir.Stmt, avail: dict, rest: list) -> list:
        """s with its accesses' keys named, the KeyLets it needs before it."""
        pre = []
        if isinstance(s, ir.Block):
            # printed without braces of its own: the keys go on after it
            return [self.block(s, avail)]
        if isinstance(s, ir.While):
            forget(avail, (), lookups.effects(s)[1])
        if isinstance(s, ir.ForMap):
            s.body = self.block(s.body, {})
        else:
            # Keys of s's own accesses (in its expressions, and s itself).
            ahead = None
            for node in [n for n in own_nodes(s)]:
                e = self.entry(node)
                if e is None:
                    continue
                if e not in avail:
                    if ahead is None:
                        ahead = self.uses(rest)
                    if ahead.get(e, 0) < 2 or isinstance(s, ir.While):
                        continue
                    self.count += 1
                    name = f"key_{self.count}"
                    pre.append(ir.KeyLet(name, node.map, node.keys, span=s.span))
                    avail[e] = name
                node.keys = [ir.KeyRef(avail[e], span=node.span)]
            for sub in rewrite.sub_stmts(s):
                replaced = self.block(sub, dict(avail))
                for name in ("then", "other", "body", "step"):
                    if getattr(s, name, None) is sub:
                        setattr(s, name, replaced)
        forget(avail, (), lookups.effects(s)[1])
        return pre + [s]


def own_nodes(s: ir.Stmt) -> list:
    """s and the expressions of s itself, innermost first (not those of
    the statements inside s)."""
    out = []
    for name in s.__dataclass_fields__:
        value = getattr(s, name)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, ir.Expr):
                out += [n for n in reversed(list(ir.walk(v)))]
    return out + [s]


def run(program: ir.Program) -> None:
    for p in program.probes:
        done = [n for n in ir.walk(p.body) if isinstance(n, ir.KeyLet)]
        h = Hoister(program)
        h.count = len(done)
        p.body = h.block(p.body, {})
