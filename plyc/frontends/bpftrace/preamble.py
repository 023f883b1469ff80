"""The script's preamble as bpftrace's preprocessor would leave it on a
kernel with BTF: conditionals evaluated, `#define`d constants collected,
`#include` lines noted.

bpftrace defines BPFTRACE_HAVE_BTF when the kernel has BTF, and its tools
keep their hand-written struct definitions and headers inside
`#ifndef BPFTRACE_HAVE_BTF`; plyc's kernel types always come from BTF, so
that branch is dropped here. What remains active and plyc cannot use yet
(a struct definition, a function-like macro, an `#if` expression) is
reported by name. The #include lines are kept for headers.py, which asks
clang for the constants of those headers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...diag import Collector
from . import ast as A
from .lexer import Lexer, Source

DIRECTIVE = re.compile(r"#\s*([a-z]+)\b\s*(.*)", re.S)
DEFINED = re.compile(r"!?\s*defined\s*\(?\s*([_a-zA-Z]\w*)\s*\)?")


@dataclass
class Preamble:
    constants: dict = field(default_factory=dict)   # name -> A.Int or A.Str (the #define's value)
    includes: list = field(default_factory=list)    # the active #include lines (CText)
    cdefs: list = field(default_factory=list)       # the active struct/union/enum definitions (CText)


def _literal(text: str):
    """A #define's value as a bpftrace literal (A.Int or A.Str), or None."""
    text = text.strip()
    if not text:
        return None
    try:
        lexer = Lexer(Source(text))
        tok = lexer.scan(0)
        neg = tok.kind == "punct" and tok.text == "-"
        if neg:
            tok = lexer.scan(tok.end)
        if lexer.scan(tok.end).kind != "eof":
            return None
    except Exception:       # not a single literal: the caller says so
        return None
    if tok.kind == "int":
        return A.Int(-tok.value if neg else tok.value, text)
    if tok.kind == "str" and not neg:
        return A.Str(tok.value)
    return None


def evaluate(items: list, diag: Collector) -> Preamble:
    out = Preamble()
    defined = {"BPFTRACE_HAVE_BTF"}
    stack: list = []            # per open conditional: [taking now, taken before, the #if item, #else seen]

    def active() -> bool:
        return all(level[0] for level in stack)

    for item in items:
        if item.kind != "preprocessor":
            if active():
                out.cdefs.append(item)      # cdefs.py reads them
            continue
        text = item.text.replace("\\\n", " ")
        m = DIRECTIVE.match(text)
        if not m:
            diag.error("a '#' line with no directive", item.span)
            continue
        word, rest = m.group(1), m.group(2).split("//")[0].strip()
        if word in ("ifdef", "ifndef"):
            taking = (rest.split()[0] in defined if rest else False) == (word == "ifdef")
            stack.append([taking, taking, item, False])
        elif word in ("if", "elif"):
            cond = DEFINED.fullmatch(rest)
            if rest in ("0", "1"):
                value = rest == "1"
            elif cond:
                value = (cond.group(1) in defined) != rest.startswith("!")
            else:
                diag.error(f"#{word} with an expression other than defined(NAME) is not supported by "
                           "plyc yet", item.span)
                value = False
            if word == "if":
                stack.append([value, value, item, False])
            elif not stack or stack[-1][3]:
                diag.error("#elif without #if" if not stack else "#elif after #else", item.span)
            else:
                stack[-1][0] = value and not stack[-1][1]
                stack[-1][1] |= value
        elif word == "else":
            if not stack or stack[-1][3]:
                diag.error("#else without #if" if not stack else "a second #else", item.span)
            else:
                stack[-1][0] = not stack[-1][1]
                stack[-1][1] = stack[-1][3] = True
        elif word == "endif":
            if not stack:
                diag.error("#endif without #if", item.span)
            else:
                stack.pop()
        elif not active():
            continue
        elif word == "include":
            out.includes.append(item)
        elif word == "define":
            m = re.match(r"([_a-zA-Z]\w*)(\()?\s*(.*)", rest, re.S)
            if not m:
                diag.error("#define needs a name", item.span)
            elif m.group(2):
                diag.error("a function-like #define is not supported by plyc yet", item.span)
            else:
                value = _literal(m.group(3))
                if value is None and m.group(3).strip():
                    diag.error(f"#define {m.group(1)} to anything but a number or a string is not "
                               "supported by plyc yet", item.span)
                else:
                    if value is not None:
                        value.span = item.span
                        out.constants[m.group(1)] = value
                    defined.add(m.group(1))
        elif word == "undef":
            defined.discard(rest)
            out.constants.pop(rest, None)
        else:
            diag.error(f"#{word} is not supported by plyc yet", item.span)
    for level in stack:
        diag.error("this conditional has no #endif", level[2].span)
    return out
