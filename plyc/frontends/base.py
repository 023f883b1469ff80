"""What a script language's front end is to the driver: a name, the file
suffixes that select it, a parser, a lowering into ir.Program (which records
the tracer's output style), and the front-end options it accepts."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:
    from ..ir import nodes as ir


@dataclass(frozen=True)
class Option:
    """A front-end option on `plyc build/run/check`, given to the front ends
    that declare it: a yes/no flag (`--NAME`), or, with choices, one of
    them (`--NAME VALUE`, default the first)."""
    name: str
    help: str
    choices: tuple = ()


@dataclass(frozen=True)
class Settings:
    """What every front end's lower is given: the build's settings, and its
    own options (only those it declares, each False unless given)."""
    env: dict                      # the build machine's environment
    strsize: int                   # --strsize
    btf: Optional[str]             # the target kernel's BTF (None: this machine's)
    target: str                    # the target architecture
    options: dict = field(default_factory=dict)   # a flag's True/False, a choice's value
    include_dirs: tuple = ()       # -I DIR: where #include lines are searched first
    include_files: tuple = ()      # --include FILE: headers included before the script's


@dataclass(frozen=True)
class FrontEnd:
    name: str
    suffixes: tuple                              # file names ending so are in this language
    parse: Callable[[str, str], Any]             # (source, filename) -> the language's AST
    lower: Callable[[Any, Settings], ir.Program]  # AST -> IR, its output style set
    options: tuple = ()                          # the Options it accepts
    c_headers: bool = False                      # its scripts #include C headers (-I, --include)
