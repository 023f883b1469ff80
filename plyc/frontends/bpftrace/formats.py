"""printf's format as bpftrace 0.27 reads it: a `%` that starts no
conversion (`50%` at the end, `%\\n`, `x%q`) is printed as it is, where
C's printf (and plyc's shared check) would want `%%`. Published tools write
`printf("... 100%\\n")`. A `%` that does start one (`% d`: the ' ' flag)
is a conversion, as in 0.27."""
from __future__ import annotations

from dataclasses import replace

from ... import printf as P
from . import ast as A

FORMATTED = ("printf", "errorf", "warnf")


def literal_percents(chk, call: A.Call) -> A.Call:
    """call with each `%` of its format that starts no conversion doubled."""
    if call.name not in FORMATTED or not call.args or not isinstance(call.args[0], A.Str):
        return call
    raw = call.args[0].value
    text = raw.decode("utf-8", "replace")
    for _ in range(text.count("%")):
        try:
            P.parse(text)
            break
        except P.FormatError as err:
            lone = str(err).startswith(("invalid conversion", "the format ends with a lone"))
            if not lone or text[err.offset] != "%":
                break       # the shared check says why
            text = text[:err.offset] + "%" + text[err.offset:]
    value = text.encode("utf-8")
    if value == raw.decode("utf-8", "replace").encode("utf-8"):
        return call
    return replace(call, args=[replace(call.args[0], value=value), *call.args[1:]])
