"""Current bpftrace's values made by statements: block expressions
(`{ let $x = 5; $x + 1 }`) and `++`/`--` used as a value (`$a = $x++`).

Both are lowered by running their statements before the statement that
uses them (the Typer's `before` list), in the order bpftrace evaluates
them, the value kept in a local of its own; effects.py refuses the places
where running them first would change what bpftrace does.

Scoping, where a build keeps 0.17's probe-wide variables (`--bpftrace-output
0.17`; 0.27's block scopes are scopes.py's): a variable first assigned inside
a block expression is still the block's own, as 0.27 has it (renamed here,
`$__block_N_x`, so two blocks may each have an `$x` of their own type, and a
read after the block finds none), and `let $x` inside a block of a variable
the probe already has is refused, as 0.27 refuses shadowing."""
from __future__ import annotations

from dataclasses import replace

from ... import types as T
from ...diag import Collector
from ...ir import nodes as ir
from . import ast as A
from .trees import rebuilt, walk


# --- scoping: a tree pass before the lowering ------------------------------------

def scope(program: A.Program, diag: Collector) -> A.Program:
    """The program with each block expression's own variables renamed."""
    if not any(isinstance(n, A.BlockExpr) for p in program.probes for n in walk([p.predicate, p.body])):
        return program
    probes = []
    for probe in program.probes:
        sc = _Scoper(diag)
        predicate = sc.node(probe.predicate) if probe.predicate is not None else None
        probes.append(replace(probe, predicate=predicate, body=sc.node(probe.body)))
    return replace(program, probes=probes)


class _Scoper:
    """Walks a probe in the order it is written: the names seen so far are
    the probe's; a block expression's names not seen before it are its own."""

    def __init__(self, diag: Collector):
        self.diag = diag
        self.seen: set = set()
        self.count = 0

    def node(self, n):
        if isinstance(n, list):
            return [self.node(x) for x in n]
        if not isinstance(n, A.Node):
            return n
        if isinstance(n, A.Var):
            self.seen.add(n.name)
            return n
        if isinstance(n, A.BlockExpr):
            n = self.own(n)
        return rebuilt(n, self.node)

    def own(self, b: A.BlockExpr) -> A.BlockExpr:
        declared = {}
        for n in walk(b.stmts):
            if isinstance(n, A.Let):
                if n.var.name in self.seen:
                    self.diag.error(f"variable ${n.var.name} was already declared: bpftrace 0.27 does not allow "
                                    "shadowing it in a block", n.span)
                declared.setdefault(n.var.name, n)
            elif isinstance(n, A.Assign) and isinstance(n.target, A.Var) and n.target.name not in self.seen:
                declared.setdefault(n.target.name, n)
        own = {name for name in declared if name not in self.seen}
        if not own:
            return b
        self.count += 1
        prefix = f"__block_{self.count}_"
        return _rename(b, {name: prefix + name for name in own})


def _rename(n, names: dict):
    if isinstance(n, list):
        return [_rename(x, names) for x in n]
    if not isinstance(n, A.Node):
        return n
    if isinstance(n, A.Var):
        return replace(n, name=names.get(n.name, n.name))
    return rebuilt(n, lambda x: _rename(x, names))


def aggregations_last(program: A.Program, names) -> A.Program:
    """`@m[k] = { stmts; avg($a) }`, an aggregation as a block's value (0.27
    runs it), as `{ stmts; @m[k] = avg($a) }`: the aggregation is then the
    assignment's, which is where it is lowered and where a map is found to
    hold one (names: the aggregations' names). Run after scope()."""
    def agg_value(v):
        stmts = []
        while isinstance(v, A.BlockExpr):
            stmts += v.stmts
            v = v.value
        return (stmts, v) if isinstance(v, A.Call) and v.name in names else None

    def node(n):
        if isinstance(n, list):
            return [node(x) for x in n]
        if not isinstance(n, A.Node):
            return n
        if isinstance(n, A.Assign) and n.op == "=" and isinstance(n.target, A.Map) and \
                isinstance(n.value, A.BlockExpr) and agg_value(n.value):
            stmts, call = agg_value(n.value)
            return A.Block([*node(stmts), replace(n, value=call)], span=n.span)
        return rebuilt(n, node)

    if not any(isinstance(n, A.BlockExpr) for p in program.probes for n in walk([p.body])):
        return program
    return replace(program, probes=[replace(p, body=node(p.body)) for p in program.probes])


# --- typing: the statements first, the value in a local ---------------------------

def _temp(ty, e, typ: T.Type, what: str) -> str:
    """A local of its own for e's value (the same name in the learn and type runs)."""
    names = ty.temps
    name = names.get(id(e))
    if name is None:
        name = names[id(e)] = f"{what}{len(names)}@{e.span.line}:{e.span.col}"
    ty.probe.locals[name] = typ
    ty.defined.add(name)
    return name


def block_value(ty, e: A.BlockExpr) -> ir.Expr:
    """The block's statements run before the statement using it; its value
    is read there (effects.py refuses what would change it in between)."""
    for s in e.stmts:
        node = ty.stmt(s)
        if node is not None:
            ty.before.append(node)
    return ty.expr(e.value)


def incdec_value(ty, e: A.IncDec) -> ir.Expr:
    """`x++`/`x--` (the value before) and `++x`/`--x` (the value after) of a
    variable or a map's entry (an absent entry reads 0 and is then 1, as in
    bpftrace), kept in a local of its own."""
    one = A.Int(1, "1", span=e.span)
    update = A.Assign(e.target, e.op[0] + "=", one, span=e.span)
    if e.prefix:
        step = ty.stmt_Assign(update)
        ty.before.append(step)
        value = ty.expr(e.target)
    else:
        value = ty.expr(e.target)
    if not value.type.is_int:
        ty.err(f"'{e.op}' needs an integer, not {value.type}", e.target.span)
    name = _temp(ty, e, value.type, "incdec")
    ty.before.append(ir.SetLocal(name, value, span=e.span))
    if not e.prefix:
        ty.before.append(ty.stmt_Assign(update))
    return ir.Local(name, type=value.type)


def snapshot(ty, e: A.Var, value: ir.Expr) -> ir.Expr:
    """A $variable read before a `++` (or another part run before the
    statement) that changes it: its value taken into a local of its own
    where bpftrace reads it, before the change runs (effects.py)."""
    name = _temp(ty, e, value.type, "snap")
    ty.before.append(ir.SetLocal(name, value, span=e.span))
    return ir.Local(name, type=value.type)
