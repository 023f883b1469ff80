"""Diagnostics: located errors rendered as `file:line:col: error: msg`,
the source line and a caret underline. Every user-facing failure of the
compiler is a PlycError; the CLI prints it and exits 1."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .ast import Span


@dataclass
class Diagnostic:
    message: str
    span: Optional[Span] = None
    severity: str = "error"
    note: Optional[str] = None

    def render(self, filename: str, source: Optional[str]) -> str:
        if self.span is None or self.span.line <= 0:
            text = f"{filename}: {self.severity}: {self.message}"
        else:
            sp = self.span
            text = f"{filename}:{sp.line}:{sp.col}: {self.severity}: {self.message}"
            # Lines end at '\n' only, as the lexer counts them (not at the
            # form feeds or U+2028 that str.splitlines also splits at).
            lines = source.split("\n") if source is not None else []
            if 0 < sp.line <= len(lines):
                raw = lines[sp.line - 1].rstrip("\r")
                # Unprintable characters show as blanks, so the caret lines up.
                src = "".join(c if c.isprintable() else " " for c in raw.expandtabs(8))
                # Column in the tab-expanded line, so the caret lines up.
                col = len(raw[: sp.col - 1].expandtabs(8))
                if sp.end_line == sp.line and sp.end_col > sp.col:
                    width = len(raw[: sp.end_col - 1].expandtabs(8)) - col
                else:
                    width = 1
                text += f"\n{src}\n{' ' * col}^{'~' * max(0, width - 1)}"
        if self.note:
            text += f"\nnote: {self.note}"
        return text


class PlycError(Exception):
    """One or more diagnostics that stop compilation."""

    def __init__(self, diags, filename: str = "<script>", source: Optional[str] = None):
        if isinstance(diags, Diagnostic):
            diags = [diags]
        self.diags = list(diags)
        self.filename = filename
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.render(self.filename, self.source) for d in self.diags)


def error(message: str, span: Optional[Span] = None, note: Optional[str] = None) -> PlycError:
    return PlycError(Diagnostic(message, span, note=note))


class Collector:
    """Gathers diagnostics in one pass so the user sees all of that pass's errors."""

    def __init__(self):
        self.diags: list[Diagnostic] = []

    def error(self, message: str, span: Optional[Span] = None, note: Optional[str] = None):
        diag = Diagnostic(message, span, note=note)
        if diag not in self.diags:   # the same mistake found by two passes is said once
            self.diags.append(diag)

    def check(self):
        if self.diags:
            raise PlycError(self.diags)
