"""Diagnostics: located errors rendered as `file:line:col: error: msg`,
the source line and a caret underline. Every user-facing failure of the
compiler is a PlycError; the CLI prints it and exits 1."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Optional

from .span import Span


@dataclass
class Diagnostic:
    message: str
    span: Optional[Span] = None
    severity: str = "error"
    note: Optional[str] = None

    def render(self, filename: str, source: Optional[str]) -> str:
        return self.render_lines(filename, source_lines(source))

    def render_lines(self, filename: str, lines: list) -> str:
        if self.span is not None and self.span.origin is not None:    # in an imported file
            filename, lines = self.span.origin.name, source_lines(self.span.origin.text)
        if self.span is None or self.span.line <= 0:
            text = f"{filename}: {self.severity}: {self.message}"
        else:
            sp = self.span
            text = f"{filename}:{sp.line}:{sp.col}: {self.severity}: {self.message}"
            if 0 < sp.line <= len(lines):
                raw = lines[sp.line - 1].rstrip("\r")
                src = raw.expandtabs(8)
                if not src.isprintable():
                    # Unprintable characters show as blanks, so the caret lines up.
                    src = "".join(c if c.isprintable() else " " for c in src)
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


def source_lines(source: Optional[str]) -> list:
    """The lines of a script as the lexer counts them: ending at '\n' only
    (not at the form feeds or U+2028 where str.splitlines also splits)."""
    return source.split("\n") if source is not None else []


# Like a C compiler's error limit: past this many, the rest are only counted.
MAX_SHOWN = 20


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
        lines = source_lines(self.source)
        text = "\n".join(d.render_lines(self.filename, lines) for d in self.diags[:MAX_SHOWN])
        hidden = len(self.diags) - MAX_SHOWN
        if hidden > 0:
            text += f"\n{self.filename}: {hidden} more error{'s' if hidden != 1 else ''} not shown"
        return text


def did_you_mean(name: str, names) -> str:
    """Up to three of names close to a misspelt one (a typo's likely
    meaning), as "did you mean a, b or c?", or ""."""
    close = difflib.get_close_matches(name, list(names), 3, 0.8)
    if len(close) > 1:
        return f"did you mean {', '.join(close[:-1])} or {close[-1]}?"
    return f"did you mean {close[0]}?" if close else ""


def error(message: str, span: Optional[Span] = None, note: Optional[str] = None) -> PlycError:
    return PlycError(Diagnostic(message, span, note=note))


class Collector:
    """Gathers diagnostics in one pass so the user sees all of that pass's errors."""

    def __init__(self):
        self.diags: list[Diagnostic] = []
        self._seen: set = set()

    def error(self, message: str, span: Optional[Span] = None, note: Optional[str] = None):
        # The same mistake found twice (say, by both checker passes) is said once.
        if (message, span, note) not in self._seen:
            self._seen.add((message, span, note))
            self.diags.append(Diagnostic(message, span, note=note))

    def check(self):
        if self.diags:
            raise PlycError(self.diags)
