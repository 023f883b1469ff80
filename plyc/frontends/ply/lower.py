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
then the core's passes over the IR (plyc.ir.passes.CORE).
The AST is never changed; the IR is new nodes."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ... import aggregations as AGG
from ... import arch as A
from ... import builtins as B
from ... import providers
from ... import types as T
from ...btf import BTFError
from ...diag import Collector, PlycError
from ...ir import nodes as ir
from ...ir import passes
from ...ir.maps import use_keys
from ...kernel_types import KernelTypes
from . import ast
from .parser import parse_int


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


def const_value(e: ast.Expr) -> Optional[int]:
    """The value of a constant integer expression: numbers, and + - * of them."""
    if isinstance(e, ast.Num):
        return e.value
    if isinstance(e, ast.Unary) and e.op == "-":
        v = const_value(e.operand)
        return None if v is None else -v
    if isinstance(e, ast.Binary) and e.op in "+-*":
        a, b = const_value(e.left), const_value(e.right)
        if a is None or b is None:
            return None
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]
    return None


def env_number(value: str) -> Optional[int]:
    """An environment value as $NAME reads it: a number, or None (a string)."""
    try:
        return parse_int(value.strip()) if value.strip() else None
    except ValueError:
        return None


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
    targets = providers.resolve_specs([ir.Spec(s.provider, s.arg, span=s.span) for _, s in specs], diag)
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


PASSES = (resolve, rules, learn, type_program) + passes.on_ir(passes.CORE)


def lower(program: ast.Program, env: dict, strsize: int = T.DEFAULT_STRSIZE,
          btf_path: Optional[str] = None, arch: str = "x86_64") -> ir.Program:
    st = Lowering(program, env, strsize, btf_path, arch)
    passes.run(PASSES, st)
    return st.ir


class _Bail(Exception):
    """Stop typing the current statement (its error is already recorded)."""


class Typer:
    """ply's typing rules, producing IR. Also the interface the builtins'
    and aggregations' rules use (builtins.py: expr, const_int, err, event,
    literal_string, whole_map, is_positional, call, maps, strsize)."""

    def __init__(self, st: Lowering, diag: Collector, final: bool):
        self.st = st
        self.env = st.env
        self.strsize = st.strsize
        self.ktypes = st.ktypes
        self.arch = st.arch
        self.diag = diag
        self.maps = st.maps
        self.events: dict = {}              # ast.Call -> its ir.Event (shared by a probe's specs)
        self.event_order: list = []
        self.nargs = 0
        self.uses_target = False
        self.final = final                  # report errors (else: learn types only)
        self.probe: Optional[ir.Probe] = None
        self.defined: set = set()           # $locals assigned so far on this path
        self.scratch_names: set = set()

    def err(self, message: str, span, note: str = None):
        if self.final:
            self.diag.error(message, span, note)
        raise _Bail()

    def run(self) -> ir.Program:
        probes = [self.type_unit(u) for u in self.st.units]
        return ir.Program(probes, self.maps, self.event_order, self.nargs, self.uses_target,
                          self.strsize, self.ktypes, self.arch)

    def type_unit(self, u: Unit) -> ir.Probe:
        probe = ir.Probe(u.index, u.spec, u.target, ir.Block([]))
        if self.final:
            probe.locals = self.st.locals[u.index]
        else:
            self.st.locals[u.index] = probe.locals
        self.probe = probe
        self.scratch_names = self.assigned_names(u.body)
        self.defined = set()
        body = self.stmt(u.body)
        probe.body = body if isinstance(body, ir.Block) else \
            ir.Block([body] if body else [], span=u.body.span)
        return probe

    def assigned_names(self, body) -> set:
        """The $names a probe body assigns: its scratch locals."""
        return assigned_locals(body)

    # --- statements ----------------------------------------------------------

    def stmt(self, s: ast.Stmt) -> Optional[ir.Stmt]:
        try:
            return getattr(self, "stmt_" + type(s).__name__)(s)
        except _Bail:
            return None

    def body(self, s: ast.Stmt) -> ir.Stmt:
        return self.stmt(s) or ir.Block([], span=s.span)

    def stmt_Block(self, s: ast.Block):
        return ir.Block([x for x in map(self.stmt, s.stmts) if x is not None], span=s.span)

    def stmt_If(self, s: ast.If):
        cond = None
        try:
            cond = self.cond(s.cond)
        except _Bail:
            pass
        before = set(self.defined)
        then = self.body(s.then)
        after_then = self.defined
        self.defined = set(before)
        other = self.body(s.other) if s.other is not None else None
        # A $variable assigned on one branch only may be read later; it reads
        # as zero on the other path (it is declared at the top of the probe).
        self.defined = after_then | self.defined
        if cond is None:
            raise _Bail()
        return ir.If(cond, then, other, span=s.span)

    def stmt_Return(self, s):
        return ir.Return(span=s.span)

    def stmt_ExprStmt(self, s: ast.ExprStmt):
        e = s.expr
        if not isinstance(e, ast.Call):
            self.err("this expression does nothing; did you mean to assign it or print it?", e.span)
        if AGG.get(e.func):
            self.err(f"{e.func}() must be assigned to an @map, e.g. @[comm] = "
                     f"{e.func}({AGG.get(e.func).example_args});", e.span)
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
            value = self.expr(s.value)
            typ = value.type
            if typ.kind in ("void", "ctx"):
                self.err(f"can't assign a value of type {typ} to ${target.name}", s.value.span)
            old = self.probe.locals.get(target.name)
            if old is not None:
                new = T.unify(old, typ)
                if new is None:
                    self.err(f"${target.name} was {old} and can't now hold {typ}", s.value.span)
                typ = new
            self.probe.locals[target.name] = typ
            self.defined.add(target.name)
            return ir.SetLocal(target.name, value, span=s.span)
        assert isinstance(target, ast.MapRef)
        if target.is_agg:
            return self.agg_assign(target, s.value, s.span)
        value = self.expr(s.value)
        typ = value.type
        if typ.kind in ("void", "ctx"):
            self.err(f"can't store a value of type {typ} in a map", s.value.span)
        if isinstance(s.value, ast.Call) and AGG.get(s.value.func):
            self.err(f"aggregations go in @maps: write @{target.name}[...] = {s.value.func}(...)",
                     target.span)
        info, keys = self.map_ref(target, writing=True)
        if info.value_type is None or not self.final:
            old = info.value_type
            info.value_type = typ if old is None else (T.unify(old, typ) or old)
        elif T.unify(info.value_type, typ) is None:
            self.err(f"map '{info.name}' holds {info.value_type}, not {typ}", s.value.span)
        else:
            info.value_type = T.unify(info.value_type, typ)
        info.written = True
        return ir.MapStore(info.name, keys, value, span=s.span)

    def agg_assign(self, target: ast.MapRef, value: ast.Expr, span) -> ir.Aggregate:
        agg = AGG.get(value.func) if isinstance(value, ast.Call) else None
        if agg is None:
            public = "/".join(f + "()" for f in AGG.public_names())
            self.err(f"@maps hold aggregations: assign {public}, or drop the '@' for a plain map", value.span)
        info, keys = self.map_ref(target, writing=True)
        func = value.func
        if info.agg is not None and info.agg is not agg:
            self.err(f"{info.name} is a {info.agg.name}() aggregation elsewhere, not {func}()", value.span)
        info.agg = agg
        arity = agg.arity
        if len(value.args) != arity:
            self.err(f"{func}() takes {arity} argument{'s' if arity != 1 else ''}, got {len(value.args)}",
                     value.span)
        args = []
        if not agg.takes_x:
            info.value_type = T.U64
        else:
            x = self.expr(value.args[0])
            typ = x.type
            if not typ.is_int:
                self.err(f"{func}() needs an integer, got {typ}", value.args[0].span)
            typ = T.Int(8, typ.signed, typ.fmt)
            if agg.params:
                info.params = agg.params(self, info, value)
            old = info.value_type
            info.value_type = typ if old is None else (T.unify(old, typ) or typ)
            args = [x]
        info.written = True
        return ir.Aggregate(info.name, keys, agg, args, span=span)

    # --- maps ----------------------------------------------------------------

    def map_ref(self, ref: ast.MapRef, writing: bool) -> tuple:
        info = self.maps.get(ref.name)
        if info is None:
            info = ir.Map(ref.name, len(self.maps), ir.AGGREGATION if ref.is_agg else ir.HASH, ref.span)
            self.maps[ref.name] = info
        keys = [self.expr(k) for k in ref.keys]
        names = [key_name(k) for k in ref.keys]
        if info.key_names is None:
            info.key_names = names
        else:
            info.key_names = [a if a == b else None for a, b in zip(info.key_names, names)]
        use_keys(info, keys, [k.span for k in ref.keys], ref.span, self.err)
        return info, keys

    def whole_map(self, e) -> Optional[tuple]:
        """(name, is an aggregation) when e names a map with no keys, else None."""
        if isinstance(e, ast.MapRef) and not e.keys:
            return e.name, e.is_agg
        return None

    # --- expressions ---------------------------------------------------------

    def cond(self, e: ast.Expr) -> ir.Expr:
        x = self.expr(e)
        if not x.type.is_int:
            self.err(f"a condition must be an integer, got {x.type}", e.span,
                     "compare strings with strcmp(a, b) == 0 or a == b")
        return x

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
        return ir.IntConst(e.value, type=T.U64 if e.value >= 1 << 63 else T.S64)

    def expr_Str(self, e: ast.Str):
        return ir.BytesConst(e.value, type=T.literal_str(e.value))

    def expr_Name(self, e: ast.Name):
        probe = self.probe
        var = probe.provider.var(e.name) or B.variable(e.name)
        if var is None:
            known = sorted({v.name for v in probe.provider.variables} | {v.name for v in B.VARIABLES})
            other = [p.name for p in providers.REGISTRY if p.var(e.name)]
            note = (f"'{e.name}' is a variable of {', '.join(other)} probes" if other
                    else f"variables here: {', '.join(known)}")
            self.err(f"unknown variable '{e.name}'", e.span, note)
        if var.name in ("caller", "regs"):
            probe.uses_regs = True
        if var.name == "retval" or (var.name.startswith("arg") and var.name[3:].isdigit()):
            probe.args_read.add(var.name)
        if probe.provider.typed is not None and var in probe.provider.variables:
            better = probe.provider.typed(probe.target, e.name, self.ktypes)
            if better is not None:
                return ir.Variable(var, type=better)
        if var.name == "stack":
            if not probe.provider.has_stack:
                self.err(f"{probe.provider.name} probes have no kernel stack", e.span)
            probe.uses_stack = True
        return ir.Variable(var, type=var.type)

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
        typ = x.type
        if e.op == "*":
            self.err("pointer dereference with '*' is not supported; use str(), mem() or a cast "
                     "with '->'", e.span)
        if not typ.is_int:
            self.err(f"operator '{e.op}' needs an integer, got {typ}", e.span)
        if e.op == "!":
            rt = T.S32
        elif e.op == "-":
            rt = T.Int(8, True, typ.fmt if typ.fmt in ("dec", "time") else "dec")
        else:
            rt = T.Int(8, typ.signed)
        return ir.Unary(e.op, x, type=rt)

    def expr_Binary(self, e: ast.Binary):
        return self.binary(e, self.expr(e.left), self.expr(e.right))

    def binary(self, e, left: ir.Expr, right: ir.Expr) -> ir.Binary:
        """`left op right` of typed operands (e: the expression as written)."""
        lt, rt = left.type, right.type
        if e.op in ("==", "!=") and lt.kind == "str" and rt.kind == "str":
            return ir.Binary(e.op, left, right, type=T.S32)
        for side, typ in ((e.left, lt), (e.right, rt)):
            if not typ.is_int:
                hint = "compare strings with strcmp(a, b) or ==" \
                    if typ.kind == "str" and e.op in ("==", "!=", "<", "<=", ">", ">=") else None
                self.err(f"operator '{e.op}' needs integers, got {typ}", side.span, hint)
        if e.op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            typ = T.S32
        elif e.op in ("<<", ">>", "&", "|", "^", "%"):
            typ = T.Int(8, lt.signed and rt.signed)
        else:
            typ = T.arith(e.op, lt, rt)
        return ir.Binary(e.op, left, right, type=typ)

    def expr_Ternary(self, e: ast.Ternary):
        cond = self.cond(e.cond)
        return self.ternary(e, cond, self.expr(e.then), self.expr(e.other))

    def ternary(self, e, cond, a, b) -> ir.Ternary:
        """`cond ? a : b` of typed parts (each typed once: nested ternaries
        would otherwise be typed an exponential number of times)."""
        u = T.unify(a.type, b.type)
        if u is None or u.kind not in ("int", "str"):
            self.err(f"the branches of '?:' have different types: {a.type} and {b.type}", e.span)
        return ir.Ternary(cond, a, b, type=u)

    def expr_Member(self, e: ast.Member):
        obj = self.expr(e.obj)
        objt = obj.type
        if objt.kind == "ctx" and objt.pointee == "tracepoint":
            if not e.arrow:
                self.err("use 'data->field' for tracepoint fields", e.span)
            try:
                fld = self.probe.provider.member(self.probe.target, e.field, e.span)
            except PlycError as err:
                d = err.diags[0]
                self.err(d.message, d.span, d.note)
            self.probe.tp_fields[e.field] = fld
            return ir.TpField(e.field, fld, type=fld.type)
        if objt.kind == "ctx" and objt.pointee == "regs":
            if not e.arrow:
                self.err(f"use 'regs->{e.field}'", e.span)
            names = A.get(self.arch).regs
            if e.field not in names:
                self.err(f"{self.arch} has no register '{e.field}'", e.span, f"registers: {', '.join(names)}")
            return ir.Register(e.field, type=T.U64)
        return ir.KMember(obj, e.field, type=self.kernel_member(e, objt))

    def kernel_member(self, e: ast.Member, objt: T.Type) -> T.Type:
        """obj->field / obj.field through a kernel type, from BTF."""
        if objt.kind == "struct":
            if e.arrow:
                self.err(f"{objt.pointee} is not a pointer: use '.{e.field}'", e.span)
        elif objt.is_pointer:
            if not e.arrow:
                self.err(f"{objt.pointee} * is a pointer: use '->{e.field}'", e.span)
            if not objt.btf and objt.pointee.split()[0] in ("struct", "union"):
                objt = self.kernel(lambda k: k.pointer_to(k.lookup(tuple(objt.pointee.split()[:2])) or 0),
                                   e.span)
            if not objt.btf:
                self.err(f"can't access '{e.field}' through a {objt}", e.span,
                         "cast it to a kernel type first, e.g. ((struct file *)arg0)->f_flags")
        else:
            self.err(f"a value of type {objt} has no members", e.span,
                     "cast it to a kernel type first, e.g. ((struct file *)arg0)->f_flags")
        found = self.kernel(lambda k: k.member(objt.btf, e.field), e.span)
        if found is None:
            members = self.kernel(lambda k: k.members_of(T.Type("struct", btf=objt.btf)), e.span)
            self.err(f"{objt.pointee} has no member '{e.field}'", e.span,
                     "its members include: " + ", ".join(members) if members else None)
        return found[1]

    def kernel(self, fn, span):
        """Run a BTF query, turning its failures into diagnostics."""
        try:
            return fn(self.ktypes)
        except (BTFError, TypeError) as err:
            self.err(str(err), span)

    def expr_Index(self, e: ast.Index):
        obj = self.expr(e.obj)
        objt = obj.type
        idx = self.const_int(e.index, "an index must be a constant integer")
        if objt.kind not in ("buf", "str"):
            self.err(f"can't index a value of type {objt}", e.span)
        if objt.kind == "buf" and objt.btf:
            elem = self.kernel(lambda k: k.element_type(objt), e.span)
            if not 0 <= idx < objt.size // max(1, elem.size):
                self.err(f"index {idx} is out of bounds for {objt.pointee}[{objt.size // max(1, elem.size)}]",
                         e.index.span)
            return ir.Index(obj, idx, type=elem)
        if not 0 <= idx < objt.size:
            self.err(f"index {idx} is out of bounds for {objt}", e.index.span)
        return ir.Index(obj, idx, type=T.Int(1, objt.kind == "str"))

    def expr_Cast(self, e: ast.Cast):
        x = self.expr(e.operand)
        src = x.type
        dst = B.cast_type(e.type) or self.kernel_cast(e.type)
        if not src.is_int and src.kind != "dataloc":
            self.err(f"can't cast {src} to {e.type}", e.span)
        if dst.is_pointer and src.user:
            dst = replace(dst, user=True)
        return ir.Cast(x, type=dst)

    def kernel_cast(self, tn: ast.TypeName) -> T.Type:
        words = tuple(w for w in tn.words if w not in ("const", "volatile"))
        if words[0] not in ("struct", "union", "enum"):
            self.err(f"unknown type '{tn}'", tn.span)
        tid = self.kernel(lambda k: k.lookup(words), tn.span)
        if tid is None:
            self.err(f"the kernel has no type '{' '.join(words)}'", tn.span,
                     f"types come from the kernel's BTF ({self.ktypes.path or '/sys/kernel/btf/vmlinux'})")
        if words[0] == "enum" and not tn.pointers:
            return self.kernel(lambda k: k.value_type(tid), tn.span)
        if tn.pointers != 1:
            self.err(f"casts to '{tn}' are not supported: cast to one pointer to a kernel type", tn.span)
        return self.kernel(lambda k: k.pointer_to(tid), tn.span)

    def expr_SizeOf(self, e: ast.SizeOf):
        t = B.cast_type(e.type)
        if t is not None:
            return ir.SizeOf(str(e.type), t.size, type=T.U64)
        words = tuple(w for w in e.type.words if w not in ("const", "volatile"))
        if e.type.pointers or words[0] not in ("struct", "union", "enum"):
            self.err(f"sizeof({e.type}) is not supported", e.span)
        if self.kernel(lambda k: k.lookup(words), e.span) is None:
            self.err(f"the kernel has no type '{' '.join(words)}'", e.type.span)
        return ir.SizeOf(" ".join(w for w in e.type.words if w != "const"), type=T.U64)

    def call(self, e: ast.Call, statement: bool):
        func = B.FUNCTIONS.get(e.func)
        if func is None:
            if AGG.get(e.func):
                self.err(f"{e.func}() must be assigned to an @map, e.g. @[comm] = "
                         f"{e.func}({AGG.get(e.func).example_args});", e.span)
            if self.probe.provider.var(e.func) or B.variable(e.func):
                self.err(f"'{e.func}' is a variable, not a function", e.name_span)
            public = sorted(B.FUNCTIONS)
            self.err(f"unknown function '{e.func}'", e.name_span, f"functions are: {', '.join(public)}")
        lo, hi = func.arity
        if not lo <= len(e.args) <= hi:
            self.err(B.arity_error(e.func, func.arity, len(e.args)), e.span)
        node = func.check(self, e)
        if isinstance(node, ir.Stmt) and not statement:
            self.err(f"{e.func}() has no value", e.span)
        node.span = e.span
        return node

    def make_call(self, call: ast.Call, args: list, typ: T.Type) -> ir.Call:
        return ir.Call(B.FUNCTIONS[call.func].op, args, type=typ, span=call.span)

    def event(self, call: ast.Call, kind: str, args: list = (), **kw) -> ir.EmitEvent:
        """The output event of one call site (shared by the probes of its specs)."""
        ev = self.events.get(call)
        if ev is None:
            ev = ir.Event(len(self.event_order) + 1, kind, call.span, **kw)
            self.events[call] = ev
            self.event_order.append(ev)
        else:
            for i, (old, new) in enumerate(zip(ev.arg_types, kw.get("arg_types", []))):
                u = T.unify(old, new)
                if u is None:
                    self.err(f"argument {i + 1} has type {old} for one probe and {new} for another",
                             call.span)
                ev.arg_types[i] = u
        return ir.EmitEvent(ev, list(args), span=call.span)
