"""bcc argdist's probe specifiers:

    {p|r|t|u}:{[library]|category}:function(signature)[:type[,type...]:expr[,expr...][:filter]][#label]

parsed into Specifier values, with argdist's defaults and argdist's reasons
for refusing one. Every part keeps its place in the text the user typed
(offsets into `raw`), so an error can point at the part that is wrong."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .cparse import ANNOTATIONS, KEYWORDS, CSyntaxError, parse_param, tokens, type_words


class SpecError(Exception):
    """A refused specifier: argdist's reason, and where in the specifier.
    `spec` is None for errors of the command line as a whole."""

    def __init__(self, message: str, spec: Optional["Specifier"] = None, start: Optional[int] = None,
                 end: Optional[int] = None, note: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.spec = spec
        self.start = start
        self.end = end
        self.note = note


@dataclass
class Part:
    """A piece of the specifier: its text and where it starts in `raw`."""
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass
class Param:
    name: str
    type: str            # C type as written, e.g. "struct file *", "size_t"
    decl: object         # the pycparser declaration
    user: bool           # declared __user: points into user memory
    part: Part


@dataclass
class Specifier:
    raw: str             # as given, label included
    kind: str            # "freq" (-C) or "hist" (-H)
    probe: str           # p r t u
    library: str         # library/binary for user probes, category for t, "" for kernel
    function: str
    option: str = "-C"   # the option that gave it
    number: int = 1      # its place among that option's specifiers
    params: list = field(default_factory=list)
    types: list = field(default_factory=list)     # Parts
    exprs: list = field(default_factory=list)     # Parts
    filter: Optional[Part] = None
    label: Optional[str] = None
    default_expr: bool = False
    where: Optional[Part] = None                  # library:function, for probe errors

    @property
    def is_user(self) -> bool:
        return self.probe in ("p", "r") and bool(self.library)

    @property
    def name(self) -> str:
        return f"{self.option} #{self.number}"

    def param(self, name: str) -> Optional[tuple]:
        for i, p in enumerate(self.params):
            if p.name == name:
                return i, p
        return None

    def error(self, message: str, part=None, note: Optional[str] = None, end: Optional[int] = None):
        """A SpecError at `part` (a Part, an offset, or the whole specifier)."""
        if isinstance(part, Part):
            return SpecError(message, self, part.start, part.end, note)
        if isinstance(part, int):
            return SpecError(message, self, part, end if end is not None else part + 1, note)
        return SpecError(message, self, 0, len(self.raw), note)


def probe_spec(spec: Specifier, entry: bool = False) -> tuple:
    """(provider, target) of the probe a specifier runs in (or its entry probe):
    argdist's four kinds (p r t u) as the providers plyc has (plyc/providers)."""
    ret = spec.probe == "r" and not entry
    if spec.probe == "t":
        return "tracepoint", f"{spec.library}/{spec.function}"
    if spec.probe == "u":
        return "usdt", f"{spec.library}:{spec.function}"
    if spec.library:
        return ("uretprobe" if ret else "uprobe"), f"{spec.library}:{spec.function}"
    return ("kretprobe" if ret else "kprobe"), spec.function


def split_top(text: str, sep: str, base: int = 0) -> list:
    """Parts of `text` split on `sep` outside parentheses, brackets and
    string literals (argdist splits on every separator; this also takes
    `f(a, b)`), each with its offset (plus `base`)."""
    parts, depth, cur, start, quote = [], 0, "", 0, False
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
            parts.append(Part(cur, base + start))
            cur, start = "", i + 1
        else:
            cur += c
        i += 1
    parts.append(Part(cur, base + start))
    return parts


def strip(part: Part) -> Part:
    lead = len(part.text) - len(part.text.lstrip())
    return Part(part.text.strip(), part.start + lead)


def parse_signature(sig: Part, s: Specifier) -> list:
    params = []
    for p in split_top(sig.text, ",", sig.start):
        p = strip(p)
        if not p.text or p.text == "void":
            continue
        # Kernel annotations aren't C: blank them (keeping offsets).
        text, user = p.text, False
        for word in ANNOTATIONS:
            if re.search(rf"\b{word}\b", text):
                user = user or word == "__user"
                text = re.sub(rf"\b{word}\b", " " * len(word), text)
        # The name is one of the identifiers (the last one, but for function
        # pointers: `void (*fn)(int)`); the others are type names.
        idents = [t for t, _ in tokens(text) if re.fullmatch(r"[A-Za-z_]\w*", t) and t not in KEYWORDS]
        parsed, first_err = None, None
        for name in reversed(idents):
            try:
                parsed = parse_param(text, type_words(text) - {name})
            except CSyntaxError as err:
                first_err = first_err or err
                continue
            if parsed.node.name == name:
                break
            parsed = None
        if parsed is None or not type_words(text) - {parsed.node.name} and \
                not re.search(r"\b(struct|union|enum|char|short|int|long|float|double|void|signed|unsigned|_Bool)\b",
                              text):
            if first_err is not None and len(idents) >= 2:
                raise s.error(f"parameter '{p.text}' is not a C declaration: {first_err}", p)
            raise s.error(f"parameter '{p.text}' must be written 'type name'", p)
        decl = parsed.node
        if not decl.name:
            raise s.error(f"parameter '{p.text}' must be written 'type name'", p)
        ctype = re.sub(rf"\b{decl.name}\b(?!.*\b{decl.name}\b)", "", text)     # the text without the name
        params.append(Param(decl.name, " ".join(ctype.replace("*", " * ").split()), decl, user, p))
    return params


def check_label_separator(s: Specifier, part: Part):
    """argdist's label comes after '#'; a ';' (older argdist's separator) in
    an expression is a label written the old way."""
    quote = False
    for i, c in enumerate(part.text):
        if c == '"':
            quote = not quote
        elif c == ";" and not quote:
            label = part.text[i + 1:].strip()
            raise s.error("';' is not argdist's label separator: a label comes after '#'",
                          part.start + i, note=f"write '#{label}'" if label else
                          "older argdist versions took ';'")


def parse(raw: str, kind: str, option: str = "-C", number: int = 1) -> Specifier:
    s = Specifier(raw, kind, "", "", "", option=option, number=number)
    spec_text, hash_, label = raw.partition("#")
    s.label = (label.strip() or None) if hash_ else None
    body = strip(Part(spec_text, 0))
    parts = split_top(body.text, ":", body.start)
    if len(parts) < 3:
        raise s.error("at least the probe type, library, and function signature must be specified",
                      body if body.text else None)
    if len(parts) > 6:
        raise s.error("extraneous ':'-separated parts detected", parts[6].start - 1, end=body.end)
    probe = parts[0].text
    if probe not in ("p", "r", "t", "u"):
        raise s.error(f"probe type must be 'p', 'r', 't', or 'u' but got '{probe}'", parts[0])
    s.probe = probe
    m = re.fullmatch(r"\s*([\w.]+)\s*(?:\((.*)\))?\s*", parts[2].text, re.S)
    if m is None or (probe in ("p", "r") and m.group(2) is None):
        raise s.error(f"function signature '{parts[2].text}' has an invalid format", parts[2])
    if probe == "t" and not parts[1].text:
        raise s.error("a tracepoint needs its category: t:category:event", parts[1].start - 1, end=parts[2].end)
    if probe == "u" and not parts[1].text:
        raise s.error("a USDT probe needs its library or binary: u:library:probe", parts[1].start - 1,
                      end=parts[2].end)
    s.library, s.function = parts[1].text, m.group(1)
    s.where = Part(body.text[parts[1].start - body.start:parts[2].start - body.start + m.end(1)], parts[1].start)
    if m.group(2) is not None and probe in ("p", "r"):
        # (argdist ignores a tracepoint's or a USDT probe's signature.)
        s.params = parse_signature(Part(m.group(2), parts[2].start + m.start(2)), s)
    s.default_expr = len(parts) < 5
    for p in parts[3:]:
        check_label_separator(s, p)
    if not s.default_expr:
        if not parts[3].text.strip():
            raise s.error("no expr types specified", parts[3].start - 1, end=parts[3].start)
        if not parts[4].text.strip():
            raise s.error("no exprs specified", parts[4].start - 1, end=parts[4].start)
        s.types = [strip(t) for t in split_top(parts[3].text, ",", parts[3].start)]
        s.exprs = [strip(e) for e in split_top(parts[4].text, ",", parts[4].start)]
        if len(s.exprs) != len(s.types):
            raise s.error(f"mismatched # of exprs and types ({len(s.exprs)} exprs, {len(s.types)} types)",
                          Part(raw[parts[3].start:parts[4].end], parts[3].start))
        if kind == "hist" and len(s.exprs) > 1:
            raise s.error("histograms can only have 1 expr", parts[4])
        for t in s.types:
            if not t.text:
                raise s.error("a type is empty", t.start - 1, end=t.start)
        for e in s.exprs:
            if not e.text:
                raise s.error("an expression is empty", e.start - 1, end=e.start)
    elif len(parts) == 4:
        raise s.error("a type needs an expression: give type:expr", parts[3].start - 1, end=parts[3].end)
    else:
        if probe != "r" and kind == "hist":
            raise s.error("histograms must have expr", body)
        # argdist's defaults: count calls, or the return value of a return probe.
        s.types = [Part("u64" if probe != "r" else "int", -1)]
        s.exprs = [Part("1" if probe != "r" else "$retval", -1)]
    s.filter = strip(parts[5]) if len(parts) == 6 else None
    if s.filter is not None and not s.filter.text:
        s.filter = None
    return s
