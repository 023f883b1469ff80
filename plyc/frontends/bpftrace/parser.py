"""A recursive-descent parser for bpftrace's language (0.17 as Debian
ships it, and the current spelling: `args.f`, `delete(@m, k)`, `for`,
`config = {}`, `let`, macros).

Hand-written rather than a grammar because the top level is not made of
tokens: preprocessor lines and struct definitions are C text kept verbatim,
and a probe spec (`uprobe:/bin/bash:readline`, `kprobe:tcp_*`) runs to the
next blank, ',' or '{' as in bpftrace. Errors stop at the first one, as
bpftrace's do, and name what was expected and what was found."""
from __future__ import annotations

import copy
import re
from typing import Optional

from ...ir.nodes import Span
from ...diag import PlycError, error
from ...nesting import MAX_DEPTH, MESSAGE, NOTE, deepest
from . import ast as A, imports
from .lexer import IDENT_RE, KEYWORDS, Lexer, Source, Token
from .probes import BY_NAME, split_spec

BINARY_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8,
    "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
# Type names a '(' may open a cast with; any name ending in _t and any name
# followed by '*' is taken as a type too (`(pid_t)x`, `(foo *)p`).
TYPE_WORDS = frozenset(
    "int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool char short int long "
    "unsigned signed void u8 u16 u32 u64 s8 s16 s32 s64 __u8 __u16 __u32 __u64 __s8 __s16 __s32 __s64".split())
# An attribute's parentheses after a definition's closing brace and its
# `__attribute__` (no nesting deeper than `aligned(8)`'s).
ATTRIBUTE_ARGS_RE = re.compile(r"\(\((?:[^()]|\([^()]*\))*\)\)")
C_DEF_RE = re.compile(r"(struct|union|enum)\s+[_a-zA-Z][_a-zA-Z0-9]*\s*\{|enum\s*\{")    # an enum may be anonymous
BLOCK_STMTS = (A.If, A.Unroll, A.While, A.For, A.Block)


class Parser:
    def __init__(self, text: str, origin=None):
        self.src = Source(text, origin)
        self.lex = Lexer(self.src)
        self.text = text
        self.pos = 0
        self.in_predicate = False
        self.depth = 0           # blocks and expressions open around the current token

    # --- token helpers ------------------------------------------------------

    def peek(self, k: int = 0) -> Token:
        pos = self.pos
        tok = self.lex.scan(pos)
        for _ in range(k):
            tok = self.lex.scan(tok.end)
        return tok

    def next(self) -> Token:
        tok = self.peek()
        self.pos = tok.end
        return tok

    def at(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind in ("punct", "ident") and tok.text == text

    def accept(self, text: str) -> Optional[Token]:
        return self.next() if self.at(text) else None

    def expect(self, text: str, what: str = "") -> Token:
        if self.at(text):
            return self.next()
        self.fail_at(self.peek(), f"expected '{text}'{what}")

    def enter(self):
        """One level deeper (a block, an expression, a prefix operator): past
        nesting.MAX_DEPTH, a located error before Python's recursion limit."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            tok = self.peek()
            self.src.fail(MESSAGE, tok.start, max(tok.end, tok.start + 1), NOTE)

    def fail_at(self, tok: Token, expected: str, note=None):
        self.src.fail(f"{expected}, found {tok.describe()}", tok.start,
                      max(tok.end, tok.start + 1), note)

    def span(self, start: int, end: Optional[int] = None) -> Span:
        return self.src.span(start, self.pos if end is None else end)

    # --- top level ------------------------------------------------------------

    def program(self) -> A.Program:
        text = self.text
        preamble, macros, probes, config, decls, imports = [], [], [], None, [], []
        if text.startswith("#!"):
            end = text.find("\n")
            self.pos = len(text) if end < 0 else end
        while True:
            pos = self.pos = self.lex.skip_space(self.pos)
            if pos >= len(text):
                break
            word = IDENT_RE.match(text, pos)
            word = word.group() if word else ""
            if text[pos] == "#":
                if probes:
                    self.src.fail("a preprocessor line must come before the first probe", pos)
                preamble.append(self.preprocessor_line())
            elif word in ("struct", "union", "enum") and C_DEF_RE.match(text, pos):
                if probes:
                    self.src.fail(f"a {word} definition must come before the first probe", pos, pos + len(word))
                preamble.append(self.c_definition(word))
            elif word == "config" and self.at("=", 1):
                if probes or macros or config:
                    self.src.fail("the config block must come first, before macros and probes"
                                  if not config else "a second config block", pos, pos + 6)
                config = self.config_block()
            elif word == "macro" and self.peek(1).kind == "ident":
                macros.append(self.macro())
            elif word == "fn" and self.peek(1).kind == "ident" and self.at("(", 2):
                self.src.fail("user-defined functions ('fn') are not supported: bpftrace 0.27 parses them, but a "
                              "call to one is an \"Unknown function\" there and a script defining one crashes it",
                              pos, pos + 2, "write it as a macro: macro add(a, b) { a + b }")
            elif word == "import":
                if probes or macros:
                    self.src.fail("an import must come before macros and probes", pos, pos + 6)
                imports.append(self.import_line())
            elif word == "let" and self.peek(1).kind == "map":
                if probes:
                    self.src.fail("a map declaration must come before the first probe", pos, pos + 3)
                decls.append(self.map_decl())
            else:
                probes.append(self.probe())
        if not probes and not imports and self.src.origin is None:
            self.src.fail("the script has no probes", len(text))
        return A.Program(preamble, config, macros, probes, decls, imports=imports,
                         span=self.src.span(0, len(text)))

    def import_line(self) -> A.Import:
        """`import "file.bt";` or `import "dir";` (current bpftrace's)."""
        start = self.next().start
        tok = self.next()
        if tok.kind != "str":
            self.fail_at(tok, "expected the imported file's name as a string")
        self.expect(";", " after import")
        return A.Import(tok.value, span=self.span(start))

    def preprocessor_line(self) -> A.CText:
        """`#include <x.h>`, `#define X 1` (with '\\' continuations), `#ifdef` ..."""
        start, text, pos = self.pos, self.text, self.pos
        while True:
            end = text.find("\n", pos)
            if end < 0:
                end = len(text)
                break
            if text[start:end].rstrip("\r").endswith("\\"):
                pos = end + 1
                continue
            break
        self.pos = end
        return A.CText("preprocessor", text[start:end], start, end, span=self.span(start))

    def c_definition(self, kind: str) -> A.CText:
        """`struct name { ... }` up to its matching brace and an optional ';'."""
        text, start = self.text, self.pos
        pos, depth = text.index("{", start), 0
        while pos < len(text):
            pos = self.lex.skip_space(pos)
            if pos >= len(text):
                break
            c = text[pos]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = pos + 1
                    after = self.lex.skip_space(end, newlines=False)
                    # `} __attribute__((packed)) /**/ __attribute__((aligned(4)));`:
                    # cdefs.py reads them (comments anywhere between, as C's)
                    while text.startswith("__attribute__", after):
                        attr = ATTRIBUTE_ARGS_RE.match(text, self.lex.skip_space(after + 13, newlines=False))
                        if not attr:
                            break
                        end = attr.end()
                        after = self.lex.skip_space(end, newlines=False)
                    if text.startswith(";", after):
                        end = after + 1
                    self.pos = end
                    return A.CText(kind, text[start:end], start, end, span=self.span(start))
            pos += 1
        self.src.fail(f"this {kind} definition has no closing '}}'", start, start + len(kind))

    def config_block(self) -> A.Config:
        start = self.pos
        self.next()
        self.expect("=")
        self.expect("{", " to open the config block")
        items = []
        while not self.at("}"):
            name = self.next()
            if name.kind != "ident":
                self.fail_at(name, "expected a config variable name")
            self.expect("=", f" after '{name.text}'")
            value = self.peek()
            if value.kind not in ("int", "str", "ident"):
                self.fail_at(value, f"expected a number, string or word as the value of {name.text}")
            self.next()
            node = (A.Int(value.value, value.text) if value.kind == "int" else
                    A.Str(value.value) if value.kind == "str" else A.Ident(value.text))
            node.span = self.src.span(value.start, value.end)
            items.append(A.ConfigItem(name.text, node, span=self.src.span(name.start, value.end)))
            if not self.accept(";") and not self.at("}"):
                self.fail_at(self.peek(), "expected ';' or '}' after a config variable")
        self.next()
        return A.Config(items, span=self.span(start))

    def map_decl(self) -> A.MapDecl:
        """`let @m = hash(N);`: the map's BPF type and size (lower.py checks them)."""
        start = self.next().start
        name = self.next()
        self.expect("=", f" after '{name.text}'")
        kind = self.next()
        if kind.kind != "ident":
            self.fail_at(kind, "expected a map type (hash, lruhash, percpuhash, percpulruhash)")
        self.expect("(", f" after '{kind.text}'")
        size = self.next()
        if size.kind != "int":     # a number, as bpftrace's grammar has it
            self.fail_at(size, "expected the map's size, a number")
        entries = A.Int(size.value, size.text, span=self.src.span(size.start, size.end))
        self.expect(")", " after the map's size")
        decl = A.MapDecl(name.value, kind.text, entries, span=self.span(start))
        self.accept(";")
        return decl

    def macro(self) -> A.Macro:
        start = self.next().start
        name = self.next()
        if name.text in KEYWORDS:
            self.fail_at(name, "expected a macro name")
        self.expect("(", f" after the macro name '{name.text}'")
        params = []
        while not self.at(")"):
            tok = self.next()
            kind = {"var": "var", "map": "map", "ident": "expr"}.get(tok.kind)
            if kind is None or tok.text in KEYWORDS:
                self.fail_at(tok, "expected a macro parameter ($x, @x or x)")
            params.append(A.MacroParam(tok.value, kind, span=self.src.span(tok.start, tok.end)))
            if not self.accept(","):
                break
        self.expect(")", " to close the macro's parameters")
        body = self.block()
        return A.Macro(name.text, params, body, span=self.span(start))

    def probe(self) -> A.Probe:
        start = self.pos
        specs = [self.probe_spec()]
        while True:
            after = self.lex.skip_space(self.pos)
            if not self.text.startswith(",", after):
                break
            self.pos = self.lex.skip_space(after + 1)
            if self.text.startswith("/", self.pos) and not self.text.startswith(("//", "/*"), self.pos) or \
                    self.text.startswith("{", self.pos):
                break       # a comma after the last spec (published tools write one; 0.27 takes it)
            specs.append(self.probe_spec())
        predicate = None
        self.pos = self.lex.skip_space(self.pos)
        if self.text.startswith("/", self.pos):
            self.next()
            self.in_predicate = True
            predicate = self.expr()
            self.in_predicate = False
            self.expect("/", " to end the predicate")
        if not self.at("{"):
            self.fail_at(self.peek(), "expected '{' to open the probe's action block"
                         if predicate or self.at("}") or self.peek().kind == "eof"
                         else "expected ',', a predicate or '{' after the probe")
        body = self.block()
        return A.Probe(specs, predicate, body, span=self.span(start))

    def probe_spec(self) -> A.ProbeSpec:
        """A spec runs to the next blank, ',' or '{' (outside quotes), as in bpftrace."""
        text, start = self.text, self.pos
        pos, quoted = start, False
        while pos < len(text):
            c = text[pos]
            if c == '"':
                quoted = not quoted
            elif c == "\\" and quoted:
                pos += 1
            elif not quoted and (c.isspace() or c in ",{}" or text.startswith("//", pos)
                                 or text.startswith("/*", pos)):
                break
            pos += 1
        if quoted:
            self.src.fail("unterminated string in the probe", start, pos)
        raw = text[start:pos]
        if not raw:
            self.fail_at(self.peek(), "expected a probe")
        self.pos = pos
        named = re.match(r"[_a-zA-Z][_a-zA-Z0-9]*=", raw)
        if named:
            # current bpftrace's probe names (`name=kprobe:f`): for its own test
            # and attach machinery; a script sees the probe as without one
            start += named.end()
            raw = raw[named.end():]
            if not raw:
                self.fail_at(self.lex.scan(start), "expected a probe after its name")
        span = self.src.span(start, pos)
        parts = split_spec(raw)
        ptype = BY_NAME.get(parts[0])
        if ptype is None:
            what = parts[0] if IDENT_RE.fullmatch(parts[0]) else raw
            if not IDENT_RE.match(raw):
                self.fail_at(self.lex.scan(start), "expected a probe")
            self.src.fail(f"unknown probe type '{what}'", start, start + len(parts[0]))
        if len(parts) - 1 not in ptype.parts:
            self.src.fail(f"a {ptype.name} probe is written '{ptype.usage}'", start, pos)
        return A.ProbeSpec(ptype.name, parts[1:], raw, span=span)

    # --- statements -----------------------------------------------------------

    def block(self) -> A.Block:
        self.enter()
        try:
            return self._block()
        finally:
            self.depth -= 1

    def _block(self) -> A.Block:
        start = self.expect("{").start
        stmts = []
        while not self.at("}"):
            if self.peek().kind == "eof":
                self.fail_at(self.peek(), "expected '}' to close the block opened at line "
                             f"{self.src.pos(start)[0]}")
            stmt = self.statement()
            stmts.append(stmt)
            if self.accept(";") or self.at("}") or isinstance(stmt, BLOCK_STMTS):
                continue
            self.fail_at(self.peek(), "expected ';' or '}' after the statement")
        self.next()
        return A.Block(stmts, span=self.span(start))

    def statement(self) -> A.Stmt:
        tok = self.peek()
        start = tok.start
        if tok.kind == "ident" and tok.text in KEYWORDS:
            kw = tok.text
            if kw == "if":
                return self.if_stmt()
            if kw == "while" and not self.at("(", 1):
                self.next()
                head = self.condition(kw)     # current bpftrace's `while $i {`
                body = self.block()
                return A.While(head, body, span=self.span(start))
            if kw in ("while", "unroll"):
                self.next()
                self.expect("(", f" after '{kw}'")
                head = self.expr()
                self.expect(")", f" to close the {kw} condition" if kw == "while" else " after the unroll count")
                body = self.block()
                node = A.While(head, body) if kw == "while" else A.Unroll(head, body)
                node.span = self.span(start)
                return node
            if kw == "for":
                return self.for_stmt()
            if kw in ("break", "continue"):
                self.next()
                return A.Jump(kw, span=self.span(start))
            if kw == "return":
                self.next()
                value = None if self.at(";") or self.at("}") else self.expr()
                return A.Jump(kw, value, span=self.span(start))
            if kw == "let":
                self.next()
                var = self.next()
                if var.kind != "var":
                    self.fail_at(var, "expected a scratch variable ($name) after 'let'")
                typ = self.decl_type() if self.accept(":") else None
                value = self.expr() if self.accept("=") else None
                return A.Let(A.Var(var.value, span=self.src.span(var.start, var.end)),
                             value, typ, span=self.span(start))
            if kw == "else":
                self.fail_at(tok, "expected a statement ('else' without 'if')")
        if self.at("{"):
            return self.block()
        expr = self.expr()
        expr_end = self.pos
        op = self.peek()
        if op.kind == "punct" and op.text in ASSIGN_OPS:
            if not isinstance(expr, (A.Var, A.Map)) and not (
                    isinstance(expr, A.Ident) and expr.name == "_"):
                self.src.fail(f"'{op.text}' needs a variable or map on its left", start, expr_end,
                              "tuples and records are immutable once created (bpftrace 0.27): assign a new one"
                              if isinstance(expr, A.TupleIndex) or isinstance(expr, A.Field) and not expr.arrow
                              else None)
            self.next()
            value = self.expr()
            return A.Assign(expr, op.text, value, span=self.span(start))
        return A.ExprStmt(expr, span=self.span(start))

    def if_stmt(self) -> A.If:
        start = self.next().start
        cond = self.condition("if")
        if not self.at("{"):
            self.fail_at(self.peek(), "expected '{' (bpftrace needs braces around an if's body)")
        then = self.block()
        orelse = None
        if self.accept("else"):
            if self.at("if"):
                orelse = self.if_stmt()
            elif self.at("{"):
                orelse = self.block()
            else:
                self.fail_at(self.peek(), "expected '{' or 'if' after 'else'")
        return A.If(cond, then, orelse, span=self.span(start))

    def condition(self, kw: str) -> A.Expr:
        """bpftrace 0.2x reads `if COND {` and `while COND {` where COND is
        a unary expression (its tools' `if $ns {`, `if !$x {`, `if f(a) {`);
        anything wider needs 0.17's parentheses, as there (`if $a == 1 {`
        is refused)."""
        if kw == "if" and self.at("("):
            self.next()
            cond = self.expr()
            self.expect(")", " to close the if condition")
            return cond
        if self.at("{"):
            self.fail_at(self.peek(), f"expected a condition after '{kw}'")
        cond = self.operand()
        op = self.peek()
        if op.kind == "punct" and (op.text in BINARY_PREC or op.text == "?"):
            self.fail_at(op, f"expected '{{' after the {kw} condition (without parentheses, "
                         f"bpftrace reads one operand: `{kw} ($a == 1) {{`)")
        return cond

    def for_stmt(self) -> A.For:
        """`for ($x : @map) {` and `for ($i : start..end) {`; current
        bpftrace also reads them without the parentheses (its tools'
        `for $j : 0..n {`)."""
        start = self.next().start
        paren = self.accept("(")
        var = self.next()
        if var.kind != "var":
            self.fail_at(var, "expected a scratch variable ($name) in the for loop"
                         if paren or var.text != "{" else "expected '(' or a scratch variable ($name) after 'for'")
        self.expect(":", f" after {var.text} (for ($x : @map) or for ($i : start..end))")
        if self.peek().kind == "map" and self.at(")" if paren else "{", 1):
            tok = self.next()
            iterable = A.Map(tok.value, span=self.src.span(tok.start, tok.end))
        else:
            first_at = self.peek().start
            first = self.unary()
            self.expect("..", " between the range's start and end")
            last = self.unary()
            iterable = A.Range(first, last, span=self.span(first_at))
        if paren:
            self.expect(")", " to close the for loop's head")
        elif not self.at("{"):
            self.fail_at(self.peek(), "expected '{' after the for loop's head "
                         "(a range's ends are one operand each: `0..($n + 1)`)")
        body = self.block()
        return A.For(A.Var(var.value, span=self.src.span(var.start, var.end)), iterable, body,
                     span=self.span(start))

    # --- expressions ------------------------------------------------------------

    def expr(self) -> A.Expr:
        self.enter()
        try:
            return self._expr()
        finally:
            self.depth -= 1

    def _expr(self) -> A.Expr:
        start = self.peek().start
        cond = self.binary(1)
        cond_end = self.pos
        if not self.accept("?"):
            return cond
        if self.accept(":"):
            # current bpftrace's `a ?: b`: a if it is true, else b. Read as
            # `a ? a : b`, so a is evaluated twice: only where that is the
            # same value (no call, builtin, ++ or --).
            orelse = self.expr()
            if not reads_twice_alike(cond):
                self.src.fail("the left of '?:' must be a variable, a map's value, a literal or "
                              "arithmetic on them (plyc reads it twice): assign it to a $variable first",
                              start, cond_end)
            return A.Ternary(cond, copy.deepcopy(cond), orelse, span=self.span(start))
        then = self.expr()
        self.expect(":", " in the ternary operator (cond ? a : b)")
        orelse = self.expr()
        return A.Ternary(cond, then, orelse, span=self.span(start))

    def binary(self, min_prec: int) -> A.Expr:
        start = self.peek().start
        left = self.unary()
        while True:
            op = self.peek()
            prec = BINARY_PREC.get(op.text) if op.kind == "punct" else None
            if prec is None or prec < min_prec:
                return left
            # In a predicate, '/' followed by '{' ends it (bpftrace's rule).
            if op.text == "/" and self.in_predicate and self.at("{", 1):
                return left
            self.next()
            right = self.binary(prec + 1)
            left = A.Binary(op.text, left, right, span=self.span(start))

    def operand(self) -> A.Expr:
        """The operand of a prefix operator or a cast: one level deeper."""
        self.enter()
        try:
            return self.unary()
        finally:
            self.depth -= 1

    def unary(self) -> A.Expr:
        tok = self.peek()
        start = tok.start
        if tok.kind == "punct":
            if tok.text in ("!", "~", "-", "*", "&"):
                self.next()
                return A.Unary(tok.text, self.operand(), span=self.span(start))
            if tok.text in ("++", "--"):
                self.next()
                target = self.operand()
                self.check_incdec_target(target, tok)
                return A.IncDec(tok.text, True, target, span=self.span(start))
            if tok.text == "(":
                ty = self.try_cast_type()
                if ty is not None:
                    return A.Cast(ty, self.operand(), span=self.span(start))
        if tok.kind == "ident" and tok.text in ("sizeof", "offsetof"):
            return self.sizeof_offsetof()
        return self.postfix(self.primary(), start)

    def check_incdec_target(self, target: A.Expr, op: Token):
        if not isinstance(target, (A.Var, A.Map)):
            self.src.fail(f"'{op.text}' needs a variable or map", op.start, op.end)

    def postfix(self, node: A.Expr, start: int) -> A.Expr:
        while True:
            tok = self.peek()
            if tok.kind != "punct":
                return node
            if tok.text in (".", "->"):
                self.next()
                name = self.next()
                if name.kind == "int" and tok.text == ".":
                    node = A.TupleIndex(node, name.value, span=self.span(start))
                    continue
                if name.kind != "ident":
                    self.fail_at(name, f"expected a field name after '{tok.text}'")
                node = A.Field(node, name.text, tok.text == "->", span=self.span(start))
            elif tok.text == "[":
                self.next()
                index = self.expr()
                self.expect("]", " to close the index")
                node = A.Index(node, index, span=self.span(start))
            elif tok.text in ("++", "--"):
                self.check_incdec_target(node, tok)
                self.next()
                node = A.IncDec(tok.text, False, node, span=self.span(start))
            else:
                return node

    def if_expr(self, start: int) -> A.Ternary:
        """`if (c) { a } else { b }` as a value (current bpftrace): the
        branches are block expressions, `else if` another if; read as
        `c ? {a} : {b}` (a branch with statements is refused with ?:'s)."""
        cond = self.condition("if")
        if not self.at("{"):
            self.fail_at(self.peek(), "expected '{' (bpftrace needs braces around an if's body)")
        then = self.block_expr()
        if not self.accept("else"):
            self.fail_at(self.peek(), "expected 'else': an if used as a value needs one")
        if self.at("if"):
            other = self.if_expr(self.next().start)
        elif self.at("{"):
            other = self.block_expr()
        else:
            self.fail_at(self.peek(), "expected '{' or 'if' after 'else'")
        return A.Ternary(cond, bare_block(then), bare_block(other), span=self.span(start))

    def primary(self) -> A.Expr:
        tok = self.next()
        sp = self.src.span(tok.start, tok.end)
        if tok.kind == "ident" and tok.text == "if":
            return self.if_expr(tok.start)
        if tok.kind == "int":
            return A.Int(tok.value, tok.text, span=sp)
        if tok.kind == "str":
            return A.Str(tok.value, span=sp)
        if tok.kind == "var":
            return A.Var(tok.value, span=sp)
        if tok.kind == "param":
            return A.Positional(tok.value, span=sp)
        if tok.kind == "nparams":
            return A.ParamCount(span=sp)
        if tok.kind == "map":
            keys = None
            if self.accept("["):
                keys = self.expr_list("]")
            return A.Map(tok.value, keys, span=self.span(tok.start))
        if tok.kind == "ident":
            if tok.text in KEYWORDS and tok.text != "config":      # 0.27's config record is a value
                self.fail_at(tok, "expected an expression")
            if self.accept("("):
                if tok.text == "typeof" and self._type_follows():
                    # typeof(uint64 *) given to a macro (0.27's): the type itself
                    tn = self.parse_type()
                    self.expect(")", " to close typeof(")
                    return A.Call(tok.text, [tn], sp, span=self.span(tok.start))
                args = self.expr_list(")")
                return A.Call(tok.text, args, sp, span=self.span(tok.start))
            return A.Ident(tok.text, span=sp)
        if tok.kind == "punct" and tok.text == "(":
            if self.accept(")"):
                return A.Tuple([], span=self.span(tok.start))
            if self.peek().kind == "ident" and self.peek(1).kind == "punct" and self.peek(1).text == "=":
                return self.record(tok.start)
            first = self.expr()
            if self.accept(")"):
                return first
            self.expect(",", " or ')' after the expression")
            items = [first] + self.expr_list(")")
            return A.Tuple(items, span=self.span(tok.start))
        if tok.kind == "punct" and tok.text == "{":
            self.pos = tok.start
            return self.block_expr()
        self.fail_at(tok, "expected an expression")

    def record(self, start: int) -> A.Tuple:
        """After '(': bpftrace 0.27's record `(a=1, b="x")`, up to ')' (no
        trailing comma: 0.27 expects another name there)."""
        names, items = [], []
        while True:
            name = self.next()
            if name.kind != "ident":
                self.fail_at(name, "expected identifier (a record's member: 'name=value')")
            if name.text in names:
                self.src.fail(f"Named argument list already contains name: {name.text}",
                              name.start, self.peek(1).end)
            self.expect("=", " after the record member's name")
            names.append(name.text)
            items.append(self.expr())
            if not self.accept(","):
                break
        self.expect(")", " or ',' in the record")
        return A.Tuple(items, names, span=self.span(start))

    def block_expr(self) -> A.BlockExpr:
        """`{ stmt; ...; value }` (current bpftrace): statements, then the
        block's value, an expression without a ';' after it."""
        self.enter()
        try:
            start = self.expect("{").start
            stmts = []
            while True:
                tok = self.peek()
                if tok.kind == "eof" or (tok.kind == "punct" and tok.text == "}"):
                    self.fail_at(tok, "expected the block's value (a block used as a value ends with "
                                 "an expression without ';': { let $x = 1; $x + 1 })")
                stmt = self.statement()
                value = as_value(stmt)
                if value is not None and self.accept("}"):
                    return A.BlockExpr(stmts, value, span=self.span(start))
                stmts.append(stmt)
                if self.accept(";") or isinstance(stmt, BLOCK_STMTS):
                    continue
                self.fail_at(self.peek(), "expected ';' or '}' after the statement")
        finally:
            self.depth -= 1

    def expr_list(self, close: str) -> list:
        """Comma-separated expressions up to `close` (a trailing comma allowed)."""
        items = []
        while not self.at(close):
            items.append(self.expr())
            if not self.accept(","):
                break
        self.expect(close, f" or ',' in the list")
        return items

    def try_cast_type(self) -> Optional[A.TypeName]:
        """At '(': the cast's type if one follows, else None (nothing consumed)."""
        k, words = 1, []
        tok = self.peek(k)
        if tok.kind != "ident":
            return None
        if tok.text == "typeof" and self.at("(", 2):     # `(typeof(e))x`: 0.27's cast to e's type
            self.next()
            tn = self.typeof_type()
            self.expect(")", " to close the cast")
            return tn
        if tok.text in ("struct", "union", "enum"):
            name = self.peek(k + 1)
            if name.kind != "ident":
                return None
            words, k = [tok.text, name.text], k + 2
        else:
            while self.peek(k).kind == "ident" and self.peek(k).text in TYPE_WORDS:
                words.append(self.peek(k).text)
                k += 1
            if not words:
                words, k = [tok.text], k + 1
                named = tok.text.endswith("_t")
                # `(t)v`: a name in parentheses right before an operand is
                # a cast, as 0.27 reads it (a macro's type parameter)
                operand = self.at(")", k) and self.peek(k + 1).kind in ("ident", "int", "str", "var", "param", "map") \
                    or tok.text in ("string", "buffer") and self.at("[", k)      # (string[64])x
                if not named and not operand and not self._stars_close(k):
                    return None
        ptrs = 0
        while self.at("*", k):
            ptrs, k = ptrs + 1, k + 1
        if not self._closes_type(k):
            return None
        start = self.peek(1).start
        array = None
        for _ in range(k):
            self.next()
        if self.accept("["):
            size = self.peek()
            if size.kind == "int":
                array = self.next().value
            else:
                array = -1
            self.expect("]", " to close the array type")
        end = self.pos
        self.expect(")", " to close the cast")
        return A.TypeName(" ".join(words), ptrs, array, span=self.src.span(start, end))

    def _closes_type(self, k: int) -> bool:
        return self.at(")", k) or self.at("[", k)

    def _stars_close(self, k: int) -> bool:
        """`*`s from token k, then the end of a type: `(bio *)`, `(foo **)`."""
        j = k
        while self.at("*", j):
            j += 1
        return j > k and self._closes_type(j)

    def parse_type(self) -> A.TypeName:
        """A type inside sizeof()/offsetof(): `struct x`, `uint32`, `foo_t *`."""
        start = self.peek().start
        tok = self.next()
        words = [tok.text]
        if tok.text in ("struct", "union", "enum"):
            name = self.next()
            if name.kind != "ident":
                self.fail_at(name, f"expected a name after '{tok.text}'")
            words.append(name.text)
        else:
            while self.peek().kind == "ident" and self.peek().text in TYPE_WORDS:
                words.append(self.next().text)
        ptrs = 0
        while self.accept("*"):
            ptrs += 1
        return A.TypeName(" ".join(words), ptrs, span=self.span(start))

    def typeof_type(self) -> A.TypeName:
        """At `typeof(`: `typeof(TYPE)` is TYPE, `typeof(expr)` the type of
        expr (TypeName "typeof", typed where it is used), as 0.27's."""
        start = self.next().start
        self.expect("(", " after 'typeof'")
        if self._type_follows():
            tn = self.parse_type()
        else:
            tn = A.TypeName("typeof", of=self.expr())
        self.expect(")", " to close typeof(")
        tn.span = self.span(start)
        return tn

    def decl_type(self) -> A.TypeName:
        """`let $x: TYPE`: a type as sizeof() takes it, `string[N]`, or `typeof(expr)`."""
        start = self.peek().start
        if self.at("typeof") and self.at("(", 1):
            return self.typeof_type()
        tok = self.peek()
        if tok.kind != "ident":
            self.fail_at(tok, "expected a type after ':'")
        tn = self.parse_type()
        if self.accept("["):
            size = self.next()
            if size.kind != "int":
                self.fail_at(size, "expected the array's size, a number")
            self.expect("]", " to close the array type")
            tn = A.TypeName(tn.base, tn.pointers, size.value, span=self.span(start))
        return tn

    def _type_follows(self) -> bool:
        tok = self.peek()
        if tok.kind != "ident":
            return False
        if tok.text in ("struct", "union", "enum") or tok.text in TYPE_WORDS:
            return True
        return tok.text.endswith("_t") and (self.at(")", 1) or self.at("*", 1) or self.at(",", 1))

    def _stars(self) -> int:
        """How many '*' follow the next token."""
        k = 1
        while self.at("*", k):
            k += 1
        return k - 1

    def sizeof_offsetof(self) -> A.Expr:
        kw = self.next()
        self.expect("(", f" after '{kw.text}'")
        if kw.text == "sizeof" and self.at("typeof") and self.at("(", 1):
            arg = self.typeof_type()
        else:
            tstart = self.peek().start
            # `sizeof(b *)` in a macro whose b is a type (0.27's): a type too
            named = self.peek().kind == "ident" and self._stars() > 0 and self.at(")", self._stars() + 1)
            arg = self.parse_type() if self._type_follows() or named else self.expr()
        if kw.text == "sizeof" and isinstance(arg, A.TypeName) and self.accept("["):
            size = self.next()      # sizeof(uint32 *[10]): an array of the type, as 0.27's
            if size.kind != "int":
                self.fail_at(size, "expected the array's size, a number")
            self.expect("]", " to close the array type")
            arg = A.TypeName(arg.base, arg.pointers, size.value, span=self.span(tstart))
        if kw.text == "sizeof":
            self.expect(")", " to close sizeof")
            return A.Sizeof(arg, span=self.span(kw.start))
        self.expect(",", " between offsetof's type and field")
        names = []
        while True:
            name = self.next()
            if name.kind != "ident":
                self.fail_at(name, "expected a field name in offsetof")
            names.append(name.text)
            if not self.accept("."):
                break
        self.expect(")", " to close offsetof")
        return A.Offsetof(arg, names, span=self.span(kw.start))


def children(node) -> list:
    """The tree's nodes directly inside node (for walks without recursion)."""
    out = []
    for name in node.__dataclass_fields__:
        v = getattr(node, name)
        if isinstance(v, A.Node):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, A.Node))
    return out


def check_depth(program: A.Program):
    """A located error where the tree nests deeper than nesting.MAX_DEPTH:
    chains the parser builds in a loop (`1+1+...+1`, `a.b.c...`) and what
    macros expand into."""
    deep = deepest(program, children)
    if deep is not None:
        raise error(MESSAGE, deep.span, NOTE)


def parse(text: str, filename: str = "<script>") -> A.Program:
    """The script's tree; PlycError at the first syntax error."""
    try:
        program = imports.resolve(Parser(text).program(), filename,
                                  lambda t, origin: Parser(t, origin).program())
        if not program.probes:
            raise error("the script has no probes", program.span)
        check_depth(program)
        return program
    except PlycError as err:
        raise PlycError(err.diags, filename, text) from None


def bare_block(e: A.BlockExpr) -> A.Expr:
    """A block expression without statements as its value alone."""
    return e.value if isinstance(e, A.BlockExpr) and not e.stmts else e


def as_value(stmt) -> Optional[A.Expr]:
    """A block's last statement as its value: an expression, or a block
    ending with one (`{ let $v = 3; { $v * $v } }`), or an if with an else
    whose branches end with one (`{ if ($a) { 2 } else { 3 } }`)."""
    if isinstance(stmt, A.ExprStmt):
        return stmt.expr
    if isinstance(stmt, A.If) and stmt.other is not None:
        then, other = as_value(stmt.then), as_value(stmt.other)
        if then is not None and other is not None:
            return A.Ternary(stmt.cond, bare_block(then), bare_block(other), span=stmt.span)
    if isinstance(stmt, A.Block) and stmt.stmts:
        value = as_value(stmt.stmts[-1])
        if value is not None:
            return A.BlockExpr(stmt.stmts[:-1], value, span=stmt.span)
    return None


def reads_twice_alike(e: A.Expr) -> bool:
    """Whether evaluating `e` twice gives the same value and does nothing
    more: no call, builtin (nsecs, rand), increment or positional."""
    if isinstance(e, (A.Var, A.Int, A.Str)):
        return True
    if isinstance(e, A.Map):
        return all(reads_twice_alike(k) for k in e.keys or [])
    if isinstance(e, (A.Field, A.TupleIndex)):
        return reads_twice_alike(e.obj)
    if isinstance(e, A.Unary):
        return e.op in ("!", "~", "-") and reads_twice_alike(e.operand)
    if isinstance(e, A.Cast):
        return reads_twice_alike(e.operand)
    if isinstance(e, A.Binary):
        return reads_twice_alike(e.left) and reads_twice_alike(e.right)
    if isinstance(e, A.Ternary):
        return all(reads_twice_alike(x) for x in (e.cond, e.then, e.other))
    return False
