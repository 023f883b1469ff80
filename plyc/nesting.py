"""How deeply a script may nest, in every front end: far more than real
scripts do (the deepest of the corpus and Debian's tools nest about 12
levels), and few enough that no recursive walk of the compiler (parsers,
lowering, typing, codegen) reaches Python's recursion limit. Deeper input is
refused with a located error instead of a RecursionError."""
from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

MAX_DEPTH = 100

MESSAGE = f"the script nests more than {MAX_DEPTH} levels deep here"
NOTE = "split the expression with $variables"


def deepest(root, children: Callable[[object], Iterable]) -> Optional[object]:
    """The first node nested deeper than MAX_DEPTH under root, found
    without recursion (children(node): the nodes directly inside it)."""
    todo = [(root, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > MAX_DEPTH:
            return node
        todo.extend((child, depth + 1) for child in children(node))
    return None


# C text that pycparser parses (argdist's expressions, bpftrace's struct
# definitions): its recursive descent takes about 8 Python frames for each
# level of parentheses, so C nests at most this deep. Real definitions and
# argdist's one-line expressions nest a few levels.
C_MAX_DEPTH = 50
C_MESSAGE = f"this C nests more than {C_MAX_DEPTH} levels deep here"

_C_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*|[A-Za-z_$][\w$]*'
                      r'|\d[\w.]*|\+\+|--|->|\S', re.S)
_PREFIX = frozenset("- + ! ~ * & ++ --".split())
# What a prefix operator may follow (else '-' and '*' are binary).
_OPERAND_START = _PREFIX | {"", "(", "[", "{", ",", "="}


def c_too_deep(text: str) -> Optional[tuple]:
    """(start, end) of the token where C text nests (brackets, or prefix
    operators in a row) deeper than C_MAX_DEPTH, else None."""
    depth, run, prev = 0, 0, ""
    for m in _C_TOKEN.finditer(text):
        tok = m.group()
        if tok.startswith(("/*", "//")):
            continue
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}") and depth > 0:
            depth -= 1
        run = run + 1 if tok in _PREFIX and prev in _OPERAND_START else 0
        if depth > C_MAX_DEPTH or run > C_MAX_DEPTH:
            return m.start(), m.end()
        prev = tok if tok in _OPERAND_START else "x"
    return None
