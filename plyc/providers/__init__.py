"""Providers as a table: one module each, one `Provider` value per module
(base.py: what a provider is). A probe spec finds its provider here
(lookup, resolve_specs); docs/design.md, "How to add a provider"."""
from __future__ import annotations

from typing import Optional

from ..diag import Collector, PlycError
from . import interval, iterators, kfunc, kprobe, perfevent, profile, rawtracepoint, special, tracepoint, uprobe, watchpoint
from .base import Fields, Provider, Target, Var, c_str, spec_error  # noqa: F401  (plyc.providers.Target etc.)

REGISTRY: tuple[Provider, ...] = (
    tracepoint.PROVIDER,
    kprobe.KPROBE,
    kprobe.KRETPROBE,
    uprobe.UPROBE,
    uprobe.URETPROBE,
    uprobe.USDT,
    interval.PROVIDER,
    profile.PROVIDER,
    perfevent.SOFTWARE,
    perfevent.HARDWARE,
    special.BEGIN,
    special.END,
    special.SELF,
    kfunc.KFUNC,
    kfunc.KRETFUNC,
    rawtracepoint.PROVIDER,
    iterators.PROVIDER,
    watchpoint.PROVIDER,
)


def lookup(name: str) -> Optional[Provider]:
    for p in REGISTRY:
        if name == p.name or name in p.aliases:
            return p
    return None


def resolve_specs(specs: list, diag: Collector, fields: Optional[list] = None, arch: str = "") -> list:
    """Each spec with its provider's target (None where it has errors).
    fields: each spec's Fields, for a front end that parsed them itself
    (else each provider parses its spec's text); arch: the --target the
    tracer is built for, checked by providers whose probes depend on it."""
    out = []
    for i, spec in enumerate(specs):
        prov = lookup(spec.provider)
        if prov is None:
            names = ", ".join(sorted({p.name for p in REGISTRY} |
                                     {a for p in REGISTRY for a in p.aliases}))
            diag.error(f"unknown provider '{spec.provider}'", spec.span, f"providers are: {names}")
            out.append((spec, None))
            continue
        try:
            target = prov.parse(spec) if fields is None else prov.make(spec, fields[i])
            if arch and prov.for_arch is not None:
                prov.for_arch(target, arch)
            out.append((spec, target))
        except PlycError as e:
            diag.diags.extend(e.diags)
            out.append((spec, None))
    if not any(t for _, t in out) and not diag.diags:
        diag.error("the script has no probes", None)
    return out
