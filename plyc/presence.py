"""Warnings of `plyc check` and `plyc build` about a probe's target that
the build machine lacks (a misspelt tracepoint, function or binary), when
the tracer is built for this machine (its architecture, no --btf of
another kernel): located as errors are, never failing the build, since the
tracer may run on another kernel that has it. Each provider says how it
checks (providers/listing.py, MISSING)."""
from __future__ import annotations

import os
import sys
from typing import Optional

from . import arch as A
from .btf import BTFError
from .diag import Diagnostic
from .listing import ListError, Source
from .providers.listing import MISSING
from .tracefs import TracefsError


def native(target: Optional[str], btf: Optional[str]) -> bool:
    """Whether the tracer is built for the machine that builds it."""
    return (target is None or target == A.host_target()) and not btf and not os.environ.get("PLYC_BTF")


def missing(prog) -> list:
    """A warning for each probe whose target this machine has not."""
    src, out = Source(), []
    for p in prog.probes:
        check = MISSING.get(p.provider.name)
        if check is None:
            continue
        try:
            why = check(p.target, src)
        except (ListError, BTFError, TracefsError, OSError):
            why = None      # nothing here can say (no tracefs, no BTF): no warning
        if why:
            out.append(Diagnostic(f"{why}: a tracer run here would fail to attach it", p.spec.span,
                                  severity="warning"))
    return out


def warn(prog, filename: str, source: str, target: Optional[str], btf: Optional[str]) -> None:
    if not native(target, btf):
        return
    for d in missing(prog):
        print(d.render(filename, source), file=sys.stderr)
