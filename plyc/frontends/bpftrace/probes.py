"""bpftrace's probe types as the parser knows them: full names, short
names, and how many ':'-separated parts each takes. What a part means is
the lowering's business; here a spec is only split and counted, so a typo
is reported where it was written. With them, what bpftrace's rules say of
each type beyond its provider's facts (how `func` reads, where `usermode`,
`override()` and `uaddr()` may be used, its `probetype` name): the one
place in the front end that names a provider besides specs.py."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProbeType:
    name: str
    short: tuple
    parts: tuple         # allowed numbers of parts after the provider
    usage: str
    # how `func` reads (lower.py): "caller" (the probed address's symbol),
    # "func_ip" (bpf_get_func_ip's), "user" (in a glob: the symbol of the
    # address that fired; else as written), "user_return" (stacks.py's
    # uretprobe_func); "": refused
    func: str = ""
    usermode: bool = False   # its context starts with the probed code's pt_regs
    override: bool = False   # override() changes its return value (bpf_override_return)
    uaddr: str = ""          # uaddr()'s address: "load" (plus the load offset it sees), "fixed"
    probetype: str = ""      # 0.27's `probetype` of it, if not its name


PROBE_TYPES = [
    ProbeType("BEGIN", ("begin",), (0,), "BEGIN", probetype="special"),
    ProbeType("END", ("end",), (0,), "END", probetype="special"),
    ProbeType("kprobe", ("k",), (1, 2), "kprobe[:module]:function[+offset]", func="caller", usermode=True,
              override=True),
    ProbeType("kretprobe", ("kr",), (1, 2), "kretprobe[:module]:function", func="func_ip", usermode=True),
    ProbeType("uprobe", ("u",), (2, 3), "uprobe:binary[:language]:function[+offset]", func="user",
              usermode=True, uaddr="load"),
    ProbeType("uretprobe", ("ur",), (2, 3), "uretprobe:binary[:language]:function", func="user_return",
              usermode=True, uaddr="fixed"),
    ProbeType("usdt", ("U",), (2, 3), "usdt:binary[:namespace]:probe"),
    ProbeType("tracepoint", ("t",), (2,), "tracepoint:category:event"),
    ProbeType("rawtracepoint", ("rt",), (1, 2), "rawtracepoint[:module]:event"),
    ProbeType("kfunc", ("f", "fentry"), (1, 2, 3), "kfunc[:module]:function", func="func_ip", probetype="fentry"),
    ProbeType("kretfunc", ("fr", "fexit"), (1, 2, 3), "kretfunc[:module]:function", func="func_ip",
              probetype="fexit"),
    ProbeType("profile", ("p",), (1, 2), "profile:[us|ms|s|hz:]count", usermode=True),
    ProbeType("interval", ("i",), (1, 2), "interval:[us|ms|s|hz:]count"),
    ProbeType("software", ("s",), (1, 2), "software:event[:count]", usermode=True),
    ProbeType("hardware", ("h",), (1, 2), "hardware:event[:count]", usermode=True),
    ProbeType("watchpoint", ("w",), (3,), "watchpoint:address:length:mode", usermode=True),
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


def of(provider) -> ProbeType:
    """The probe type a provider (plyc/providers) is in bpftrace: of its
    name (a provider bpftrace has no type for has none of its rules)."""
    return BY_NAME.get(provider.name) or ProbeType(provider.name, (), (), provider.name)


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
