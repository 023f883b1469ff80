"""The one way text from outside plyc (file names, paths, specs, labels,
format strings, script lines) reaches generated C: as a string literal
(c_string) or inside a comment (c_comment). The templates refuse any other
text (render.finalize): what they print is a number, an identifier, or C
that went through here or was written by plyc's code generator (C)."""
from __future__ import annotations

import re
from typing import Union

from ..quoting import as_bytes, quoted


class C(str):
    """Text that is C already: code plyc's generator wrote, whose strings
    and comments came from c_string and c_comment."""


def c_string(text: Union[str, bytes]) -> C:
    """A C string literal holding exactly text's bytes (quoting.quoted)."""
    return C(quoted(text))


# `/*` and `*/`: the characters between which a space goes.
_COMMENT_MARKS = re.compile(r"(?<=/)(?=\*)|(?<=\*)(?=/)")


def c_comment(text: Union[str, bytes]) -> C:
    """text made safe inside a /* */ comment on one line: neither `/*` nor
    `*/` (a space goes between), and any byte that is not printable ASCII
    written as \\xNN: no newline, so no backslash (or `??/`) ends a line
    and joins the next to the comment."""
    shown = "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in as_bytes(text))
    return C(_COMMENT_MARKS.sub(" ", shown))


def code(text: str) -> C:
    """Generated C (from cgen, printers, providers): passed to the
    templates as it is."""
    return C(text)


def c_int(value: int) -> str:
    """An integer literal of C's type for value (unsigned past 2^63 - 1)."""
    if value >= 1 << 63:
        return f"{value}ULL"
    if value < 0:
        return f"(-{-value}LL)" if value != -(1 << 63) else "(-9223372036854775807LL - 1)"
    return f"{value}LL"
