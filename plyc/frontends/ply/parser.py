"""ply source text to ast.Program: lark (LALR, positions) plus a transformer, with
lark's exceptions turned into located, named diagnostics."""
from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from copy import copy
from importlib import resources
from pathlib import Path
from typing import Optional

from lark import Lark, Token, Transformer_NonRecursive, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast
from ...diag import Diagnostic, PlycError
# Deeper expressions or statements are refused: the later stages walk the
# tree recursively, and no real script comes near it.
from ...nesting import MESSAGE, NOTE, deepest

STRING_ESCAPES = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", '"': b'"', "0": b"\0",
                  "a": b"\a", "b": b"\b", "f": b"\f", "v": b"\v", "'": b"'"}

# What users call the tokens, for "expected ..." messages.
TOKEN_NAMES = {
    "SEMICOLON": "';'", "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'",
    "LSQB": "'['", "RSQB": "']'", "COMMA": "','", "EQUAL": "'='", "NAME": "a name",
    "NUMBER": "a number", "STRING": "a string", "SPEC": "a probe (provider:argument)",
    "BEGIN": "BEGIN", "END": "END", "PRED_END": "'/' closing the predicate",
    "AGGNAME": "an @map", "DOLLAR": "a $variable", "COLON": "':'", "QMARK": "'?'",
    "SLASH": "'/'", "IF": "'if'", "ELSE": "'else'", "RETURN": "'return'",
    "DELETE": "'delete'", "STAR": "'*'", "DIVOP": "an operator", "ADDOP": "an operator",
    "BOR": "'|'", "BXOR": "'^'", "BAND": "'&'", "SIZEOF": "'sizeof'",
}

class _PostLex:
    """Lets UNTERMINATED_COMMENT (used by no rule) through in every lexer
    state, so the parser stops on it and it is reported as such."""
    always_accept = ("UNTERMINATED_COMMENT",)

    def process(self, stream):
        return stream


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    """The parser, from plyc's cache when this grammar was built before:
    building it (strict mode's terminal-collision check above all) costs
    more than the rest of a small script's compile."""
    grammar = resources.files("plyc.frontends.ply").joinpath("grammar.lark").read_text()
    options = dict(parser="lalr", lexer="contextual", propagate_positions=True,
                   maybe_placeholders=True, strict=True, postlex=_PostLex())
    cached = _grammar_cache(grammar)
    if cached is None:
        return Lark(grammar, **options)
    from ...cachedir import untrusted_file
    if untrusted_file(cached) is None:
        return Lark(grammar, cache=str(cached), **options)
    # Absent, or a file lark must not unpickle (not ours, writable by
    # others, a link): built afresh, and a file of our own put in its place.
    # lark writes its cache in place: a private file, renamed into place
    # once complete, keeps parallel builds from reading half of one.
    tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    parser = Lark(grammar, cache=str(tmp), **options)
    try:
        os.chmod(tmp, 0o644)      # whatever the umask: the check above passes it next time
        os.replace(tmp, cached)
    except OSError:
        pass
    return parser


def _grammar_cache(grammar: str) -> Optional[Path]:
    """Where this grammar's parser is kept (lark also checks the grammar's
    hash when it loads one); None without a cache folder (the parser is
    then built each time)."""
    import lark
    from ...cachedir import ToolchainError, cache_dir
    key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:16]
    try:
        return cache_dir() / f"ply-grammar-{key}.lark"
    except ToolchainError:
        return None


def _span(meta_or_token) -> ast.Span:
    m = meta_or_token
    if getattr(m, "empty", False):
        return ast.NOSPAN
    return ast.Span(m.line, m.column, m.end_line, m.end_column)


def parse_int(text: str) -> int:
    """The value of an integer literal; ValueError if it has a bad digit."""
    t = text.replace("_", "")
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t[1:], 8)
    return int(t)


def bad_int(text: str, span: ast.Span) -> Diagnostic:
    """Why an integer literal that parse_int refused is wrong."""
    t = text.replace("_", "")
    if t[:2].lower() == "0x":
        kind, digits, body = "hexadecimal", "0123456789abcdefABCDEF", t[2:]
    elif t[:2].lower() == "0b":
        kind, digits, body = "binary", "01", t[2:]
    elif len(t) > 1 and t[0] == "0" and t.isdigit():
        kind, digits, body = "octal", "01234567", t[1:]
    else:
        kind, digits, body = "decimal", "0123456789", t
    if not body:
        return Diagnostic(f"{kind} constant '{text}' has no digits", span)
    bad = next((c for c in body if c not in digits), body[0])
    if kind == "octal":
        return Diagnostic(f"invalid digit '{bad}' in octal constant '{text}'", span,
                          note="a number that starts with 0 is octal; drop the leading 0 for decimal")
    if bad.isdigit() or kind == "hexadecimal" or kind == "binary":
        return Diagnostic(f"invalid digit '{bad}' in {kind} constant '{text}'", span)
    return Diagnostic(f"invalid suffix '{body[body.index(bad):]}' on integer constant '{text}'", span,
                      note="integers have no suffixes; units go in probe arguments (interval:500ms)")


def unescape(body: str, span: ast.Span) -> bytes:
    """The bytes of a string literal's body; `span` is the whole literal's
    (one line: a STRING token never holds a newline)."""
    def at(i: int, width: int) -> ast.Span:
        col = span.col + 1 + i
        return ast.Span(span.line, col, span.line, col + width)

    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "x":
            digits = ""
            while len(digits) < 2 and i + 2 + len(digits) < len(body) and \
                    body[i + 2 + len(digits)] in "0123456789abcdefABCDEF":
                digits += body[i + 2 + len(digits)]
            if not digits:
                raise PlycError(Diagnostic("\\x used with no following hex digits", at(i, 2),
                                           note="write a byte as \\xNN, e.g. \\x1b"))
            out.append(int(digits, 16))
            i += 2 + len(digits)
        elif nxt in STRING_ESCAPES:
            out += STRING_ESCAPES[nxt]
            i += 2
        else:
            raise PlycError(Diagnostic(f"unknown escape sequence '\\{nxt}' in string", at(i, 2),
                                       note="escapes are \\n \\t \\r \\0 \\a \\b \\f \\v \\\\ \\\" \\' \\xNN"))
    return bytes(out)


@v_args(meta=True)
class ToAst(Transformer_NonRecursive):
    def start(self, meta, probes):
        return ast.Program(probes, span=_span(meta))

    def probe(self, meta, children):
        specs, pred, body = children
        return ast.Probe(specs, pred, body, span=_span(meta))

    def specs(self, meta, specs):
        return specs

    def spec(self, meta, children):
        tok = children[0]
        if tok.type == "SPEC":
            provider, _, arg = str(tok).partition(":")
        else:
            provider, arg = str(tok), ""
        return ast.Spec(provider, arg, span=_span(tok))

    def predicate(self, meta, children):
        return children[0]

    def block(self, meta, stmts):
        return ast.Block([s for s in stmts if s is not None], span=_span(meta))

    def if_only(self, meta, children):
        cond, then = children
        return ast.If(cond, then, None, span=_span(meta))

    def if_else(self, meta, children):
        cond, then, other = children
        return ast.If(cond, then, other, span=_span(meta))

    def expr_stmt(self, meta, children):
        return ast.ExprStmt(children[0], span=_span(meta))

    def assign(self, meta, children):
        target, value = children
        return ast.Assign(target, value, span=_span(meta))

    def aug_assign(self, meta, children):
        # `a += b` is `a = a + b`: the target is read and written once each.
        target, op, value = children
        binop = ast.Binary(str(op)[:-1], target, value, span=value.span)
        return ast.Assign(target, binop, span=_span(meta))

    def return_stmt(self, meta, children):
        return ast.Return(span=_span(meta))

    def delete_stmt(self, meta, children):
        return ast.Delete(children[0], span=_span(meta))

    def empty_stmt(self, meta, children):
        return ast.Block([], span=_span(meta))

    def ternary(self, meta, children):
        cond, then, other = children
        return ast.Ternary(cond, then, other, span=_span(meta))

    def binop(self, meta, children):
        left, op, right = children
        return ast.Binary(str(op), left, right, span=_span(meta))

    def unop(self, meta, children):
        op, operand = children
        return ast.Unary(str(op), operand, span=_span(meta))

    def cast(self, meta, children):
        type_name, operand = children
        return ast.Cast(type_name, operand, span=_span(meta))

    def sizeof(self, meta, children):
        return ast.SizeOf(children[0], span=_span(meta))

    def member(self, meta, children):
        obj, *rest = children
        arrow = len(rest) == 2
        field = rest[-1]
        return ast.Member(obj, str(field), arrow, span=_span(meta))

    def member_index(self, meta, children):
        obj, *rest = children
        arrow = len(rest) == 3
        field, index = rest[-2], rest[-1]
        member = ast.Member(obj, str(field), arrow, span=_span(meta))
        return ast.Index(member, index, span=_span(meta))

    def number(self, meta, children):
        text = str(children[0])
        try:
            value = parse_int(text)
        except ValueError:
            raise PlycError(bad_int(text, _span(meta))) from None
        return ast.Num(value, span=_span(meta))

    def string(self, meta, tokens):
        sp = _span(meta)
        return ast.Str(b"".join(unescape(str(t)[1:-1], _span(t)) for t in tokens), span=sp)

    def name(self, meta, children):
        return ast.Name(str(children[0]), span=_span(meta))

    def dollar(self, meta, children):
        return ast.Dollar(str(children[0])[1:], span=_span(meta))

    def aggref(self, meta, children):
        name, args = children
        return ast.MapRef(str(name), args or [], span=_span(meta))

    def plainref(self, meta, children):
        name, args = children
        return ast.MapRef(str(name), args, span=_span(meta))

    def args(self, meta, children):
        return children

    def call(self, meta, children):
        name, args = children
        return ast.Call(str(name), args or [], name_span=_span(name), span=_span(meta))

    def type_name(self, meta, children):
        words, *stars = children
        return ast.TypeName(words, len(stars), span=_span(meta))

    def type_words(self, meta, children):
        return tuple(str(c) for c in children)


def _describe(tok: Token) -> str:
    if tok.type == "$END":
        return "end of input"
    return f"'{tok}'"


# Terminals that continue an expression, reported together as "an operator".
OPERATORS = {"OROR", "ANDAND", "BOR", "BXOR", "BAND", "EQOP", "RELOP", "SHIFTOP", "ADDOP",
             "STAR", "DIVOP", "QMARK", "ARROW", "DOT", "LSQB"}
# Terminals that start an expression, reported together as "an expression".
EXPR_START = {"NUMBER", "STRING", "NAME", "DOLLAR", "AGGNAME", "LPAR", "UNOP", "ADDOP", "STAR",
              "SIZEOF"}
STATEMENT_TREES = {"expr_stmt", "assign", "aug_assign", "return_stmt", "delete_stmt", "empty_stmt",
                   "block", "if_only", "if_else"}


def _expected(expected) -> str:
    expected = set(expected)
    names = set()
    if len(expected & EXPR_START) >= 4:
        expected -= EXPR_START
        names.add("an expression")
    if len(expected & OPERATORS) >= 3:
        expected -= OPERATORS
        names.add("an operator")
    names |= {TOKEN_NAMES.get(e, f"'{e}'" if len(e) < 3 else e.lower()) for e in expected}
    if not names or len(names) > 5:
        return ""
    return ", expected " + " or ".join(sorted(names))


def _accepts(err) -> set:
    """The terminals the parser could have taken where it stopped: exact,
    unlike LALR's `expected`, whose merged states list spurious lookaheads."""
    ip = getattr(err, "interactive_parser", None)
    if ip is None:
        return set(getattr(err, "expected", ()) or ())
    try:
        return {t for t in ip.accepts() if t != "$END"} | ({"$END"} if _accepts_end(ip) else set())
    except Exception:  # the exact set is a nicety; fall back to LALR's
        return set(getattr(err, "expected", ()) or ())


def _accepts_end(ip) -> bool:
    state = ip.parser_state.copy(deepcopy_values=False)
    conf = copy(state.parse_conf)
    conf.callbacks = {}
    state.parse_conf = conf
    try:
        state.feed_token(Token("$END", ""), True)
    except UnexpectedInput:
        return False
    return True


def _end_of(item) -> Optional[ast.Span]:
    """A one-column span just after a parsed item (Token or Tree)."""
    if isinstance(item, Token):
        line, col = item.end_line, item.end_column
    elif isinstance(item, Tree) and not getattr(item.meta, "empty", True):
        line, col = item.meta.end_line, item.meta.end_column
    else:
        return None
    if line is None or col is None:
        return None
    return ast.Span(line, col, line, col + 1)


def _is_tree(item, *names) -> bool:
    return isinstance(item, Tree) and item.data in names


def _open_brace(stack) -> Optional[Token]:
    """The innermost '{' not yet closed."""
    for item in reversed(stack):
        if isinstance(item, Token) and item.type == "LBRACE":
            return item
    return None


def _provider(name: str):
    from ... import providers
    return providers.lookup(name)


def _in_predicate(stack) -> bool:
    """Between a predicate's opening '/' and its closing one."""
    for i in range(len(stack) - 1, 0, -1):
        item = stack[i]
        if isinstance(item, Token) and item.type == "SLASH" and _is_tree(stack[i - 1], "specs"):
            return True
        if _is_tree(item, "specs", "predicate", "probe") or \
                (isinstance(item, Token) and item.type == "LBRACE"):
            return False
    return False


def _eof_span(source: str) -> ast.Span:
    """Just after the last token: the end of the last line that is not blank."""
    lines = source.rstrip().split("\n")
    return ast.Span(len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 1)


# How each provider is written, for "needs an argument".
PREDICATE_NOTE = "a predicate is written / expression / right before the probe's '{'"
BODY_NOTE = "a probe is provider:argument then '{ statements }' or one statement"


def _syntax_error(err: UnexpectedInput, source: str) -> Diagnostic:
    if isinstance(err, UnexpectedCharacters):
        ch = source[err.pos_in_stream] if err.pos_in_stream < len(source) else ""
        span = ast.Span(err.line, err.column, err.line, err.column + 1)
        if ch == '"':
            return Diagnostic("unterminated string", span,
                              note="a string ends with '\"' on the line where it starts")
        if ch == "'":
            return Diagnostic("unexpected character \"'\"", span,
                              note="strings are written in double quotes: \"text\"")
        if ch == "$":
            return Diagnostic("'$' must be followed by a name or a number", span,
                              note="e.g. $x (scratch variable or environment), $target, $1")
        if not ch.isprintable() or ch.isspace():
            return Diagnostic(f"unexpected character U+{ord(ch):04X}", span)
        return Diagnostic(f"unexpected character '{ch}'", span)
    if isinstance(err, UnexpectedEOF):
        return Diagnostic("unexpected end of input" + _expected(err.expected), _eof_span(source))
    assert isinstance(err, UnexpectedToken)
    tok = err.token
    state = getattr(err, "state", None)
    stack = list(state.value_stack) if state is not None else []
    acc = _accepts(err)
    if tok.type == "UNTERMINATED_COMMENT":
        return Diagnostic("unterminated comment",
                          ast.Span(tok.line, tok.column, tok.line, tok.column + 2),
                          note="a comment that starts with '/*' ends with '*/'")
    # Right after the specs (or the predicate), where the probe's body belongs.
    body_next = bool(stack) and (_is_tree(stack[-1], "specs", "spec", "predicate") or (
        isinstance(stack[-1], Token) and stack[-1].type in ("SPEC", "BEGIN", "END")))
    if tok.type == "$END":
        span = _eof_span(source)
        if not stack:
            return Diagnostic("the script has no probes", None,
                              note='a probe is provider:argument { statements }, e.g. '
                                   'BEGIN { printf("hello\\n"); }')
        brace = _open_brace(stack)
        if "RBRACE" in acc and brace is not None:
            return Diagnostic("unexpected end of input, expected '}'", span,
                              note=f"the '{{' at line {brace.line}, column {brace.column} is not closed")
        if body_next:
            return Diagnostic("unexpected end of input, expected the probe's body", span, note=BODY_NOTE)
        if _in_predicate(stack):
            return Diagnostic("unexpected end of input in a predicate", span, note=PREDICATE_NOTE)
        return Diagnostic("unexpected end of input" + _expected(acc), span)
    span = ast.Span(tok.line, tok.column, tok.end_line or tok.line,
                    tok.end_column or tok.column + len(str(tok)))
    if acc and acc <= {"SPEC", "BEGIN", "END", "$END"}:
        if tok.type == "RBRACE":
            return Diagnostic("unmatched '}'", span)
        prov = _provider(str(tok)) if tok.type == "NAME" else None
        if prov and prov.example:
            return Diagnostic(f"a {tok} probe needs an argument after ':'", span,
                              note=f"e.g. {tok}:{prov.example}")
        if tok.type in ("NAME", "BEGIN", "END"):
            return Diagnostic(f"expected a probe like 'provider:argument', BEGIN or END, got {_describe(tok)}",
                              span, note="a probe is written provider:argument, e.g. tracepoint:sched/sched_switch")
        return Diagnostic(f"expected a probe, got {_describe(tok)}", span)
    brace = _open_brace(stack)
    if brace is not None and tok.column == 1 and \
            re.match(r"(BEGIN|END)\b|[A-Za-z_][A-Za-z0-9_]*:\S", source.split("\n")[tok.line - 1]):
        # A probe starts at the beginning of a line while a block is still open.
        return Diagnostic("expected '}' before the next probe", span,
                          note=f"the '{{' at line {brace.line}, column {brace.column} is not closed")
    if body_next:
        return Diagnostic(f"expected the probe's body, got {_describe(tok)}", span, note=BODY_NOTE)
    # `k:vfs read {` or `k:a k:b {`: a NAME taken as a braceless probe's body.
    prev = stack[-1] if stack else None
    if _is_tree(prev, "name"):
        prev = prev.children[0]
    if isinstance(prev, Token) and prev.type == "NAME" and len(stack) >= 2 and \
            (_is_tree(stack[-2], "specs", "spec", "predicate") or
             (isinstance(stack[-2], Token) and stack[-2].type in ("SPEC", "BEGIN", "END"))):
        if tok.type == "COLON" and tok.start_pos == prev.end_pos:
            return Diagnostic("missing ',' between two probes that share a body",
                              ast.Span(prev.line, prev.column, prev.line, prev.column + 1),
                              note="write probes that share a body as SPEC, SPEC { ... }")
        if tok.type == "LBRACE":
            return Diagnostic(f"unexpected '{{': '{prev}' after the probe was taken as its body", span,
                              note="a probe's argument ends at the first blank; remove the blank if "
                                   f"'{prev}' belongs to it")
    if _in_predicate(stack):
        if tok.type == "LBRACE" and "PRED_END" in acc:
            return Diagnostic("the predicate has no closing '/' before '{'", span, note=PREDICATE_NOTE)
        return Diagnostic(f"unexpected {_describe(tok)} in a predicate" + _expected(acc - {"PRED_END"}),
                          span, note=PREDICATE_NOTE)
    if tok.type in ("EQUAL", "AUGOP") and tok.type not in acc:
        op = str(tok)
        if tok.type == "EQUAL" and stack and isinstance(stack[-1], Token) and stack[-1].type in OPERATORS \
                and stack[-1].end_pos == tok.start_pos:
            # `a += 1` where `+=` could not be a token: lexed as `+` then `=`.
            op = str(stack[-1]) + "="
            stack = stack[:-1]
        prev = stack[-1] if stack else None
        if _is_tree(prev, "name"):
            prev = prev.children[0]
        before = stack[-2] if len(stack) > 1 else None
        at_start = (isinstance(before, Token) and before.type in ("LBRACE", "SEMICOLON", "RBRACE",
                                                                  "RPAR", "ELSE")) \
            or _is_tree(before, "specs", "spec", "predicate", *STATEMENT_TREES) \
            or (isinstance(before, Tree) and str(before.data).startswith("__block")) \
            or (isinstance(before, Token) and before.type in ("SPEC", "BEGIN", "END"))
        if isinstance(prev, Token) and prev.type == "NAME" and at_start:
            return Diagnostic(f"can't assign to '{prev}': it is not a map or a $variable",
                              ast.Span(prev.line, prev.column, prev.line, prev.end_column),
                              note=f"write {prev}[key] {op} ... for a plain map, "
                                   f"@{prev} = ... for an aggregation, ${prev} {op} ... for a scratch variable")
        return Diagnostic("cannot assign to this expression: only @maps, maps and $variables can be assigned",
                          span)
    if "SEMICOLON" in acc and tok.type in ("RBRACE", "NAME", "AGGNAME", "DOLLAR", "IF", "ELSE", "RETURN",
                                           "DELETE", "NUMBER", "STRING", "LBRACE"):
        # Point just after the previous token, where the ';' belongs.
        where = _end_of(stack[-1]) if stack else None
        return Diagnostic(f"missing ';' before {_describe(tok)}", where or span)
    return Diagnostic(f"unexpected {_describe(tok)}" + _expected(acc), span)


def _too_deep(program: ast.Program) -> Optional[ast.Node]:
    """The first node nested deeper than nesting.MAX_DEPTH, found without recursion."""
    return deepest(program, ast.children)


def parse(source: str, filename: str = "<script>") -> ast.Program:
    try:
        tree = _lark().parse(source)
    except UnexpectedInput as err:
        raise PlycError(_syntax_error(err, source), filename, source) from None
    try:
        program = ToAst().transform(tree)
    except PlycError as err:
        raise PlycError(err.diags, filename, source) from None
    except Exception as err:  # lark wraps transformer errors
        inner = getattr(err, "orig_exc", None)
        if isinstance(inner, PlycError):
            raise PlycError(inner.diags, filename, source) from None
        raise
    deep = _too_deep(program)
    if deep is not None:
        raise PlycError(Diagnostic(MESSAGE, deep.span, note=NOTE), filename, source)
    program.filename = filename
    return program
