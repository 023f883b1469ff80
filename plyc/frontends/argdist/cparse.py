"""The C in argdist's specifiers, parsed with pycparser: parameters of the
signature, key types, expressions and filters, each with its place in the
specifier (offsets into the text the user typed) so errors can point at it.

pycparser needs to know which names are types before it parses a cast
(`(gfp_t)flags`); argdist's fragments name types the parser has not seen,
so each fragment gets a preamble of typedefs: the names argdist users
write (u32, size_t, ...) and the unknown names used where only a type can
be. What a name really is (a kernel or a libc type) is decided later, by
plyc/frontends/argdist/ctypes.py."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from pycparser import c_ast, c_parser

from ... import cparser
from ...nesting import C_MESSAGE, MAX_DEPTH, c_too_deep, deepest

# C's own keywords that may appear in a type or an expression.
KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "_Bool", "_Complex", "_Alignof", "_Atomic",
}
# Kernel annotations in signatures: not C, dropped before parsing (`__user`
# is remembered: such a pointer points into user memory).
ANNOTATIONS = ("__user", "__kernel", "__force", "__iomem", "__rcu", "__percpu", "__must_check",
               "__restrict", "__restrict__")

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z_$][\w$]*|\d[\w.]*|->|\S', re.S)
IDENT = re.compile(r"[A-Za-z_$][\w$]*")


class CSyntaxError(Exception):
    """A fragment that is not C: `offset` (into the fragment) is where, when known."""

    def __init__(self, message: str, offset: Optional[int] = None, end: Optional[int] = None):
        super().__init__(message)
        self.offset = offset
        self.end = end


@dataclass
class Parsed:
    """A parsed fragment and how to find its nodes in the fragment's text."""
    node: object
    text: str
    first_line: int     # the line of the wrapper where the fragment starts

    def offset(self, coord) -> Optional[int]:
        """The offset in `text` of a pycparser coordinate."""
        if coord is None or coord.line < self.first_line:
            return None
        line = coord.line - self.first_line
        starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        if line >= len(starts):
            return None
        return starts[line] + (coord.column or 1) - 1

    def span(self, node) -> tuple:
        """(start, end) offsets of a node in `text`: from its first token to
        its last, closing parentheses and brackets included."""
        start, end = None, None
        for n in _walk(node):
            off = self.offset(getattr(n, "coord", None))
            if off is None:
                continue
            start = off if start is None else min(start, off)
            width = _token_width(n, self.text, off)
            end = off + width if end is None else max(end, off + width)
        if start is None:
            return 0, len(self.text)
        # A prefix operator's coordinate is its operand's: take the operator in.
        for n in _walk(node):
            if isinstance(n, c_ast.UnaryOp) and not n.op.startswith("p"):
                before = self.text[:start].rstrip()
                op = n.op.lstrip("p")
                if before.endswith(op):
                    start = len(before) - len(op)
            else:
                break
        # Close what the node opened: `f(x)`, `a[1]`, `(char *)p`.
        depth = sum(1 for c in self.text[start:end] if c in "([") - \
            sum(1 for c in self.text[start:end] if c in ")]")
        while depth > 0 and end < len(self.text):
            c = self.text[end]
            end += 1
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
        return start, end


def _walk(node):
    yield node
    for _, child in node.children():
        yield from _walk(child)


def _token_width(node, text: str, off: int) -> int:
    if isinstance(node, c_ast.ID):
        return len(node.name)
    if isinstance(node, c_ast.Constant):
        return len(node.value)
    m = TOKEN.match(text, off)
    return len(m.group(0)) if m else 1


def tokens(text: str) -> list:
    """(token, offset) pairs of a C fragment."""
    return [(m.group(0), m.start()) for m in TOKEN.finditer(text)]


def type_words(text: str) -> set:
    """Names in a type written by the user that must be typedef names for
    pycparser (not keywords, not struct/union/enum tags)."""
    names, prev = set(), ""
    for tok, _ in tokens(text):
        if IDENT.fullmatch(tok) and tok not in KEYWORDS and prev not in ("struct", "union", "enum"):
            names.add(tok)
        prev = tok
    return names


OPERAND_START = re.compile(r"[A-Za-z_$\d(!~\"']")


def cast_names(text: str, values: set) -> set:
    """Names used as types in casts: `(name)` or `(name *)` followed by an
    operand, where name is not a known value (a parameter, a field)."""
    toks = tokens(text)
    names = set()
    for i, (tok, _) in enumerate(toks):
        if tok != "(" or i + 2 >= len(toks):
            continue
        j = i + 1
        words = []
        while j < len(toks) and (IDENT.fullmatch(toks[j][0]) and toks[j][0] not in ("sizeof",)):
            words.append(toks[j][0])
            j += 1
        while j < len(toks) and toks[j][0] == "*":
            j += 1
        if not words or j >= len(toks) or toks[j][0] != ")" or j + 1 >= len(toks):
            continue
        if not OPERAND_START.match(toks[j + 1][0]):
            continue
        for w, prev in zip(words, [""] + words):
            if w not in KEYWORDS and w not in values and prev not in ("struct", "union", "enum") \
                    and not w.startswith("$"):
                names.add(w)
    return names


def _preamble(typenames) -> str:
    return "".join(f"typedef int {n};\n" for n in sorted(typenames) if IDENT.fullmatch(n) and n not in KEYWORDS)


def _check_depth(text: str):
    """CSyntaxError where text nests too deeply for pycparser's recursion."""
    deep = c_too_deep(text)
    if deep is not None:
        raise CSyntaxError(C_MESSAGE, *deep)


def _check_tree(parsed: "Parsed", root):
    """CSyntaxError at the first node nested deeper than nesting.MAX_DEPTH
    (a chain of binary operators: pycparser builds it without recursion)."""
    deep = deepest(root, lambda n: [c for _, c in n.children()])
    if deep is not None:
        off = parsed.offset(getattr(deep, "coord", None))
        raise CSyntaxError(f"this C nests more than {MAX_DEPTH} levels deep here", off,
                           off + 1 if off is not None else None)


def _parse(source: str, text: str, first_line: int):
    _check_depth(text)
    try:
        return cparser.parse(source, "<argdist>")
    except c_parser.ParseError as err:
        msg = str(err)
        m = re.match(r"<argdist>:(\d+):(\d+): (.*)", msg)
        if m and int(m.group(1)) >= first_line:
            p = Parsed(None, text, first_line)

            class _C:
                line, column = int(m.group(1)), int(m.group(2))
            off = p.offset(_C)
            what = m.group(3)
            if what.startswith("before: "):
                tok = what[len("before: "):]
                raise CSyntaxError(f"unexpected '{tok}'", off, off + len(tok) if off is not None else None)
            raise CSyntaxError(what, off)
        raise CSyntaxError(re.sub(r"^<argdist>(:\d+:\d+)?: ", "", msg).lower())


def parse_expr(text: str, typenames) -> Parsed:
    """One C expression (argdist's expr or filter)."""
    pre = _preamble(typenames)
    first = pre.count("\n") + 2
    source = f"{pre}void __plyc_expr(void) {{\n{text}\n;}}\n"
    unit = _parse(source, text, first)
    body = unit.ext[-1].body.block_items or []
    if len(body) != 1 or not isinstance(body[0], c_ast.Node) or isinstance(
            body[0], (c_ast.Decl, c_ast.Compound, c_ast.If, c_ast.Return)):
        raise CSyntaxError("not a C expression")
    parsed = Parsed(body[0], text, first)
    _check_tree(parsed, body[0])
    return parsed


def parse_param(text: str, typenames) -> Parsed:
    """One parameter declaration of a signature: `struct file *file`."""
    pre = _preamble(typenames)
    first = pre.count("\n") + 1
    unit = _parse(f"{pre}{text}\n;\n", text, first)
    decls = unit.ext[len([n for n in typenames if IDENT.fullmatch(n) and n not in KEYWORDS]):]
    if len(decls) != 1 or not isinstance(decls[0], c_ast.Decl):
        raise CSyntaxError("not one parameter")
    return Parsed(decls[0], text, first)


def parse_type(text: str, typenames) -> Parsed:
    """A type name (argdist's key types: `u32`, `char*`, `unsigned long`)."""
    pre = _preamble(typenames)
    first = pre.count("\n") + 2
    unit = _parse(f"{pre}void __plyc_type(void) {{\n(void)sizeof({text}\n);}}\n", text, first)
    stmt = unit.ext[-1].body.block_items[0]
    node = stmt.expr if isinstance(stmt, c_ast.Cast) else None
    if not isinstance(node, c_ast.UnaryOp) or not isinstance(node.expr, c_ast.Typename):
        raise CSyntaxError("not a type")
    return Parsed(node.expr, text, first)


# --- integer constants ---------------------------------------------------------

def int_constant(value: str) -> tuple:
    """(value, unsigned, long-ness) of a C integer literal: 0x10UL, 017, 42."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)([uUlL]*)", value)
    if m is None:
        raise ValueError(value)
    digits, suffix = m.groups()
    if digits[:2] in ("0x", "0X"):
        v = int(digits, 16)
    elif digits[:2] in ("0b", "0B"):
        v = int(digits[2:], 2)
    elif digits[0] == "0" and len(digits) > 1:
        v = int(digits, 8)
    else:
        v = int(digits)
    s = suffix.lower()
    return v, "u" in s, s.count("l")


def char_constant(value: str) -> int:
    body = value[1:-1]
    if body.startswith("\\"):
        esc = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11}
        if body[1:2] == "x":
            return int(body[2:], 16)
        if body[1:].isdigit():
            return int(body[1:], 8)
        return esc.get(body[1:2], ord(body[1:2] or "\\"))
    return ord(body) if len(body) == 1 else 0
