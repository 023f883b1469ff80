"""Providers as a table: one module each, one `Provider` value per module.
A provider turns a probe spec into an attach target, names the BPF section
and context type, and adds the variables its probes may use."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .. import types as T
from ..ast import Spec
from ..diag import PlycError


@dataclass(frozen=True)
class Var:
    """A built-in variable. `code` is a C expression over `ctx`; `fill`
    names a BPF helper that fills a char array (for str-typed values)."""
    name: str
    type: T.Type
    code: str = ""
    fill: str = ""
    doc: str = ""


@dataclass
class Target:
    """A parsed spec: what the loader attaches, and how."""
    provider: "Provider"
    spec: Spec
    kind: str                        # loader attach kind, PLYC_P_*
    target: str = ""                 # tracepoint group/event, symbol, ...
    period_ns: int = 0               # interval
    freq: int = 0                    # profile
    cpu: int = -1
    glob: bool = False
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Provider:
    name: str
    aliases: tuple[str, ...]
    parse: Callable[[Spec], Target]
    section: Callable[[Target], str]
    ctx_decl: str
    variables: tuple[Var, ...] = ()
    # data->field / regs->field access: (target, field name, span) -> (type, C code)
    member: Optional[Callable] = None
    # (target, variable name, KernelTypes) -> a better type for a variable, or None
    typed: Optional[Callable] = None
    # (target, KernelTypes, arch) -> how it can run as fentry/fexit, or None
    fentry: Optional[Callable] = None
    has_stack: bool = True
    runnable_here: bool = True       # codegen exists; False: parses and checks only
    doc: str = ""

    def var(self, name: str) -> Optional[Var]:
        for v in self.variables:
            if v.name == name:
                return v
        return None


def spec_error(spec: Spec, message: str, note: str = None) -> PlycError:
    from ..diag import error
    return error(message, spec.span, note)


from . import interval, kprobe, profile, special, tracepoint, uprobe  # noqa: E402

REGISTRY: tuple[Provider, ...] = (
    tracepoint.PROVIDER,
    kprobe.KPROBE,
    kprobe.KRETPROBE,
    uprobe.UPROBE,
    uprobe.URETPROBE,
    uprobe.USDT,
    interval.PROVIDER,
    profile.PROVIDER,
    special.BEGIN,
    special.END,
)


def lookup(name: str) -> Optional[Provider]:
    for p in REGISTRY:
        if name == p.name or name in p.aliases:
            return p
    return None
