"""What every front end checks when a script names a map with keys: each key
can be one, and every use agrees with the others (their types unified)."""
from __future__ import annotations

from .. import types as T
from .fold import value as const_value

KEY_KINDS = ("int", "str", "buf", "inet", "usym", "stack", "tuple")


def use_keys(info, keys: list, spans: list, span, err) -> None:
    """Record one use of map `info` with typed `keys` (IR expressions; `spans`:
    where each was written, `span`: the whole reference); `err(message, span)`
    reports and stops, as a front end's typer does."""
    key_types = [k.type for k in keys]
    for kt, ks in zip(key_types, spans):
        if kt.kind not in KEY_KINDS:
            err(f"a value of type {kt} can't be a map key", ks)
    if info.key_types is None:
        info.key_types = key_types
        return
    if len(info.key_types) != len(key_types):
        n = len(info.key_types)
        err(f"{info.name} has {n} key{'s' if n != 1 else ''} elsewhere, {len(key_types)} here", span)
    merged = []
    for ks, old, new, k in zip(spans, info.key_types, key_types, keys):
        u = T.unify(old, new)
        if u is None:
            err(f"{info.name} key is {old} elsewhere, {new} here", ks)
        unheld(k, u, f"{info.name}'s key", ks, err)
        merged.append(u)
    info.key_types = merged


def unheld(x, typ, what: str, span, err) -> None:
    """Refuse a constant of 2^63 or more kept where a signed type is (where
    it meets a signed one: types.promoted), as bpftrace 0.27 refuses it,
    rather than keep it as a negative number."""
    v = const_value(x) if typ is not None and typ.is_int and x.type.flexible else None
    if v is not None and not T.holds(typ, v):
        err(f"{v} does not fit in {what}, of type {typ} (where it meets a signed type)", span)
