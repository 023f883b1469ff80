"""Resolve names and check types. The result, an Analysis, is everything the
later stages need: one Unit per (probe, spec) with the type of every
expression node, the maps with their key and value types, and the output
events (printf/print/exit ...) with their argument types."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Optional

from . import arch as A
from . import ast
from . import builtins as B
from . import providers
from . import types as T
from .btf import BTFError
from .diag import Collector, PlycError
from .kernel_types import KernelTypes

AGG_FUNCS = ("count", "sum", "min", "max", "avg", "quantize", "lquantize",
             "_log2")   # _log2: bcc's log2 histogram, for `plyc argdist`



@dataclass
class MapInfo:
    name: str                      # "@", "@x" or "x"
    index: int                     # order of first appearance
    is_agg: bool
    span: ast.Span
    key_types: Optional[list] = None
    agg: Optional[str] = None      # aggregation function, for @maps
    value_type: Optional[T.Type] = None   # plain value, or the aggregated argument
    lq: Optional[tuple] = None     # lquantize (min, max, step)
    written: bool = False
    key_names: Optional[list] = None   # a name per key where every use agrees, else None (--metrics labels)


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


@dataclass
class Event:
    id: int
    kind: str                      # printf | print | exit | clear | printmap
    span: ast.Span
    parts: list = field(default_factory=list)      # printf: literals and Convs
    arg_types: list = field(default_factory=list)
    map: Optional[str] = None      # clear / printmap


@dataclass
class Unit:
    """One BPF program: a probe body under one of its specs."""
    index: int
    probe: ast.Probe
    spec: ast.Spec
    target: providers.Target
    types: dict = field(default_factory=dict)     # id(expr) -> Type
    locals: dict = field(default_factory=dict)    # $x -> Type
    tp_fields: dict = field(default_factory=dict) # field name -> tracefs.Field
    uses_stack: bool = False
    uses_regs: bool = False                        # caller/regs: needs the kprobe's pt_regs
    args_read: set = field(default_factory=set)    # argN and retval read (an fentry twin's ctx)

    @property
    def provider(self) -> providers.Provider:
        return self.target.provider

    def type(self, node) -> T.Type:
        return self.types[id(node)]


@dataclass
class Analysis:
    program: ast.Program
    units: list
    maps: dict                     # name -> MapInfo, in order of first appearance
    events: list
    nargs: int = 0                 # highest $N used
    uses_target: bool = False
    strsize: int = T.DEFAULT_STRSIZE
    ktypes: Optional[KernelTypes] = None
    arch: str = "x86_64"
    event_of: dict = field(default_factory=dict)   # id(call) -> its Event

    @property
    def uses_stack(self) -> bool:
        return any(u.uses_stack for u in self.units)


def desugar(program: ast.Program) -> None:
    """Predicates become an `if` around the body."""
    for probe in program.probes:
        if probe.predicate is not None:
            probe.body = ast.If(probe.predicate, probe.body, None, span=probe.predicate.span)
            probe.predicate = None


def assigned_locals(node) -> set:
    return {n.target.name for n in ast.walk(node)
            if isinstance(n, ast.Assign) and isinstance(n.target, ast.Dollar)}


class Checker:
    def __init__(self, program: ast.Program, env: dict, strsize: int, btf_path: Optional[str] = None,
                 arch: str = "x86_64"):
        self.program = program
        self.arch = arch
        self.ktypes = KernelTypes(btf_path)
        self.env = env
        self.strsize = strsize
        self.diag = Collector()
        self.maps: dict[str, MapInfo] = {}
        self.events: dict[int, Event] = {}
        self.event_order: list[Event] = []
        self.nargs = 0
        self.uses_target = False
        self.final = False          # second pass: report errors
        self.unit: Optional[Unit] = None
        self.defined: set = set()   # $locals assigned so far on this path
        self.scratch_names: set = set()

    # --- diagnostics ---------------------------------------------------------

    def err(self, message: str, span, note: str = None) -> T.Type:
        if self.final:
            self.diag.error(message, span, note)
        raise _Bail()

    # --- entry ---------------------------------------------------------------

    def run(self) -> Analysis:
        units = self.make_units()
        self.diag.check()
        # Pass 1 learns the value types of plain maps (a map may be read in a
        # probe that comes before the one that writes it); pass 2 reports.
        for final in (False, True):
            self.final = final
            self.events, self.event_order = {}, []
            for unit in units:
                self.check_unit(unit)
        for info in self.maps.values():
            if not info.is_agg and not info.written:
                self.diag.error(f"map '{info.name}' is read but never assigned", info.span)
        self.diag.check()
        return Analysis(self.program, units, self.maps, self.event_order, self.nargs,
                        self.uses_target, self.strsize, self.ktypes, self.arch, self.events)

    def make_units(self) -> list:
        units = []
        for probe in self.program.probes:
            for spec in probe.specs:
                prov = providers.lookup(spec.provider)
                if prov is None:
                    names = ", ".join(sorted({p.name for p in providers.REGISTRY} |
                                             {a for p in providers.REGISTRY for a in p.aliases}))
                    self.diag.error(f"unknown provider '{spec.provider}'", spec.span,
                                    f"providers are: {names}")
                    continue
                try:
                    target = prov.parse(spec)
                except PlycError as e:
                    self.diag.diags.extend(e.diags)
                    continue
                units.append(Unit(len(units), probe, spec, target))
        if not units and not self.diag.diags:
            self.diag.error("the script has no probes", None)
        return units

    def check_unit(self, unit: Unit):
        self.unit = unit
        unit.types = {}
        unit.tp_fields = {}
        unit.uses_stack = False
        unit.uses_regs = False
        unit.args_read = set()
        self.scratch_names = assigned_locals(unit.probe.body)
        self.defined = set()
        if not self.final:
            unit.locals = {}
        self.stmt(unit.probe.body)

    # --- statements ----------------------------------------------------------

    def stmt(self, s: ast.Stmt):
        try:
            getattr(self, "stmt_" + type(s).__name__)(s)
        except _Bail:
            pass

    def stmt_Block(self, s: ast.Block):
        for sub in s.stmts:
            self.stmt(sub)

    def stmt_If(self, s: ast.If):
        try:
            self.cond(s.cond)
        except _Bail:
            pass
        before = set(self.defined)
        self.stmt(s.then)
        after_then = self.defined
        self.defined = set(before)
        if s.other is not None:
            self.stmt(s.other)
        # A $variable assigned on one branch only may be read later; it reads
        # as zero on the other path (it is declared at the top of the probe).
        self.defined = after_then | self.defined

    def stmt_Return(self, s):
        pass

    def stmt_ExprStmt(self, s: ast.ExprStmt):
        e = s.expr
        if not isinstance(e, ast.Call):
            self.err("this expression does nothing; did you mean to assign it or print it?", e.span)
        if e.func in AGG_FUNCS:
            arg = "" if e.func == "count" else "x"
            self.err(f"{e.func}() must be assigned to an @map, e.g. @[comm] = {e.func}({arg});", e.span)
        self.expr(e, statement=True)

    def stmt_Delete(self, s: ast.Delete):
        self.map_ref(s.target, writing=False)

    def stmt_Assign(self, s: ast.Assign):
        target = s.target
        if isinstance(target, ast.Dollar):
            typ = self.expr(s.value)
            if typ.kind in ("void", "ctx"):
                self.err(f"can't assign a value of type {typ} to ${target.name}", s.value.span)
            old = self.unit.locals.get(target.name)
            if old is not None:
                new = T.unify(old, typ)
                if new is None:
                    self.err(f"${target.name} was {old} and can't now hold {typ}", s.value.span)
                typ = new
            self.unit.locals[target.name] = typ
            self.unit.types[id(target)] = typ
            self.defined.add(target.name)
            return
        assert isinstance(target, ast.MapRef)
        if target.is_agg:
            self.agg_assign(target, s.value)
        else:
            typ = self.expr(s.value)
            if typ.kind in ("void", "ctx"):
                self.err(f"can't store a value of type {typ} in a map", s.value.span)
            if isinstance(s.value, ast.Call) and s.value.func in AGG_FUNCS:
                self.err(f"aggregations go in @maps: write @{target.name}[...] = {s.value.func}(...)",
                         target.span)
            info = self.map_ref(target, writing=True)
            if info.value_type is None or not self.final:
                old = info.value_type
                info.value_type = typ if old is None else (T.unify(old, typ) or old)
            elif T.unify(info.value_type, typ) is None:
                self.err(f"map '{info.name}' holds {info.value_type}, not {typ}", s.value.span)
            else:
                info.value_type = T.unify(info.value_type, typ)
            info.written = True

    def agg_assign(self, target: ast.MapRef, value: ast.Expr):
        if not isinstance(value, ast.Call) or value.func not in AGG_FUNCS:
            public = "/".join(f + "()" for f in AGG_FUNCS if not f.startswith("_"))   # _f: internal
            self.err(f"@maps hold aggregations: assign {public}, or drop the '@' for a plain map", value.span)
        info = self.map_ref(target, writing=True)
        func = value.func
        if info.agg is not None and info.agg != func:
            self.err(f"{info.name} is a {info.agg}() aggregation elsewhere, not {func}()", value.span)
        info.agg = func
        arity = {"count": 0, "lquantize": 4}.get(func, 1)
        if len(value.args) != arity:
            self.err(f"{func}() takes {arity} argument{'s' if arity != 1 else ''}, got {len(value.args)}",
                     value.span)
        if func == "count":
            info.value_type = T.U64
        else:
            typ = self.expr(value.args[0])
            if not typ.is_int:
                self.err(f"{func}() needs an integer, got {typ}", value.args[0].span)
            typ = T.Int(8, typ.signed, typ.fmt)
            if func == "lquantize":
                lo, hi, step = (self.const_int(a, "lquantize()'s min, max and step must be constant integers")
                                for a in value.args[1:])
                if step <= 0 or hi <= lo:
                    self.err("lquantize(x, min, max, step) needs min < max and step > 0", value.span)
                if (hi - lo) // step > 1000:
                    self.err("lquantize has more than 1000 buckets; use a larger step", value.span)
                if info.lq is not None and info.lq != (lo, hi, step):
                    self.err(f"{info.name} uses other lquantize bounds elsewhere", value.span)
                info.lq = (lo, hi, step)
            old = info.value_type
            info.value_type = typ if old is None else (T.unify(old, typ) or typ)
        self.unit.types[id(value)] = T.VOID
        info.written = True

    # --- maps ----------------------------------------------------------------

    def map_ref(self, ref: ast.MapRef, writing: bool) -> MapInfo:
        info = self.maps.get(ref.name)
        if info is None:
            info = MapInfo(ref.name, len(self.maps), ref.is_agg, ref.span)
            self.maps[ref.name] = info
        key_types = [self.expr(k) for k in ref.keys]
        for k, kt in zip(ref.keys, key_types):
            if kt.kind not in ("int", "str", "buf", "stack"):
                self.err(f"a value of type {kt} can't be a map key", k.span)
        names = [key_name(k) for k in ref.keys]
        if info.key_names is None:
            info.key_names = names
        else:
            info.key_names = [a if a == b else None for a, b in zip(info.key_names, names)]
        if info.key_types is None:
            info.key_types = key_types
        else:
            if len(info.key_types) != len(key_types):
                self.err(f"{info.name} has {len(info.key_types)} key{'s' if len(info.key_types) != 1 else ''} "
                         f"elsewhere, {len(key_types)} here", ref.span)
            merged = []
            for k, old, new in zip(ref.keys, info.key_types, key_types):
                u = T.unify(old, new)
                if u is None:
                    self.err(f"{info.name} key is {old} elsewhere, {new} here", k.span)
                merged.append(u)
            info.key_types = merged
        self.unit.types[id(ref)] = info.value_type or T.S64
        return info

    # --- expressions ---------------------------------------------------------

    def cond(self, e: ast.Expr) -> T.Type:
        typ = self.expr(e)
        if not typ.is_int:
            self.err(f"a condition must be an integer, got {typ}", e.span,
                     "compare strings with strcmp(a, b) == 0 or a == b")
        return typ

    def const_int(self, e: ast.Expr, what: str = "expected a constant integer") -> int:
        val = B.const_value(e)
        if val is None:
            self.err(what, e.span, "only numbers, and + - * of numbers, are known at compile time")
        self.unit.types[id(e)] = T.S64
        return val

    def expr(self, e: ast.Expr, statement: bool = False) -> T.Type:
        typ = getattr(self, "expr_" + type(e).__name__)(e) if not isinstance(e, ast.Call) \
            else self.call(e, statement)
        self.unit.types[id(e)] = typ
        return typ

    def expr_Num(self, e: ast.Num) -> T.Type:
        if e.value >= 1 << 64:
            self.err("integer constant is larger than 64 bits", e.span)
        return T.U64 if e.value >= 1 << 63 else T.S64

    def expr_Str(self, e: ast.Str) -> T.Type:
        return T.literal_str(e.value)

    def expr_Name(self, e: ast.Name) -> T.Type:
        var = self.unit.provider.var(e.name) or B.variable(e.name)
        if var is None:
            known = sorted(n for n in {v.name for v in self.unit.provider.variables} | {v.name for v in B.VARIABLES}
                           if not n.startswith("_"))   # _names are internal (argdist's lowering)
            other = [p.name for p in providers.REGISTRY if p.var(e.name)]
            note = (f"'{e.name}' is a variable of {', '.join(other)} probes" if other
                    else f"variables here: {', '.join(known)}")
            self.err(f"unknown variable '{e.name}'", e.span, note)
        if var.name in ("caller", "regs"):
            self.unit.uses_regs = True
        if var.name == "retval" or (var.name.startswith("arg") and var.name[3:].isdigit()):
            self.unit.args_read.add(var.name)
        if self.unit.provider.typed is not None and var in self.unit.provider.variables:
            better = self.unit.provider.typed(self.unit.target, e.name, self.ktypes)
            if better is not None:
                return better
        if var.name == "stack":
            if not self.unit.provider.has_stack:
                self.err(f"{self.unit.provider.name} probes have no kernel stack", e.span)
            self.unit.uses_stack = True
        return var.type

    def expr_Dollar(self, e: ast.Dollar) -> T.Type:
        name = e.name
        if name in self.scratch_names:
            if name not in self.defined:
                self.err(f"${name} is read before it is assigned", e.span)
            return self.unit.locals.get(name, T.S64)
        if name == "target":
            self.uses_target = True
            return T.U32
        if name.isdigit():
            if name == "0":
                self.err("$0 is not an argument; arguments start at $1", e.span)
            self.nargs = max(self.nargs, int(name))
            return T.S64
        if name not in self.env:
            self.err(f"${name} is not set: no environment variable {name} and no assignment to ${name}",
                     e.span)
        value = self.env[name]
        return T.S64 if B.env_number(value) is not None else T.literal_str(value.encode())

    def expr_MapRef(self, e: ast.MapRef) -> T.Type:
        if e.is_agg:
            self.err(f"{e.name} is an aggregation and can't be read in a probe",
                     e.span, "keep values you need to read in a plain map (no '@')")
        info = self.map_ref(e, writing=False)
        if info.value_type is None:
            if self.final:
                self.err(f"map '{e.name}' is read but never assigned", e.span)
            return T.S64
        return info.value_type

    def expr_Unary(self, e: ast.Unary) -> T.Type:
        typ = self.expr(e.operand)
        if e.op == "*":
            self.err("pointer dereference with '*' is not supported; use str(), mem() or a cast "
                     "with '->'", e.span)
        if not typ.is_int:
            self.err(f"operator '{e.op}' needs an integer, got {typ}", e.span)
        if e.op == "!":
            return T.S32
        if e.op == "-":
            return T.Int(8, True, typ.fmt if typ.fmt in ("dec", "time") else "dec")
        return T.Int(8, typ.signed)

    def expr_Binary(self, e: ast.Binary) -> T.Type:
        lt, rt = self.expr(e.left), self.expr(e.right)
        if e.op in ("==", "!=") and lt.kind == "str" and rt.kind == "str":
            return T.S32
        for side, typ in ((e.left, lt), (e.right, rt)):
            if not typ.is_int:
                hint = "compare strings with strcmp(a, b) or ==" \
                    if typ.kind == "str" and e.op in ("==", "!=", "<", "<=", ">", ">=") else None
                self.err(f"operator '{e.op}' needs integers, got {typ}", side.span, hint)
        if e.op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            return T.S32
        if e.op in ("<<", ">>", "&", "|", "^", "%"):
            return T.Int(8, lt.signed and rt.signed)
        return T.arith(e.op, lt, rt)

    def expr_Ternary(self, e: ast.Ternary) -> T.Type:
        self.cond(e.cond)
        a, b = self.expr(e.then), self.expr(e.other)
        u = T.unify(a, b)
        if u is None or u.kind not in ("int", "str"):
            self.err(f"the branches of '?:' have different types: {a} and {b}", e.span)
        return u

    def expr_Member(self, e: ast.Member) -> T.Type:
        objt = self.expr(e.obj)
        if objt.kind == "ctx" and objt.pointee == "tracepoint":
            if not e.arrow:
                self.err("use 'data->field' for tracepoint fields", e.span)
            try:
                fld = self.unit.provider.member(self.unit.target, e.field, e.span)
            except PlycError as err:
                d = err.diags[0]
                self.err(d.message, d.span, d.note)
            self.unit.tp_fields[e.field] = fld
            return fld.type
        if objt.kind == "ctx" and objt.pointee == "regs":
            if not e.arrow:
                self.err(f"use 'regs->{e.field}'", e.span)
            names = A.get(self.arch).regs
            if e.field not in names:
                self.err(f"{self.arch} has no register '{e.field}'", e.span, f"registers: {', '.join(names)}")
            return T.U64
        return self.kernel_member(e, objt)

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

    def expr_Index(self, e: ast.Index) -> T.Type:
        objt = self.expr(e.obj)
        idx = self.const_int(e.index, "an index must be a constant integer")
        if objt.kind not in ("buf", "str"):
            self.err(f"can't index a value of type {objt}", e.span)
        if objt.kind == "buf" and objt.btf:
            elem = self.kernel(lambda k: k.element_type(objt), e.span)
            if not 0 <= idx < objt.size // max(1, elem.size):
                self.err(f"index {idx} is out of bounds for {objt.pointee}[{objt.size // max(1, elem.size)}]",
                         e.index.span)
            return elem
        if not 0 <= idx < objt.size:
            self.err(f"index {idx} is out of bounds for {objt}", e.index.span)
        return T.Int(1, objt.kind == "str")

    def expr_Cast(self, e: ast.Cast) -> T.Type:
        src = self.expr(e.operand)
        dst = B.cast_type(e.type) or self.kernel_cast(e.type)
        if not src.is_int and src.kind != "dataloc":
            self.err(f"can't cast {src} to {e.type}", e.span)
        if dst.is_pointer and src.user:
            dst = replace(dst, user=True)
        return dst

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

    def expr_SizeOf(self, e: ast.SizeOf) -> T.Type:
        if B.cast_type(e.type) is None:
            words = tuple(w for w in e.type.words if w not in ("const", "volatile"))
            if e.type.pointers or words[0] not in ("struct", "union", "enum"):
                self.err(f"sizeof({e.type}) is not supported", e.span)
            if self.kernel(lambda k: k.lookup(words), e.span) is None:
                self.err(f"the kernel has no type '{' '.join(words)}'", e.type.span)
        return T.U64

    def call(self, e: ast.Call, statement: bool) -> T.Type:
        func = B.FUNCTIONS.get(e.func)
        if func is None:
            if e.func in AGG_FUNCS:
                arg = "" if e.func == "count" else "x"
                self.err(f"{e.func}() must be assigned to an @map, e.g. @[comm] = {e.func}({arg});", e.span)
            if self.unit.provider.var(e.func) or B.variable(e.func):
                self.err(f"'{e.func}' is a variable, not a function", e.name_span)
            public = sorted(f for f in B.FUNCTIONS if not f.startswith("_"))   # _f: internal
            self.err(f"unknown function '{e.func}'", e.name_span, f"functions are: {', '.join(public)}")
        lo, hi = func.arity
        if not lo <= len(e.args) <= hi:
            want = str(lo) if lo == hi else (f"at least {lo}" if hi >= B.MANY else
                                             f"{lo} or {hi}" if hi == lo + 1 else f"{lo} to {hi}")
            plural = "" if want in ("1", "at least 1") else "s"
            self.err(f"{e.func}() takes {want} argument{plural}, got {len(e.args)}", e.span)
        typ = func.check(self, e)
        if typ.kind == "void" and not statement:
            self.err(f"{e.func}() has no value", e.span)
        return typ

    def event(self, call: ast.Call, kind: str, **kw) -> Event:
        """The output event of one call site (shared by the units of a probe)."""
        ev = self.events.get(id(call))
        if ev is None:
            ev = Event(len(self.event_order) + 1, kind, call.span, **kw)
            self.events[id(call)] = ev
            self.event_order.append(ev)
        else:
            for i, (old, new) in enumerate(zip(ev.arg_types, kw.get("arg_types", []))):
                u = T.unify(old, new)
                if u is None:
                    self.err(f"argument {i + 1} has type {old} for one probe and {new} for another",
                             call.span)
                ev.arg_types[i] = u
        return ev


class _Bail(Exception):
    """Stop checking the current statement (its error is already recorded)."""


def check(program: ast.Program, env: Optional[dict] = None, strsize: int = T.DEFAULT_STRSIZE,
          btf_path: Optional[str] = None, arch: str = "x86_64") -> Analysis:
    desugar(program)
    return Checker(program, dict(os.environ) if env is None else env, strsize, btf_path, arch).run()
