"""Where a piece of text came from: a Span (lines and columns, 1-based) in
the script or in a file it imports (SourceFile). Below everything that
locates a message: diag.py renders spans, the front ends' trees and the IR
carry them (ir.Span is this one)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True, eq=False)
class SourceFile:
    """A file other than the script that a span points into (one a
    bpftrace script imports): its name as messages print it, and its text."""
    name: str
    text: str
    line: int = 0    # the script's line of the import that brought it in
    # Its name from the script's folder, as the tracer and the generated C
    # name it (the script by its base name): the same wherever it is built.
    tracer_name: str = ""

    def __repr__(self) -> str:
        return f"SourceFile({self.name!r})"


@dataclass(frozen=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int
    # None: the script's own text; else the imported file the lines count in
    origin: Optional[SourceFile] = field(default=None, compare=False, repr=False)

    def to(self, other: "Span") -> "Span":
        return Span(self.line, self.col, other.end_line, other.end_col, self.origin)


NOSPAN = Span(0, 0, 0, 0)


def script_line(span: Span) -> int:
    """The script's line a span stands for where the tracer names one line
    of the script (its messages, the verifier's): in an imported file, the
    script's import that brought the file in."""
    return span.origin.line if span.origin is not None else span.line
