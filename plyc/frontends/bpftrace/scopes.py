"""bpftrace 0.27's block scoping of scratch variables, as a tree pass
before the lowering (the default output; `--bpftrace-output 0.17` keeps
0.17's probe-wide variables, blocks.py).

A `$x` belongs to the block (a probe's body, an `if` or `else` branch, a
loop's body, `{ }`, a block expression) where it is first assigned or
declared (`let $x`), and is seen from there to the block's end, in the
blocks inside it too. As 0.27 (tested against 0.27.1):
- a read, `+=` or `++` of a `$x` no block around it has (yet) is an error
  (0.27: "Undefined or undeclared variable");
- `let $x` where a `$x` is already seen is an error, in the same block
  too: 0.27 allows no shadowing ("Variable $x was already declared"); so
  is a loop's `$x` ("Loop declaration shadows existing variable");
- `$x = v` where a `$x` is seen assigns that one, else declares a new one;
- `find(@m, k, $v)` of a `$v` not seen is accepted (0.27 takes it), and
  its value is not seen after it.

Two variables of one name in a probe (sibling blocks, a block's own and a
later one after it) are two locals: the later one is renamed `x'2`, `x'3`
(`shown` takes the mark off in messages), so each has a type of its own
and the lowering keeps its probe-wide view of names. A read of no variable
is renamed to one never assigned. The errors are said by the lowering where
it meets the node (`error`), among its own, in the order of the script.""" 
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from ...span import Span
from . import ast as A
from .trees import rebuilt

_MARK = re.compile(r"(\$?[A-Za-z_]\w*)'\d+")


def error(typer, span: Span):
    """The scoping error found at span, said as the lowering's own (typer.err)."""
    found = typer.st.scope_errors.get(place(span))
    if found is not None:
        typer.err(found[0], span, found[1])


def place(span: Span) -> tuple:
    """A span's key among errors: its file too (Span's equality leaves it out)."""
    return span, id(span.origin)


def shown(text: Optional[str]) -> Optional[str]:
    """A message with the variables' scope marks taken off (`$x'2` is `$x`)."""
    return _MARK.sub(r"\1", text) if text else text


def original(name: str) -> str:
    return name.split("'", 1)[0]


@dataclass
class _Binding:
    name: str           # the local's name in the lowering
    span: Span          # where it was declared or first assigned
    how: str            # "declaration", "assignment", "loop"
    untyped: bool = False   # a bare `let $x;`
    assigned: bool = False  # given a value somewhere in its scope


def scope(program: A.Program, errors: dict) -> A.Program:
    """The program with its variables renamed by scope; errors: filled with
    (message, note) by the place of the node they are about."""
    probes = []
    for probe in program.probes:
        sc = _Scoper(errors)
        sc.push()
        predicate = sc.expr(probe.predicate) if probe.predicate is not None else None
        body = replace(probe.body, stmts=[sc.stmt(s) for s in probe.body.stmts])
        sc.pop()
        probes.append(replace(probe, predicate=predicate, body=body))
    return replace(program, probes=probes)


class _Scoper:
    """One probe, walked in the order it runs (a value before the variable
    it is assigned to); scopes: the open blocks' variables, innermost last."""

    def __init__(self, errors: dict):
        self.errors = errors
        self.scopes: list = []
        self.count: dict = {}       # name -> variables of that name so far
        self.gone: dict = {}        # name -> the last binding of it whose block ended
        self.reads: list = []       # (binding, Var) of bare `let $x;` variables

    def error(self, message: str, span: Span, note: Optional[str] = None):
        self.errors.setdefault(place(span), (message, note))

    # --- scopes ----------------------------------------------------------------

    def push(self):
        self.scopes.append({})

    def pop(self):
        for name, b in self.scopes.pop().items():
            self.gone[name] = b
            if b.untyped and not b.assigned:
                for var in (v for bb, v in self.reads if bb is b):
                    self.error(f"${name} is declared with no type and never assigned: its type is unknown",
                               var.span, f"as bpftrace 0.27: give it a type or a value (let ${name}: int64; or "
                               f"let ${name} = 0;)")

    def seen(self, name: str) -> Optional[_Binding]:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def fresh(self, name: str) -> str:
        n = self.count.get(name, 0) + 1
        self.count[name] = n
        return name if n == 1 else f"{name}'{n}"

    def bind(self, var: A.Var, how: str, span: Span, untyped: bool = False) -> A.Var:
        b = _Binding(self.fresh(var.name), span, how, untyped, assigned=how != "declaration")
        self.scopes[-1][var.name] = b
        return replace(var, name=b.name)

    # --- statements --------------------------------------------------------------

    def block(self, b: A.Block, bound: Optional[tuple] = None) -> A.Block:
        self.push()
        if bound is not None:
            var, how, span = bound
            bound = self.bind(var, how, span)
        stmts = [self.stmt(s) for s in b.stmts]
        self.pop()
        return replace(b, stmts=stmts), bound

    def stmt(self, s):
        if isinstance(s, A.Block):
            return self.block(s)[0]
        if isinstance(s, A.If):
            cond = self.expr(s.cond)
            then = self.block(s.then)[0]
            other = s.other
            if isinstance(other, A.Block):
                other = self.block(other)[0]
            elif other is not None:         # `else if`: an if in the else block
                self.push()
                other = self.stmt(other)
                self.pop()
            return replace(s, cond=cond, then=then, other=other)
        if isinstance(s, (A.While, A.Unroll)):
            head = "cond" if isinstance(s, A.While) else "count"
            return replace(s, **{head: self.expr(getattr(s, head))}, body=self.block(s.body)[0])
        if isinstance(s, A.For):
            iterable = self.expr(s.iterable)
            old = self.seen(s.var.name)
            if old is not None:
                self.error(f"the loop variable ${s.var.name} is already a variable here (bpftrace "
                                "refuses the shadowing)", s.var.span, self.first(old))
            body, var = self.block(s.body, (s.var, "loop", s.var.span))
            return replace(s, iterable=iterable, var=var, body=body)
        if isinstance(s, A.Let):
            typ = self.node(s.type) if s.type is not None else None
            value = self.expr(s.value) if s.value is not None else None
            old = self.seen(s.var.name)
            if old is not None:
                what = "shadowing it in a block" if old not in self.scopes[-1].values() else "declaring it twice"
                self.error(f"variable ${s.var.name} was already declared: bpftrace 0.27 does not allow {what}",
                                s.span, self.first(old))
                return replace(s, type=typ, value=value, var=replace(s.var, name=old.name))
            var = self.bind(s.var, "declaration" if value is None else "assignment", s.span,
                            untyped=typ is None and value is None)
            return replace(s, var=var, type=typ, value=value)
        if isinstance(s, A.Assign) and isinstance(s.target, A.Var):
            value = self.expr(s.value)
            old = self.seen(s.target.name)
            if old is None and s.op == "=":
                return replace(s, target=self.bind(s.target, "assignment", s.span), value=value)
            if old is None:
                return replace(s, target=self.read(s.target), value=value)     # its error
            old.assigned = True
            return replace(s, target=replace(s.target, name=old.name), value=value)
        return rebuilt(s, self.node)

    # --- expressions ---------------------------------------------------------------

    def expr(self, e):
        return self.node(e)

    def node(self, n):
        if isinstance(n, list):
            return [self.node(x) for x in n]
        if not isinstance(n, A.Node):
            return n
        if isinstance(n, A.Stmt):
            return self.stmt(n)
        if isinstance(n, A.Var):
            return self.read(n)
        if isinstance(n, A.BlockExpr):
            self.push()
            stmts = [self.stmt(s) for s in n.stmts]
            value = self.expr(n.value)
            self.pop()
            return replace(n, stmts=stmts, value=value)
        if isinstance(n, A.IncDec) and isinstance(n.target, A.Var):
            target = self.read(n.target)
            b = self.seen(n.target.name)
            if b is not None:
                b.assigned = True
            return replace(n, target=target)
        if isinstance(n, A.Call) and n.name == "find" and len(n.args) == 3 and isinstance(n.args[2], A.Var):
            v = n.args[2]
            b = self.seen(v.name)
            if b is not None:
                b.assigned = True
                out = replace(v, name=b.name)
            else:           # 0.27 takes it; nothing after it sees the value
                out = replace(v, name=self.fresh(v.name))
            return replace(n, args=self.node(n.args[:2]) + [out])
        return rebuilt(n, self.node)

    def read(self, var: A.Var) -> A.Var:
        b = self.seen(var.name)
        if b is not None:
            if b.untyped:
                self.reads.append((b, var))
            return replace(var, name=b.name)
        gone = self.gone.get(var.name)
        if gone is None:
            self.error(f"${var.name} is read before it is assigned", var.span)
        elif gone.how == "loop":
            self.error(f"${var.name} is not defined here: a loop's variable is the loop's own", var.span,
                       f"${var.name} is the variable of the loop at line {gone.span.line}")
        else:
            self.error(f"${var.name} is not defined here: a variable first assigned in a block is that "
                       "block's own", var.span,
                       f"${var.name} was {'declared' if gone.how == 'declaration' else 'assigned'} at line "
                       f"{gone.span.line}, in a block that has ended (bpftrace 0.27 scopes a variable by "
                       f"block): assign it, or 'let ${var.name};', before that block, or build with "
                       "--bpftrace-output 0.17 (0.17's variables are the probe's)")
        return replace(var, name=f"{var.name}'0")      # no variable's: never assigned

    def first(self, b: _Binding) -> str:
        what = {"declaration": "declared", "assignment": "first assigned", "loop": "a loop's variable"}[b.how]
        return f"${original(b.name)} was {what} at line {b.span.line}, column {b.span.col}"
