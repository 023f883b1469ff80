"""The script languages plyc reads, and which one a script is in."""
from __future__ import annotations

from typing import Optional

from .base import FrontEnd
from .bpftrace import FRONTEND as BPFTRACE
from .ply import FRONTEND as PLY

# In order; a file name no front end's suffix matches is DEFAULT's.
FRONTENDS = (PLY, BPFTRACE)
DEFAULT = PLY


def names() -> tuple:
    return tuple(fe.name for fe in FRONTENDS)


def options() -> tuple:
    """Every front end's options, each once (the command line's flags)."""
    seen = {}
    for fe in FRONTENDS:
        for o in fe.options:
            seen.setdefault(o.name, o)
    return tuple(seen.values())


def suffixes() -> tuple:
    return tuple(s for fe in FRONTENDS for s in fe.suffixes)


def get(filename: str, lang: Optional[str] = None) -> FrontEnd:
    """The front end of a script: the one named by lang, else the one whose
    suffix ends filename, else DEFAULT's."""
    if lang:
        for fe in FRONTENDS:
            if fe.name == lang:
                return fe
        raise ValueError(f"no front end is named {lang!r}")   # the CLI's choices refuse it first
    for fe in FRONTENDS:
        if filename.endswith(fe.suffixes):
            return fe
    return DEFAULT
