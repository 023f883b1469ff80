"""Current bpftrace's macros (`macro name($x, y, @m) { ... }`), expanded in
the tree before the lowering sees it, as bpftrace's docs describe them
(docs/language.md, "Macros"): hygienic text replacement that knows the
language. A `$x` parameter takes a scratch variable, which the body may
change; an `@m` parameter a map; a bare `y` parameter any expression,
inserted where the body names it (evaluated at each use). Variables the
body makes are its own (renamed `$__NAME_N_x`, one N per expansion); a
map it is not given is an error. A call as a statement inlines the body;
a call as a value needs a body that ends with an expression: the
statements before it make it a block expression (blocks.py). A macro with no parameters can be named bare (`one`).
A bare parameter named where a type goes (`(a *)b`, 0.27's type
substitution) takes a type: `typeof(uint8)`, `typeof($x)`, or the name."""
from __future__ import annotations

from dataclasses import fields, replace

from ...diag import Collector
from ...nesting import MAX_DEPTH, MESSAGE, NOTE, deepest
from . import ast as A
from .parser import children
from .trees import rebuilt


# How many macro calls may be expanded one inside another: far more than
# scripts use, and few enough for the expansion's recursion.
MAX_MACRO_DEPTH = 32


def expand(program: A.Program, diag: Collector, builtins: frozenset = frozenset()) -> A.Program:
    """builtins: the functions a call of another arity than a macro's of
    the same name is left to (bpftrace overloads its macros by arity:
    `macro cpu(x)` beside the stdlib's `cpu()`)."""
    if not program.macros:
        return program
    return _Expander(program.macros, diag, builtins).program(program)


def _clone(n):
    """A copy of a tree (each use of an argument is a node of its own)."""
    if isinstance(n, list):
        return [_clone(x) for x in n]
    if not isinstance(n, A.Node):
        return n
    return rebuilt(n, _clone)


def _too_deep(node) -> bool:
    return deepest(node, children) is not None


# How 0.27 names a parameter of each kind where one is named twice.
_KIND_WORDS = {"var": "Variable", "map": "Map", "expr": "Ident"}


def _params_once(m: A.Macro, diag: Collector):
    """Each parameter of m named once (0.27 refuses `macro m($a, $a)` where
    it is defined, used or not; `a` and `$a` are two names)."""
    seen = set()
    for p in m.params:
        if (p.kind, p.name) in seen:
            shown = ("$" if p.kind == "var" else "") + p.name     # a map's name has its @
            diag.error(f"{_KIND_WORDS[p.kind]} for macro argument has already been used: {shown}", p.span)
        seen.add((p.kind, p.name))


class _Expander:
    def __init__(self, macros: list, diag: Collector, builtins: frozenset = frozenset()):
        self.diag = diag
        self.builtins = builtins
        self.macros: dict = {}
        for m in macros:
            if m.name in self.macros:
                diag.error(f"macro {m.name} is defined twice", m.span)
            self.macros[m.name] = m
            _params_once(m, diag)
        self.count = 0
        self.active: list = []           # the macros being expanded (recursion)
        self.level = 0

    def program(self, prog: A.Program) -> A.Program:
        probes = [replace(p, predicate=self.expr(p.predicate) if p.predicate is not None else None,
                          body=self.block(p.body)) for p in prog.probes]
        return replace(prog, probes=probes, macros=[])

    # --- the tree, rebuilt with calls expanded ----------------------------------

    def block(self, b: A.Block) -> A.Block:
        return replace(b, stmts=[x for s in b.stmts for x in self.stmt(s)])

    def stmt(self, s) -> list:
        if isinstance(s, A.ExprStmt) and self.call_of(s.expr):
            return self.inline(s.expr, value=False)
        return [self.rebuild(s)]

    def expr(self, e):
        if self.call_of(e):
            return self.inline(e, value=True)
        return self.rebuild(e)

    def rebuild(self, node):
        # self.level: how deep the node being rebuilt sits in the expanded
        # tree; deeper than nesting.MAX_DEPTH is refused before the
        # expansion's recursion (macros inside macros) can overflow.
        self.level += 1
        try:
            if self.level > MAX_DEPTH:
                self.diag.error(MESSAGE, node.span, NOTE)
                return node
            return self._rebuild(node)
        finally:
            self.level -= 1

    def _rebuild(self, node):
        changes = {}
        for f in fields(node):
            v = getattr(node, f.name)
            if isinstance(v, A.Block):
                changes[f.name] = self.block(v)
            elif isinstance(v, A.Stmt):
                stmts = self.stmt(v)
                changes[f.name] = stmts[0] if len(stmts) == 1 else A.Block(stmts, span=v.span)
            elif isinstance(v, A.Expr):
                changes[f.name] = self.expr(v)
            elif isinstance(v, A.TypeName) and v.of is not None:
                changes[f.name] = replace(v, of=self.expr(v.of))     # typeof(m()): a macro's value's type
            elif isinstance(v, list) and v and isinstance(v[0], A.Expr):
                changes[f.name] = [self.expr(x) for x in v]
        return replace(node, **changes) if changes else node

    def call_of(self, e) -> bool:
        if isinstance(e, A.Call):
            m = self.macros.get(e.name)
            return m is not None and (len(e.args) == len(m.params) or e.name not in self.builtins)
        return isinstance(e, A.Ident) and e.name in self.macros and not self.macros[e.name].params

    # --- one expansion ----------------------------------------------------------

    def inline(self, call, value: bool):
        m = self.macros[call.name]
        args = call.args if isinstance(call, A.Call) else []
        if len(args) != len(m.params):
            self.diag.error(f"macro {m.name} takes {len(m.params)} argument{'s' if len(m.params) != 1 else ''}, "
                            f"got {len(args)}", call.span)
            return [] if not value else A.Int(0, "0", span=call.span)
        if m.name in self.active:
            self.diag.error(f"macro {m.name} expands into itself", call.span)
            return [] if not value else A.Int(0, "0", span=call.span)
        if len(self.active) >= MAX_MACRO_DEPTH:
            self.diag.error(f"macros expand more than {MAX_MACRO_DEPTH} levels deep here "
                            f"({' -> '.join(self.active[:3])} -> ... -> {m.name})", call.span)
            return [] if not value else A.Int(0, "0", span=call.span)
        if any(_too_deep(a) for a in args):
            # Substituted into the body, a deep argument gets deeper still.
            self.diag.error(MESSAGE, call.span, NOTE)
            return [] if not value else A.Int(0, "0", span=call.span)
        self.count += 1
        renames = _Renames(f"__{m.name}_{self.count}_", m.name, self.diag)
        for p, a in zip(m.params, args):
            got = "a map" if isinstance(a, A.Map) and a.keys is None else "a variable" if isinstance(a, A.Var) \
                else "an expression"
            # 0.27's words
            if p.kind == "var":
                if not isinstance(a, A.Var):
                    self.diag.error(f"Mismatched arg. {m.name}() expects a variable for arg ${p.name} but got {got}.",
                                    a.span)
                renames.vars[p.name] = getattr(a, "name", p.name)
            elif p.kind == "map":
                if not isinstance(a, A.Map) or a.keys is not None:
                    self.diag.error(f"Mismatched arg. {m.name}() expects a map for arg {p.name} but got {got}.",
                                    a.span)
                renames.maps[p.name] = getattr(a, "name", p.name)
            else:
                renames.exprs[p.name] = self.expr(a)
        body = renames.block(m.body)          # a copy: Renames rebuilds every node
        self.active.append(m.name)
        body = self.block(body)
        self.active.pop()
        if _too_deep(body):
            self.diag.error(MESSAGE, call.span, NOTE)
            return [] if not value else A.Int(0, "0", span=call.span)
        if not value:
            return body.stmts
        if len(body.stmts) == 1 and isinstance(body.stmts[0], A.ExprStmt):
            return body.stmts[0].expr
        if body.stmts and isinstance(body.stmts[-1], A.ExprStmt):
            # statements, then the value: a block expression (blocks.py)
            return A.BlockExpr(body.stmts[:-1], body.stmts[-1].expr, span=call.span)
        self.diag.error(f"macro {m.name} is used as a value, but its body does not end with a value", call.span,
                        "end its body with an expression, e.g. { let $y = x; $y + 1 }")
        return A.Int(0, "0", span=call.span)


def _typeof_type(e) -> "A.TypeName | None":
    """The type a `typeof(...)` argument stands for (typeof(typeof(T)) is T,
    as 0.27 nests them through macros): a TypeName, "typeof" of an
    expression for typeof($x); None for anything else."""
    while isinstance(e, A.Call) and e.name == "typeof" and len(e.args) == 1:
        e = e.args[0]
        if isinstance(e, A.TypeName):
            return e
        if not (isinstance(e, A.Call) and e.name == "typeof"):
            return A.TypeName("typeof", of=e, span=e.span)
    return None


class _Renames:
    """The body of one expansion: parameters replaced, its own variables renamed."""

    def __init__(self, prefix: str, name: str, diag: Collector):
        self.prefix, self.name, self.diag = prefix, name, diag
        self.vars: dict = {}
        self.maps: dict = {}
        self.exprs: dict = {}

    def block(self, b):
        return self.node(b)

    def node(self, n):
        if isinstance(n, list):
            return [self.node(x) for x in n]
        if not isinstance(n, A.Node):
            return n
        if isinstance(n, A.Var):
            return replace(n, name=self.vars.get(n.name, self.prefix + n.name))
        if isinstance(n, A.Ident) and n.name in self.exprs:
            return _clone(self.exprs[n.name])
        if isinstance(n, A.TypeName) and n.of is None and n.base in self.exprs:
            return self.type_arg(n, self.exprs[n.base])
        if isinstance(n, A.Map) and n.name not in self.maps:
            self.diag.error(f"Unhygienic access to map: {n.name}. Maps must be passed into the macro as "
                            f"arguments.", n.span, f"in macro {self.name}: 0.27's words")
        if isinstance(n, A.Map):
            return rebuilt(n, self.node, name=self.maps.get(n.name, n.name))
        if isinstance(n, A.Sizeof) and not isinstance(n.arg, A.TypeName):
            return self.sizeof_arg(rebuilt(n, self.node))
        return rebuilt(n, self.node)

    def sizeof_arg(self, n: A.Sizeof) -> A.Sizeof:
        """sizeof(t) and sizeof(t[2]) of a parameter given a type
        (`typeof(uint64 *)`): sizeof of that type, or of an array of it."""
        arg, count = n.arg, None
        if isinstance(arg, A.Index) and isinstance(arg.index, A.Int) and _typeof_type(arg.obj) is not None:
            arg, count = arg.obj, arg.index.value
        tn = _typeof_type(arg)
        if tn is None:
            return n
        if count is not None:
            if tn.array_len is not None or tn.base == "typeof":
                self.diag.error(f"macro {self.name}: an array of this type is not supported by plyc yet", n.span)
                return n
            tn = replace(tn, array_len=count)
        return replace(n, arg=replace(tn, span=arg.span))

    def type_arg(self, tn: A.TypeName, arg) -> A.TypeName:
        """A parameter named where a type goes (`(a *)b`), given a type as
        0.27 passes one, `typeof(uint8)` or `typeof($x)` (or the bare name,
        `uint8`): that type, with the body's pointers and array length."""
        given = _typeof_type(arg)
        if given is not None and given.base != "typeof":
            if given.array_len is not None and (tn.pointers or tn.array_len is not None):
                self.diag.error(f"macro {self.name}: a pointer to or array of an array type is not supported by "
                                "plyc yet", tn.span)
            return replace(given, pointers=given.pointers + tn.pointers,
                           array_len=tn.array_len if tn.array_len is not None else given.array_len, span=tn.span)
        if isinstance(arg, A.Call) and arg.name == "typeof" and len(arg.args) == 1:
            arg = arg.args[0]
            if not isinstance(arg, A.Ident):
                if tn.pointers or tn.array_len is not None:
                    self.diag.error(f"macro {self.name}: a pointer to or array of typeof() of an expression "
                                    "is not supported by plyc yet", tn.span, "pass the type itself: typeof(uint8)")
                return replace(tn, base="typeof", of=_clone(arg))
        if isinstance(arg, A.Ident):
            return replace(tn, base=arg.name)
        return tn
