"""ply's rules, and the typing of a ply AST into the core IR.

The front end's passes, run in order by plyc.ir.passes.run, which stops
after the first that reported errors:
  resolve  each probe spec to its provider's target (plyc.providers.resolve_specs)
  rules    ply's own: a predicate is an `if` around the body
  learn    a typing run that reports nothing: the value types of plain maps
           (a probe may read a map before the one that writes it comes) and
           of $locals
  type     names resolved, every expression typed, the IR built: `@name`
           is an aggregation map, `name` a plain one; `$x` a scratch local,
           `$target`, `$N` or an environment value; strings 128 bytes
           unless --strsize says otherwise
then the core's passes over the IR (plyc.ir.passes.CORE), and `columns`:
ply's print widths of what the tracer prints.
The AST is never changed; the IR is new nodes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ... import aggregations as AGG
from ... import builtins as B
from ... import providers
from ... import types as T
from ...diag import Collector
from ...ir import fold
from ...ir import nodes as ir
from ...ir import passes
from ...kernel_types import KernelTypes
from ...sema import Sema, TypeRef, looks
from . import ast
from .parser import parse_int


# ply's aggregations, as the core's table (plyc/aggregations.py) names them.
AGGREGATIONS = ("count", "sum", "min", "max", "avg", "quantize", "lquantize")


def aggregation(name: str) -> Optional[AGG.Aggregation]:
    """The aggregation a ply script's `name(...)` means, if any."""
    return AGG.AGGREGATIONS.get(name) if name in AGGREGATIONS else None


def key_name(e) -> Optional[str]:
    """What a map key is called in --metrics labels: a built-in variable's
    name (comm, pid, cpu, stack...), $x's x, a member's name (args->filename:
    filename), or for a function call, its first argument's (str(args->filename));
    None for anything else (the label is then kI)."""
    if isinstance(e, ast.Name):
        return B.ALIASES.get(e.name, e.name)     # kstack is stack
    if isinstance(e, ast.Dollar):
        return e.name.lstrip("$") or None
    if isinstance(e, ast.Member):
        return e.field
    if isinstance(e, ast.Call) and e.args:
        return key_name(e.args[0])
    return None


def _number(e) -> Optional[int]:
    return e.value if isinstance(e, ast.Num) else None


def const_value(e: ast.Expr) -> Optional[int]:
    """The value of a constant integer expression: numbers, and + - * of them."""
    return fold.evaluate(e, fold.COUNTS, _number, ast.Unary, ast.Binary)


def env_number(value: str) -> Optional[int]:
    """An environment value as $NAME reads it: a number, or None (a string)."""
    try:
        return parse_int(value.strip()) if value.strip() else None
    except ValueError:
        return None


def type_ref(tn: ast.TypeName) -> TypeRef:
    return TypeRef(tn.words, tn.pointers, tn.span)


def assigned_locals(node) -> set:
    return {n.target.name for n in ast.walk(node)
            if isinstance(n, ast.Assign) and isinstance(n.target, ast.Dollar)}


@dataclass(eq=False)
class Unit:
    """A probe body under one of its specs, on its way to an ir.Probe."""
    index: int
    probe: ast.Probe
    spec: ir.Spec
    target: providers.Target
    body: ast.Stmt


class Lowering:
    """The state the ply front end's passes share."""

    def __init__(self, program: ast.Program, env: dict, strsize: int, btf_path: Optional[str], arch: str):
        self.ast = program
        self.env = env
        self.strsize = strsize
        self.ktypes = KernelTypes(btf_path)
        self.arch = arch
        self.units: list[Unit] = []
        self.maps: dict[str, ir.Map] = {}   # what `learn` found, completed by `type`
        self.locals: dict = {}              # unit index -> its $locals' types, from `learn`
        self.ir: Optional[ir.Program] = None


def resolve(st: Lowering, diag: Collector):
    specs = [(probe, s) for probe in st.ast.probes for s in probe.specs]
    targets = providers.resolve_specs([ir.Spec(s.provider, s.arg, span=s.span) for _, s in specs], diag, arch=st.arch)
    for (probe, _), (spec, target) in zip(specs, targets):
        if target is not None:
            st.units.append(Unit(len(st.units), probe, spec, target, probe.body))


def rules(st: Lowering, diag: Collector):
    """Predicates become an `if` around the body (a new node: the AST stays)."""
    for u in st.units:
        if u.probe.predicate is not None:
            u.body = ast.If(u.probe.predicate, u.probe.body, None, span=u.probe.predicate.span)


def learn(st: Lowering, diag: Collector):
    Typer(st, diag, final=False).run()


def type_program(st: Lowering, diag: Collector):
    st.ir = Typer(st, diag, final=True).run()


def columns(st: Lowering, diag: Collector):
    """ply pads pid, uid, cpu... to their columns (plyc/sema/looks.py)."""
    looks.attach(st.ir)


PASSES = (resolve, rules, learn, type_program) + passes.on_ir(passes.CORE) + (columns,)


def lower(program: ast.Program, env: dict, strsize: int = T.DEFAULT_STRSIZE,
          btf_path: Optional[str] = None, arch: str = "x86_64") -> ir.Program:
    st = Lowering(program, env, strsize, btf_path, arch)
    passes.run(PASSES, st)
    return st.ir


class Typer(Sema):
    """ply's walk of its tree, typed through the shared rules (plyc/sema);
    also the questions the builtins' and aggregations' rules ask of the tree
    (builtins.py: expr, const_int, literal_string, whole_map, is_positional)."""

    STRING_COMPARE_HINT = "compare strings with strcmp(a, b) or =="

    def __init__(self, st: Lowering, diag: Collector, final: bool):
        super().__init__(st, diag, final)
        self.env = st.env

    def assigned_names(self, body) -> set:
        """The $names a probe body assigns: its scratch locals."""
        return assigned_locals(body)

    # --- statements ----------------------------------------------------------

    def stmt_Block(self, s: ast.Block):
        return self.block(s.stmts, s.span)

    def stmt_If(self, s: ast.If):
        return self.if_(lambda: self.cond(s.cond), s.then, s.other, s.span)

    def stmt_Return(self, s):
        return ir.Return(span=s.span)

    def stmt_ExprStmt(self, s: ast.ExprStmt):
        e = s.expr
        if not isinstance(e, ast.Call):
            self.err("this expression does nothing; did you mean to assign it or print it?", e.span)
        if aggregation(e.func):
            self.err(f"{e.func}() must be assigned to an @map, e.g. @[comm] = "
                     f"{e.func}({aggregation(e.func).example_args});", e.span)
        node = self.call(e, statement=True)
        if isinstance(node, ir.Stmt):
            node.span = s.span
            return node
        return ir.CallStmt(node, span=s.span)

    def stmt_Delete(self, s: ast.Delete):
        info, keys = self.map_ref(s.target, writing=False)
        return ir.MapDelete(info.name, keys, span=s.span)

    def stmt_Assign(self, s: ast.Assign):
        target = s.target
        if isinstance(target, ast.Dollar):
            return self.set_local(target.name, self.expr(s.value), s.span, s.value.span)
        assert isinstance(target, ast.MapRef)
        if target.is_agg:
            return self.agg_assign(target, s.value, s.span)
        value = self.expr(s.value)
        self.check_storable(value, s.value.span)
        if isinstance(s.value, ast.Call) and aggregation(s.value.func):
            self.err(f"aggregations go in @maps: write @{target.name}[...] = {s.value.func}(...)",
                     target.span)
        info, keys = self.map_ref(target, writing=True)
        return self.map_store(info, keys, value, s.span, s.value.span)

    def agg_assign(self, target: ast.MapRef, value: ast.Expr, span) -> ir.Aggregate:
        agg = aggregation(value.func) if isinstance(value, ast.Call) else None
        if agg is None:
            names = "/".join(f + "()" for f in AGGREGATIONS)
            self.err(f"@maps hold aggregations: assign {names}, or drop the '@' for a plain map", value.span)
        info, keys = self.map_ref(target, writing=True)
        return self.aggregate(info, keys, agg, value.func, value, span)

    # --- maps ----------------------------------------------------------------

    def map_ref(self, ref: ast.MapRef, writing: bool) -> tuple:
        info = self.map_info(ref.name, ir.AGGREGATION if ref.is_agg else ir.HASH, ref.span)
        keys = [self.expr(k) for k in ref.keys]
        self.map_keys(info, keys, [k.span for k in ref.keys], ref.span, [key_name(k) for k in ref.keys])
        return info, keys

    def whole_map(self, e) -> Optional[tuple]:
        """(name, is an aggregation) when e names a map with no keys, else None."""
        if isinstance(e, ast.MapRef) and not e.keys:
            return e.name, e.is_agg
        return None

    # --- expressions ---------------------------------------------------------

    def cond(self, e: ast.Expr) -> ir.Expr:
        return self.condition(self.expr(e), e.span, "compare strings with strcmp(a, b) == 0 or a == b")

    def const_int(self, e: ast.Expr, what: str = "expected a constant integer") -> int:
        val = const_value(e)
        if val is None:
            self.err(what, e.span, "only numbers, and + - * of numbers, are known at compile time")
        return val

    def literal_string(self, e) -> Optional[bytes]:
        return e.value if isinstance(e, ast.Str) else None

    def is_positional(self, e) -> bool:
        """$1, $2 ...: the tracer's arguments (unless the probe assigns it)."""
        return isinstance(e, ast.Dollar) and e.name.isdigit() and e.name not in self.scratch_names

    def expr(self, e: ast.Expr, statement: bool = False):
        if isinstance(e, ast.Call):
            return self.call(e, statement)
        node = getattr(self, "expr_" + type(e).__name__)(e)
        node.span = e.span
        return node

    def expr_Num(self, e: ast.Num):
        if e.value >= 1 << 64:
            self.err("integer constant is larger than 64 bits", e.span)
        return self.int_const(e.value)

    def expr_Str(self, e: ast.Str):
        return ir.BytesConst(e.value, type=T.literal_str(e.value))

    def expr_Name(self, e: ast.Name):
        return self.variable(e.name, e.span)

    def expr_Dollar(self, e: ast.Dollar):
        name = e.name
        if name in self.scratch_names:
            if name not in self.defined:
                self.err(f"${name} is read before it is assigned", e.span)
            return ir.Local(name, type=self.probe.locals.get(name, T.S64))
        if name == "target":
            self.uses_target = True
            return ir.Param(ir.TARGET, type=T.U32)
        if name.isdigit():
            if name == "0":
                self.err("$0 is not an argument; arguments start at $1", e.span)
            self.nargs = max(self.nargs, int(name))
            return ir.Param(ir.ARG_NUM, int(name), type=T.S64)
        if name not in self.env:
            self.err(f"${name} is not set: no environment variable {name} and no assignment to ${name}",
                     e.span)
        value = self.env[name]
        number = env_number(value)
        if number is not None:
            return ir.IntConst(number, type=T.S64)
        return ir.BytesConst(value.encode(), type=T.literal_str(value.encode()))

    def expr_MapRef(self, e: ast.MapRef):
        if e.is_agg:
            self.err(f"{e.name} is an aggregation and can't be read in a probe",
                     e.span, "keep values you need to read in a plain map (no '@')")
        info, keys = self.map_ref(e, writing=False)
        # A map no probe writes: the core's maps_written says so.
        return ir.MapRead(info.name, keys, type=info.value_type or T.S64)

    def expr_Unary(self, e: ast.Unary):
        x = self.expr(e.operand)
        if e.op == "*":
            self.err("pointer dereference with '*' is not supported; use str(), mem() or a cast "
                     "with '->'", e.span)
        return self.unary(e.op, x, e.span)

    def expr_Binary(self, e: ast.Binary):
        return self.binary(e.op, self.expr(e.left), self.expr(e.right), e.left.span, e.right.span)

    def expr_Ternary(self, e: ast.Ternary):
        cond = self.cond(e.cond)
        return self.ternary(cond, self.expr(e.then), self.expr(e.other), e.span)

    def expr_Member(self, e: ast.Member):
        obj = self.expr(e.obj)
        objt = obj.type
        if objt.kind == "ctx" and objt.pointee == "fields":
            if not e.arrow:
                self.err("use 'data->field' for tracepoint fields", e.span)
            return self.tp_field(e.field, e.span)
        if objt.kind == "ctx" and objt.pointee == "regs":
            if not e.arrow:
                self.err(f"use 'regs->{e.field}'", e.span)
            return self.register(e.field, e.span)
        return ir.KMember(obj, e.field, type=self.kernel_member(objt, e.field, e.arrow, e.span))

    def expr_Index(self, e: ast.Index):
        obj = self.expr(e.obj)
        idx = self.const_int(e.index, "an index must be a constant integer")
        return self.index(obj, idx, e.span, e.index.span)

    def expr_Cast(self, e: ast.Cast):
        return self.cast(self.expr(e.operand), type_ref(e.type), e.span)

    def expr_SizeOf(self, e: ast.SizeOf):
        return self.sizeof(type_ref(e.type), e.span)

    def call(self, e: ast.Call, statement: bool):
        func = B.FUNCTIONS.get(e.func)
        if func is None:
            if aggregation(e.func):
                self.err(f"{e.func}() must be assigned to an @map, e.g. @[comm] = "
                         f"{e.func}({aggregation(e.func).example_args});", e.span)
            if self.probe.provider.var(e.func) or B.variable(e.func):
                self.err(f"'{e.func}' is a variable, not a function", e.name_span)
            public = sorted(B.FUNCTIONS)
            self.err(f"unknown function '{e.func}'", e.name_span, f"functions are: {', '.join(public)}")
        return self.apply(func, e.func, e, statement, e.span)
