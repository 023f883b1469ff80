"""A positional parameter bpftrace 0.27 types by its value: `print(($1,
$2))` run with `p1 20` prints `(p1, 20)`, as 0.27 compiles the script
knowing its arguments. plyc compiles before they are given, so a `$N`
whose every use only prints it (print()'s value or a member of the tuple
print() is given, a printf argument of a %s conversion) is read as the
text given, str($N): a word prints as the word, a decimal number as the
number. A `$N` used anywhere else (arithmetic, a comparison, a map, a %d)
stays a number, the tracer refusing a word at start-up, as before.
An integer written otherwise (`0x14`, `+5`, `007`) prints as written
(0.27 prints the number, 20): docs/bpftrace.md."""
from __future__ import annotations

from ... import printf
from . import ast as A
from .trees import const_value, walk


def _printed(call: A.Call) -> list:
    """The Positional nodes a print() or printf() call only prints."""
    if call.name == "print" and len(call.args) == 1:
        arg = call.args[0]
        if isinstance(arg, A.Positional):
            return [arg]
        if isinstance(arg, A.Tuple) and not arg.names:
            return [i for i in arg.items if isinstance(i, A.Positional)]
        return []
    if call.name == "printf" and call.args and isinstance(call.args[0], A.Str):
        try:
            convs = [p for p in printf.parse(call.args[0].value.decode("utf-8", "replace"))
                     if isinstance(p, printf.Conv)]
        except printf.FormatError:
            return []
        return [a for c, a in zip(convs, call.args[1:]) if c.conv == "s" and isinstance(a, A.Positional)]
    return []


def text_uses(program: A.Program) -> set:
    """The ids of the Positional nodes read as text: those of each $N
    (N > 0) that is only ever printed."""
    printed, everywhere = {}, {}
    for probe in program.probes:
        for n in walk([probe.predicate, probe.body]):
            if isinstance(n, A.Call):
                for p in _printed(n):
                    printed.setdefault(p.index, set()).add(id(p))
            elif isinstance(n, A.Positional) and n.index > 0:
                everywhere.setdefault(n.index, set()).add(id(n))
    out = set()
    for index, uses in everywhere.items():
        if uses == printed.get(index, set()):
            out |= uses
    return out


# printf's conversions that print a 64-bit value's bits alike whether it is
# read signed or not: a $N only printed by them may be beyond INT64_MAX
WIDE_CONVS, WIDE_LENGTHS = "ouxX", ("l", "ll", "j", "z", "t")


def wide_args(program: A.Program) -> list:
    """The $N (N > 0) the tracer may be given beyond INT64_MAX, up to
    UINT64_MAX (`0xffffffffffffffff`): those only ever printed by a 64-bit
    unsigned conversion (%lu, %llx), which prints what 0.27's does. 0.27
    types such a $N uint64 (it compiles knowing the value), where plyc's
    $N is an int64: anywhere else (print(), a comparison, arithmetic, a
    map) the tracer refuses the value, as it did."""
    wide, everywhere = {}, {}
    for probe in program.probes:
        for n in walk([probe.predicate, probe.body]):
            if isinstance(n, A.Call) and n.name == "printf" and n.args and isinstance(n.args[0], A.Str):
                try:
                    convs = [p for p in printf.parse(n.args[0].value.decode("utf-8", "replace"))
                             if isinstance(p, printf.Conv)]
                except printf.FormatError:
                    continue
                for c, a in zip(convs, n.args[1:]):
                    if isinstance(a, A.Positional) and c.conv in WIDE_CONVS and c.length in WIDE_LENGTHS:
                        wide.setdefault(a.index, set()).add(id(a))
            elif isinstance(n, A.Positional) and n.index > 0:
                everywhere.setdefault(n.index, set()).add(id(n))
    return sorted(i for i, uses in everywhere.items() if uses == wide.get(i, set()))


# Past any text a tracer takes as $N (the C keeps it in .rodata): a larger
# n skips all of it as well, and is no C literal past 2^63.
TEXT_SKIP_MAX = 1 << 20


def text_offset(e):
    """(the $N, n) of `$N + n` (n a constant, not negative), which str()
    reads as $N's text from its byte n on, as 0.27 does (its docs:
    str($1 + 1) of "hello" is "ello"); else None. n is at most
    TEXT_SKIP_MAX (the same empty text)."""
    if isinstance(e, A.Binary) and e.op == "+":
        for pos, k in ((e.left, e.right), (e.right, e.left)):
            n = const_value(k)
            if isinstance(pos, A.Positional) and pos.index > 0 and n is not None and n >= 0:
                return pos, min(n, TEXT_SKIP_MAX)
    return None
