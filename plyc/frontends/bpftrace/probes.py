"""bpftrace's probe types as the parser knows them: full names, short
names, and how many ':'-separated parts each takes. What a part means is
the lowering's business; here a spec is only split and counted, so a typo
is reported where it was written."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProbeType:
    name: str
    short: tuple
    parts: tuple         # allowed numbers of parts after the provider
    usage: str


PROBE_TYPES = [
    ProbeType("BEGIN", ("begin",), (0,), "BEGIN"),
    ProbeType("END", ("end",), (0,), "END"),
    ProbeType("kprobe", ("k",), (1, 2), "kprobe[:module]:function[+offset]"),
    ProbeType("kretprobe", ("kr",), (1, 2), "kretprobe[:module]:function"),
    ProbeType("uprobe", ("u",), (2, 3), "uprobe:binary[:language]:function[+offset]"),
    ProbeType("uretprobe", ("ur",), (2, 3), "uretprobe:binary[:language]:function"),
    ProbeType("usdt", ("U",), (2, 3), "usdt:binary[:namespace]:probe"),
    ProbeType("tracepoint", ("t",), (2,), "tracepoint:category:event"),
    ProbeType("rawtracepoint", ("rt",), (1, 2), "rawtracepoint[:module]:event"),
    ProbeType("kfunc", ("f", "fentry"), (1, 2, 3), "kfunc[:module]:function"),
    ProbeType("kretfunc", ("fr", "fexit"), (1, 2, 3), "kretfunc[:module]:function"),
    ProbeType("profile", ("p",), (1, 2), "profile:[us|ms|s|hz:]count"),
    ProbeType("interval", ("i",), (1, 2), "interval:[us|ms|s|hz:]count"),
    ProbeType("software", ("s",), (1, 2), "software:event[:count]"),
    ProbeType("hardware", ("h",), (1, 2), "hardware:event[:count]"),
    ProbeType("watchpoint", ("w",), (3,), "watchpoint:address:length:mode"),
    ProbeType("asyncwatchpoint", ("aw",), (3,), "asyncwatchpoint:address:length:mode"),
    ProbeType("iter", ("it",), (1, 2), "iter:object[:pin]"),
    ProbeType("self", (), (2,), "self:signal:SIGUSR1"),
    ProbeType("test", (), (1,), "test:name"),
    ProbeType("bench", (), (1,), "bench:name"),
]

BY_NAME = {}
for _t in PROBE_TYPES:
    BY_NAME[_t.name] = _t
    for _s in _t.short:
        BY_NAME[_s] = _t


def split_spec(text: str) -> list:
    """Split `provider:a:"b:c"` at the colons outside double quotes and
    outside a leading path's backslash escapes; quotes are dropped."""
    parts, cur, quoted, i = [], [], False, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur.append(text[i + 1])
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == ":" and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts
