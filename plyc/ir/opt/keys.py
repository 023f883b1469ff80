"""Signatures of key expressions whose value stays the same within one run
of a program (until a $local in them is set): two keys with equal
signatures name the same entry. The lookups pass and the code generator's
key reuse compare keys by them."""
from __future__ import annotations

from .. import nodes as ir

def invariant(e):
    """A signature of an expression whose value stays the same within a
    run of the program (until a $local in it is set), else None."""
    t = (e.type.kind, e.type.size, e.type.signed)
    if isinstance(e, ir.IntConst):
        return ("i", e.value, t)
    if isinstance(e, ir.BytesConst):
        return ("s", e.value, t)
    if isinstance(e, ir.Param):
        return ("P", e.kind, e.index, t)
    if isinstance(e, ir.Variable):
        return ("v", e.var.name, t) if e.var.invariant else None
    if isinstance(e, ir.Local):
        return ("l", e.name)
    if isinstance(e, ir.TpField):
        return ("tp", e.name, t)
    if isinstance(e, (ir.Cast, ir.Unary, ir.Binary, ir.Ternary)):
        parts = [invariant(c) for c in ir.children(e)]
        return None if None in parts else (type(e).__name__, getattr(e, "op", None), t, tuple(parts))
    return None


def locals_in(sig) -> set:
    """The $locals a signature reads."""
    if not isinstance(sig, tuple):
        return set()
    if len(sig) == 2 and sig[0] == "l":
        return {sig[1]}
    return set().union(*(locals_in(part) for part in sig))


def forget(avail: dict, maps, locs: set) -> None:
    """Drop the entries of avail ((map, key signatures) -> binding) that a
    statement changing `maps` and setting the $locals `locs` makes stale."""
    for entry in list(avail):
        m, sigs = entry
        if m in maps or any(locals_in(sig) & locs for sig in sigs):
            del avail[entry]
