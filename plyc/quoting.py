"""Bytes as a quoted string literal in C's syntax: the one spelling of a
string both where plyc shows its IR (plyc/ir/dump.py) and where it writes C
(codegen/cescape.py's c_string, which marks the same literal as C). Below
both, so the IR need not import the code generator."""
from __future__ import annotations

from typing import Union

ESCAPES = {ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r", ord('"'): '\\"', ord("\\"): "\\\\"}


def as_bytes(text: Union[str, bytes]) -> bytes:
    """text's bytes: a file name that is not UTF-8 (os.fsdecode's
    surrogates) as the bytes it was."""
    if isinstance(text, bytes):
        return text
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def quoted(text: Union[str, bytes]) -> str:
    """A string literal holding exactly text's bytes. Printable ASCII
    stays as is except `\\`, `"` and `?` (trigraphs); every other byte is a
    three-digit octal escape, which, unlike a hex escape, cannot take in
    the digits after it."""
    out = []
    for b in as_bytes(text):
        if b in ESCAPES:
            out.append(ESCAPES[b])
        elif 32 <= b < 127 and b != ord("?"):
            out.append(chr(b))
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'
