"""bcc argdist's probe specifiers:

    {p|r|t|u}:{[library]|category}:function(signature)[:type[,type...]:expr[,expr...][:filter]][#label]

parsed into Specifier values, with argdist's defaults and errors that say
which part is wrong and why."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional


class SpecError(Exception):
    pass


@dataclass
class Param:
    name: str
    type: str            # C type as written, e.g. "struct file *", "size_t"


@dataclass
class Specifier:
    raw: str             # as given, label included
    kind: str            # "freq" (-C) or "hist" (-H)
    probe: str           # p r t u
    library: str         # library/binary for user probes, category for t, "" for kernel
    function: str
    params: list = field(default_factory=list)
    types: list = field(default_factory=list)
    exprs: list = field(default_factory=list)
    filter: str = ""
    label: Optional[str] = None
    default_expr: bool = False

    @property
    def is_user(self) -> bool:
        return self.probe in ("p", "r") and bool(self.library)

    def param(self, name: str) -> Optional[tuple]:
        for i, p in enumerate(self.params):
            if p.name == name:
                return i, p
        return None


def split_top(text: str, sep: str) -> list:
    """Split on `sep` outside parentheses, brackets and string literals
    (argdist splits on every separator; this also takes `f(a, b)`)."""
    parts, depth, cur, quote = [], 0, "", False
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == "\\" and i + 1 < len(text):
                cur += text[i + 1]
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
            cur += c
        elif c in "([":
            depth += 1
            cur += c
        elif c in ")]":
            depth -= 1
            cur += c
        elif c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return parts


def parse_signature(sig: str, raw: str) -> list:
    params = []
    for p in (s.strip() for s in sig.split(",")):
        if not p or p == "void":
            continue
        # The * may stick to the name: "char *buf"; arrays are not supported.
        idx = p.rfind("*")
        idx = idx if idx != -1 else p.rfind(" ")
        ptype, pname = p[:idx + 1].strip(), p[idx + 1:].strip()
        if not ptype or not re.fullmatch(r"[A-Za-z_]\w*", pname):
            raise SpecError(f"error parsing probe '{raw}': parameter '{p}' must be written 'type name'")
        params.append(Param(pname, re.sub(r"\s+", " ", ptype.replace("*", " *")).replace(" *", " *").strip()))
    return params


def parse(raw: str, kind: str) -> Specifier:
    def bail(msg: str):
        raise SpecError(f"error parsing probe '{raw}': {msg}")

    spec, _, label = raw.partition("#")
    parts = split_top(spec.strip(), ":")
    if len(parts) < 3:
        bail("at least the probe type, library, and function signature must be specified")
    if len(parts) > 6:
        bail("extraneous ':'-separated parts detected")
    probe = parts[0]
    if probe not in ("p", "r", "t", "u"):
        bail(f"probe type must be 'p', 'r', 't', or 'u' but got '{probe}'")
    m = re.fullmatch(r"\s*([\w.]+)\s*(?:\((.*)\))?\s*", parts[2])
    if m is None or (probe in ("p", "r") and m.group(2) is None):
        bail(f"function signature '{parts[2]}' has an invalid format")
    if probe == "t" and not parts[1]:
        bail("a tracepoint needs its category: t:category:event")
    if probe == "u" and not parts[1]:
        bail("a USDT probe needs its library or binary: u:library:probe")
    s = Specifier(raw, kind, probe, parts[1], m.group(1), label=label.strip() or None if label else None)
    s.params = parse_signature(m.group(2) or "", raw)
    s.default_expr = len(parts) < 5
    if not s.default_expr:
        if not parts[3].strip():
            bail("no expr types specified")
        if not parts[4].strip():
            bail("no exprs specified")
        s.types = [t.strip() for t in split_top(parts[3], ",")]
        s.exprs = [e.strip() for e in split_top(parts[4], ",")]
        if len(s.exprs) != len(s.types):
            bail(f"mismatched # of exprs and types ({len(s.exprs)} exprs, {len(s.types)} types)")
        if kind == "hist" and len(s.exprs) > 1:
            bail("histograms can only have 1 expr")
        if any(not e for e in s.exprs):
            bail("an expression is empty")
    elif len(parts) == 4:
        bail("a type needs an expression: give type:expr")
    else:
        if probe != "r" and kind == "hist":
            bail("histograms must have expr")
        s.types = ["u64" if probe != "r" else "int"]
        s.exprs = ["1" if probe != "r" else "$retval"]
    s.filter = parts[5].strip() if len(parts) == 6 else ""
    if probe != "r" and any("$retval" in e for e in s.exprs + [s.filter]):
        bail("$retval is only available in return probes (r)")
    if probe != "r" and any(re.search(r"\$(entry|latency)\b", e) for e in s.exprs + [s.filter]):
        bail("$entry() and $latency are only available in return probes (r)")
    for ename in re.findall(r"\$entry\((\w+)\)", " ".join(s.exprs + [s.filter])):
        if s.param(ename) is None:
            bail(f"$entry({ename}): no such param")
    return s
