"""bpftrace's tokens, scanned on demand at a character offset.

The parser reads the top level (preprocessor lines, struct definitions,
probe specs) as raw text and only the inside of predicates and blocks as
tokens, so the lexer is a function of the offset: `scan(pos)` gives the
token that starts at or after `pos`. Offsets become lines and columns only
when a span is made."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Optional

from ...span import SourceFile, Span
from ...diag import error

KEYWORDS = frozenset(
    "if else unroll while for break continue return let macro config import "
    "sizeof offsetof".split())

# Longest first, so that '<<=' wins over '<<' and '<'.
PUNCT = sorted("""<<= >>= .. -> ++ -- += -= *= /= %= &= |= ^= == != <= >= && || << >>
+ - * / % & | ^ ! ~ < > = ( ) { } [ ] , ; : ? .""".split(), key=len, reverse=True)

IDENT_RE = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
# An integer as bpftrace writes it: hex, or decimal/octal digits with '_'
# separators, an optional e<n> exponent, then a C suffix or a duration.
INT_RE = re.compile(r"""
    (?P<hex>0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*)
  | (?P<dec>[0-9]+(?:_[0-9]+)*)(?:[eE](?P<exp>[0-9]+))?
""", re.X)
INT_SUFFIX_RE = re.compile(r"(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)(?![_a-zA-Z0-9])")
DURATIONS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
             "h": 3600 * 10**9, "d": 86400 * 10**9}
DURATION_RE = re.compile(r"(ns|us|ms|s|m|h|d)(?![_a-zA-Z0-9])")

SIMPLE_ESCAPES = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39,
                  "a": 7, "b": 8, "f": 12, "v": 11, "e": 27}


@dataclass
class Token:
    kind: str            # 'int' 'str' 'ident' 'var' 'param' 'nparams' 'map' 'punct' 'eof'
    text: str            # the source text
    start: int
    end: int
    value: object = None # int for 'int', bytes for 'str', name for 'var'/'map'/'param'

    def describe(self) -> str:
        if self.kind == "eof":
            return "the end of the script"
        if self.kind == "str":
            return "a string"
        return f"'{self.text}'"


class Source:
    """The script's text, with the offset -> line/column map spans need."""

    def __init__(self, text: str, origin: Optional[SourceFile] = None):
        self.text = text
        self.origin = origin     # an imported file's (its spans say so)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> tuple:
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line + 1, offset - self.line_starts[line] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.pos(start)
        end_line, end_col = self.pos(max(end, start))
        return Span(line, col, end_line, end_col, self.origin)

    def fail(self, message: str, start: int, end: Optional[int] = None, note=None):
        raise error(message, self.span(start, end if end is not None else start + 1), note)


class Lexer:
    def __init__(self, source: Source):
        self.src = source
        self.text = source.text
        self._cache: dict = {}

    # --- whitespace and comments ------------------------------------------

    def skip_space(self, pos: int, newlines: bool = True) -> int:
        text, n = self.text, len(self.text)
        while pos < n:
            c = text[pos]
            if c in " \t\r\f\v" or (c == "\n" and newlines):
                pos += 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = n if end < 0 else end
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                if end < 0:
                    self.src.fail("unterminated comment", pos, pos + 2)
                pos = end + 2
            else:
                break
        return pos

    # --- tokens -------------------------------------------------------------

    def scan(self, pos: int) -> Token:
        tok = self._cache.get(pos)
        if tok is None:
            tok = self._cache[pos] = self._scan(self.skip_space(pos))
        return tok

    def _scan(self, start: int) -> Token:
        text = self.text
        if start >= len(text):
            return Token("eof", "", start, start)
        c = text[start]
        if c == '"':
            return self._string(start)
        if "0" <= c <= "9":
            return self._int(start)
        if c == "$":
            if text.startswith("$#", start):
                return Token("nparams", "$#", start, start + 2)
            m = re.compile(r"[0-9]+").match(text, start + 1)
            if m:
                return Token("param", m.group(), start, m.end(), int(m.group()))
            m = IDENT_RE.match(text, start + 1)
            if not m:
                self.src.fail("expected a variable name after '$'", start)
            return Token("var", text[start:m.end()], start, m.end(), m.group())
        if c == "@":
            m = IDENT_RE.match(text, start + 1)
            end = m.end() if m else start + 1
            return Token("map", text[start:end], start, end, text[start:end])
        m = IDENT_RE.match(text, start)
        if m:
            return Token("ident", m.group(), start, m.end(), m.group())
        for p in PUNCT:
            if text.startswith(p, start):
                return Token("punct", p, start, start + len(p))
        if c == "'":
            self.src.fail("character literals are not part of bpftrace's language; "
                          "write the character's code (65 for 'A')", start)
        if c == "#":
            self.src.fail("a preprocessor line must come before the first probe", start)
        shown = c if c.isprintable() else f"\\x{ord(c):02x}"
        self.src.fail(f"invalid character '{shown}'", start)

    def _int(self, start: int) -> Token:
        text = self.text
        m = INT_RE.match(text, start)
        end = m.end()
        if m.group("hex"):
            value = int(m.group("hex").replace("_", ""), 16)
        else:
            digits = m.group("dec").replace("_", "")
            if m.group("exp") is not None:
                value = int(digits) * 10 ** int(m.group("exp"))
            elif len(digits) > 1 and digits[0] == "0":
                if any(d in "89" for d in digits):
                    self.src.fail(f"invalid octal literal '{m.group()}'", start, end)
                value = int(digits, 8)
            else:
                value = int(digits)
        suffix = INT_SUFFIX_RE.match(text, end)
        if suffix:
            end = suffix.end()
        elif not m.group("hex") and m.group("exp") is None:
            dur = DURATION_RE.match(text, end)
            if dur:
                value *= DURATIONS[dur.group(1)]
                end = dur.end()
        if end < len(text) and re.match(r"\w", text[end]):
            tail = IDENT_RE.match(text, end) or re.compile(r"\w+").match(text, end)
            self.src.fail(f"invalid integer literal '{text[start:tail.end()]}'", start, tail.end())
        if value >= 1 << 64:
            self.src.fail(f"integer literal '{text[start:end]}' does not fit in 64 bits", start, end)
        return Token("int", text[start:end], start, end, value)

    def _string(self, start: int) -> Token:
        text, out, pos = self.text, bytearray(), start + 1
        while True:
            if pos >= len(text) or text[pos] == "\n":
                self.src.fail("unterminated string", start, pos)
            c = text[pos]
            if c == '"':
                return Token("str", text[start:pos + 1], start, pos + 1, bytes(out))
            if c != "\\":
                out += c.encode()
                pos += 1
                continue
            esc = text[pos + 1:pos + 2]
            if esc in SIMPLE_ESCAPES:
                out.append(SIMPLE_ESCAPES[esc])
                pos += 2
            elif esc and esc in "01234567":
                m = re.compile(r"[0-7]{1,3}").match(text, pos + 1)
                if int(m.group(), 8) > 255:
                    self.src.fail(f"octal escape '\\{m.group()}' is over 255", pos, m.end())
                out.append(int(m.group(), 8))
                pos = m.end()
            elif esc == "x":
                m = re.compile(r"[0-9a-fA-F]{1,2}").match(text, pos + 2)
                if not m:
                    self.src.fail("'\\x' needs hexadecimal digits", pos, pos + 2)
                out.append(int(m.group(), 16))
                pos = m.end()
            else:
                self.src.fail(f"invalid escape '\\{esc}' in string", pos, pos + 2)
