"""printf's format as bpftrace 0.27 reads it: a `%` that starts no
conversion (`50%` at the end, `%\\n`, `x%q`) is printed as it is, where
C's printf (and plyc's shared check) would want `%%`. Published tools write
`printf("... 100%\\n")`. A `%` that does start one (`% d`: the ' ' flag)
is a conversion, as in 0.27; one of ply's that bpftrace has not (`%v`)
is text, as 0.27 prints it."""
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
    text = _foreign_literal(raw.decode("utf-8", "replace"))
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


# ply's conversions that bpftrace has not: 0.27 prints them as written
# (`%v` is text there, not a value)
NOT_BPFTRACE = ("v",)


def _foreign_literal(text: str) -> str:
    """text with the `%` of each conversion bpftrace has not doubled."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("%%", i):
            out.append("%%")
            i += 2
            continue
        m = P.CONV.match(text, i) if text[i] == "%" else None
        if m and m["conv"] in NOT_BPFTRACE:
            out.append("%")
        out.append(text[i])
        i += 1
    return "".join(out)


# --- the shared builtins' rules where bpftrace's differ (Sema's hooks) ------------

# 0.27's types of the values plyc keeps as integers it prints as text
TEXT_TYPES = {"username": "username_t", "errno": "string[{}]", "signal": "string[{}]",
              "syscall": "string[{}]", "mac": "mac_address", "strftime": "timestamp",
              "cgroup_path": "cgroup_path_t"}


def printf_conversions(chk, convs: list, span) -> None:
    """%d, %u, %x print C's int and %ld, %lld longer, as C's (and bpftrace's)
    printf; the flags as 0.27 reads them."""
    for conv in convs:
        conv.use_c_lengths()
        conv.use_bpftrace_flags()


def printf_accepts(chk, conv, x, span) -> bool:
    """0.27's %s prints any integer; a value it types as text refuses %d."""
    if x.type.kind != "int":
        return False
    if conv.conv in "diouxXcp" and x.type.denotes in TEXT_TYPES:
        chk.err(f"unsupported format specifier for type '{TEXT_TYPES[x.type.denotes].format(chk.st.max_strlen)}': "
                f"{conv.conv}", span, "bpftrace 0.27 prints it as text, with %s")
    return conv.conv == "s"
