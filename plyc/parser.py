"""Source text to ast.Program: lark (LALR, positions) plus a transformer, with
lark's exceptions turned into located, named diagnostics."""
from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast
from .diag import Diagnostic, PlycError

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
    "DELETE": "'delete'", "MULOP": "an operator", "ADDOP": "an operator",
}


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files("plyc").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=True, strict=True)


def _span(meta_or_token) -> ast.Span:
    m = meta_or_token
    if getattr(m, "empty", False):
        return ast.NOSPAN
    return ast.Span(m.line, m.column, m.end_line, m.end_column)


def parse_int(text: str) -> int:
    t = text.replace("_", "")
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t[1:], 8)
    return int(t)


def unescape(body: str, span: ast.Span) -> bytes:
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
                raise PlycError(Diagnostic("\\x used with no following hex digits", span))
            out.append(int(digits, 16))
            i += 2 + len(digits)
        elif nxt in STRING_ESCAPES:
            out += STRING_ESCAPES[nxt]
            i += 2
        else:
            raise PlycError(Diagnostic(f"unknown escape sequence '\\{nxt}' in string", span))
    return bytes(out)


@v_args(meta=True)
class ToAst(Transformer):
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
        return ast.Num(parse_int(str(children[0])), span=_span(meta))

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


def _expected(expected) -> str:
    names = sorted({TOKEN_NAMES.get(e, f"'{e}'" if len(e) < 3 else e.lower()) for e in expected})
    if len(names) > 6:
        return ""
    return ", expected " + " or ".join(names)


def _syntax_error(err: UnexpectedInput, source: str) -> Diagnostic:
    if isinstance(err, UnexpectedCharacters):
        ch = source[err.pos_in_stream] if err.pos_in_stream < len(source) else ""
        span = ast.Span(err.line, err.column, err.line, err.column + 1)
        if ch == '"':
            return Diagnostic("unterminated string", span)
        if ch == "/" and source[err.pos_in_stream:err.pos_in_stream + 2] == "/*":
            return Diagnostic("unterminated comment", span)
        return Diagnostic(f"unexpected character '{ch}'", span)
    if isinstance(err, UnexpectedEOF):
        lines = source.rstrip().splitlines() or [""]
        span = ast.Span(len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 1)
        return Diagnostic("unexpected end of input" + _expected(err.expected), span)
    assert isinstance(err, UnexpectedToken)
    tok = err.token
    if tok.type == "$END":
        lines = source.rstrip().splitlines() or [""]
        span = ast.Span(len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 1)
        if "RBRACE" in err.expected:
            return Diagnostic("unexpected end of input, expected '}' (unclosed block)", span)
        return Diagnostic("unexpected end of input" + _expected(err.expected), span)
    span = ast.Span(tok.line, tok.column, tok.end_line or tok.line,
                    tok.end_column or tok.column + len(str(tok)))
    exp = set(err.expected)
    if exp <= {"SPEC", "BEGIN", "END"}:
        if tok.type == "NAME" or tok.type == "BEGIN" or tok.type == "END":
            return Diagnostic(f"expected a probe like 'provider:argument', BEGIN or END, got {_describe(tok)}",
                              span, note="a probe is written provider:argument, e.g. tracepoint:sched/sched_switch")
        return Diagnostic(f"expected a probe, got {_describe(tok)}", span)
    if "SEMICOLON" in exp and tok.type in ("RBRACE", "NAME", "AGGNAME", "DOLLAR", "IF", "RETURN"):
        # Point just after the previous token, where the ';' belongs.
        return Diagnostic(f"missing ';' before {_describe(tok)}", span)
    if tok.type == "EQUAL":
        return Diagnostic("cannot assign to this expression: only @maps, maps and $variables can be assigned",
                          span)
    if tok.type == "PRED_END" or (tok.type == "MULOP" and str(tok) == "/"):
        return Diagnostic(f"unexpected '/'" + _expected(exp), span)
    return Diagnostic(f"unexpected {_describe(tok)}" + _expected(exp), span)


def parse(source: str, filename: str = "<script>") -> ast.Program:
    try:
        tree = _lark().parse(source)
    except UnexpectedInput as err:
        raise PlycError(_syntax_error(err, source), filename, source) from None
    try:
        program = ToAst().transform(tree)
    except PlycError as err:
        err.filename, err.source = filename, source
        raise
    except Exception as err:  # lark wraps transformer errors
        inner = getattr(err, "orig_exc", None)
        if isinstance(inner, PlycError):
            inner.filename, inner.source = filename, source
            raise PlycError(inner.diags, filename, source) from None
        raise
    program.filename = filename
    return program
