"""What every front end checks when a script names a map with keys: each key
can be one, and every use agrees with the others (their types unified)."""
from __future__ import annotations

from .. import types as T

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
    for ks, old, new in zip(spans, info.key_types, key_types):
        u = T.unify(old, new)
        if u is None:
            err(f"{info.name} key is {old} elsewhere, {new} here", ks)
        merged.append(u)
    info.key_types = merged
