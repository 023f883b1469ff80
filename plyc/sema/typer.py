"""Sema: the typing rules of the core's terms, and the state a front end's
typer keeps while it walks its tree.

A front end subclasses Sema with its walk: `stmt_X`/`expr` methods for its
own nodes, and the questions the builtins' rules (plyc/builtins.py) ask of
the tree as written: expr, const_int, literal_string, whole_map,
is_positional. Everything here takes typed IR, names, spans and TypeRefs;
a front end's nodes only pass through to be handed back to it (if_'s
branches; a builtin's or an aggregation's call as written, read for its
args, span and func). argdist, which has no statements to walk, calls the
expression rules alone (its Rules: errors under the specifier)."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from .. import arch as A
from .. import builtins as B
from .. import providers
from .. import types as T
from ..btf import BTFError
from ..diag import Collector, PlycError
from ..ir import nodes as ir
from ..ir.fold import value as const_value
from ..ir.maps import unheld, use_keys
from .typeref import TypeRef

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


class Bail(Exception):
    """Stop typing the current statement (its error is already recorded)."""


class Sema:
    """The shared state: st is the front end's (strsize, ktypes, arch, maps,
    locals: unit index -> its $locals' types, from the silent `learn` run)."""

    # How the front end's language compares strings (a note to a comparison
    # of a string that can't be one)
    STRING_COMPARE_HINT: Optional[str] = None
    # The language's own words for the aggregations' errors: plyc/aggregations.py's
    # key -> a template of the same values (str.format), where its tool words them otherwise
    AGG_WORDS: dict = {}

    # --- where the languages differ in the shared builtins' rules (plyc/builtins.py)

    def printf_conversions(self, convs: list, span) -> None:
        """The language's reading of printf's conversions (printf.Conv), in
        place (span: the format's): ply's prints every integer conversion
        whole, and has no %gr."""
        for conv in convs:
            if conv.conv == "gr":
                self.err(f"invalid conversion '{conv.text}' in format string", span,
                         "%gr (GFP flags by name) is bpftrace's")

    def printf_accepts(self, conv, x: ir.Expr, span) -> bool:
        """Whether the language prints x with conv where the shared rule
        (printf.accepts) would not; it may refuse x itself (err)."""
        return False

    def __init__(self, st, diag: Collector, final: bool):
        self.st = st
        self.strsize = st.strsize
        self.ktypes = st.ktypes
        self.arch = st.arch
        self.diag = diag
        self.maps = st.maps
        self.events: dict = {}              # a call as written -> its ir.Event (shared by a probe's specs)
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
        raise Bail()

    # --- probes and statements ------------------------------------------------------

    def run(self) -> ir.Program:
        probes = [self.type_unit(u) for u in self.st.units]
        return ir.Program(probes, self.maps, self.event_order, self.nargs, self.uses_target,
                          self.strsize, self.ktypes, self.arch)

    def type_unit(self, u) -> ir.Probe:
        """u: a probe body under one spec (index, spec, target, body)."""
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
        """The $names a probe body assigns: its scratch locals (the front end's)."""
        raise NotImplementedError

    def stmt(self, s) -> Optional[ir.Stmt]:
        """A front end's statement through its stmt_<node class> method."""
        try:
            return getattr(self, "stmt_" + type(s).__name__)(s)
        except Bail:
            return None

    def body(self, s) -> ir.Stmt:
        return self.stmt(s) or ir.Block([], span=s.span)

    def block(self, stmts, span) -> ir.Block:
        return ir.Block([x for x in map(self.stmt, stmts) if x is not None], span=span)

    def if_(self, cond, then, other, span) -> ir.If:
        """`if (cond) then else other`: cond a function typing the condition
        (its error drops the statement once both branches are typed)."""
        typed = None
        try:
            typed = cond()
        except Bail:
            pass
        before = set(self.defined)
        then = self.body(then)
        after_then = self.defined
        self.defined = set(before)
        other = self.body(other) if other is not None else None
        # A $variable assigned on one branch only may be read later; it reads
        # as zero on the other path (it is declared at the top of the probe).
        self.defined = after_then | self.defined
        if typed is None:
            raise Bail()
        return ir.If(typed, then, other, span=span)

    def set_local(self, name: str, value: ir.Expr, span, value_span) -> ir.SetLocal:
        typ = value.type
        if typ.kind in ("void", "ctx"):
            self.err(f"can't assign a value of type {typ} to ${name}", value_span)
        old = self.probe.locals.get(name)
        if old is not None:
            new = T.unify(old, typ)
            if new is None:
                self.err(f"${name} was {old} and can't now hold {typ}", value_span)
            typ = new
            unheld(value, typ, f"${name}", value_span, self.err)
        self.probe.locals[name] = typ
        self.defined.add(name)
        return ir.SetLocal(name, value, span=span)

    def check_storable(self, value: ir.Expr, value_span):
        if value.type.kind in ("void", "ctx"):
            self.err(f"can't store a value of type {value.type} in a map", value_span)

    def map_store(self, info: ir.Map, keys: list, value: ir.Expr, span, value_span) -> ir.MapStore:
        typ = value.type
        if info.value_type is None or not self.final:
            old = info.value_type
            info.value_type = typ if old is None else (T.unify(old, typ) or old)
        elif T.unify(info.value_type, typ) is None:
            self.err(f"map '{info.name}' holds {info.value_type}, not {typ}", value_span)
        else:
            info.value_type = T.unify(info.value_type, typ)
            unheld(value, info.value_type, f"{info.name}'s value", value_span, self.err)
        info.written = True
        return ir.MapStore(info.name, keys, value, span=span)

    def aggregate(self, info: ir.Map, keys: list, agg, name: str, call, span,
                  keeps_meaning: bool = True) -> ir.Aggregate:
        """`@m[keys] = name(args)`: the aggregation agg (the front end's
        name for it) of its call as written; keeps_meaning: the value is
        what its argument is (ply's max of durations is a duration;
        bpftrace's aggregations hold numbers)."""
        if info.agg is not None and info.agg is not agg:
            self.err(f"{info.name} is a {info.agg.name}() aggregation elsewhere, not {name}()", call.span)
        info.agg = agg
        if len(call.args) != agg.arity:
            self.err(f"{name}() takes {agg.arity} argument{'s' if agg.arity != 1 else ''}, "
                     f"got {len(call.args)}", call.span)
        args = []
        if not agg.takes_x:
            info.value_type = T.U64
        else:
            x = self.expr(call.args[0])
            if not x.type.is_int:
                self.err(f"{name}() needs an integer, got {x.type}", call.args[0].span)
            typ = T.Int(8, x.type.signed, x.type.denotes) if keeps_meaning else T.Int(8, x.type.signed)
            if agg.params:
                info.params = agg.params(self, info, call)
            info.value_type = typ if info.value_type is None else (T.unify(info.value_type, typ) or typ)
            args = [x]
        info.written = True
        return ir.Aggregate(info.name, keys, agg, args, span=span)

    # --- maps -----------------------------------------------------------------------

    def map_info(self, name: str, storage: str, span) -> ir.Map:
        info = self.maps.get(name)
        if info is None:
            info = ir.Map(name, len(self.maps), storage, span)
            self.maps[name] = info
        return info

    def map_keys(self, info: ir.Map, keys: list, spans: list, span, names: list):
        """A reference's keys (names: what --metrics calls them, None if nothing)."""
        if info.key_names is None:
            info.key_names = names
        else:
            info.key_names = [a if a == b else None for a, b in zip(info.key_names, names)]
        use_keys(info, keys, spans, span, self.err)

    # --- expressions ----------------------------------------------------------------

    def condition(self, x: ir.Expr, span, note: str = None) -> ir.Expr:
        if not x.type.is_int:
            self.err(f"a condition must be an integer, got {x.type}", span, note)
        return x

    def int_const(self, value: int) -> ir.IntConst:
        """A literal: s64 (u64 from 2^63), of no sign where it meets another
        type if it is not negative (types.promoted)."""
        return ir.IntConst(value, type=replace(T.U64 if value >= 1 << 63 else T.S64, flexible=value >= 0))

    def variable(self, name: str, span) -> ir.Variable:
        """A built-in variable: the probe's provider's, or one every probe has."""
        probe = self.probe
        var = probe.provider.var(name) or B.variable(name)
        if var is None:
            known = sorted({v.name for v in probe.provider.variables} | {v.name for v in B.VARIABLES})
            other = [p.name for p in providers.REGISTRY if p.var(name)]
            note = (f"'{name}' is a variable of {', '.join(other)} probes" if other
                    else f"variables here: {', '.join(known)}")
            self.err(f"unknown variable '{name}'", span, note)
        if var.name in ("caller", "regs"):
            probe.uses_regs = True
        if var.name == "retval" or (var.name.startswith("arg") and var.name[3:].isdigit()):
            probe.args_read.add(var.name)
        if probe.provider.typed is not None and var in probe.provider.variables:
            better = probe.provider.typed(probe.target, name, self.ktypes)
            if better is not None:
                return ir.Variable(var, type=better)
        if var.name == "stack":
            if not probe.provider.has_stack:
                self.err(f"{probe.provider.name} probes have no kernel stack", span)
            probe.uses_stack = True
        return ir.Variable(var, type=var.type)

    def unary(self, op: str, x: ir.Expr, span) -> ir.Unary:
        typ = x.type
        if not typ.is_int:
            self.err(f"operator '{op}' needs an integer, got {typ}", span)
        if op == "!":
            rt = T.S32
        elif op == "-":
            rt = T.Int(8, True, "time" if typ.denotes == "time" else "")
        else:
            rt = T.Int(8, typ.signed)
        return ir.Unary(op, x, type=rt)

    def binary(self, op: str, left: ir.Expr, right: ir.Expr, left_span, right_span,
               strings: bool = True) -> ir.Binary:
        """`left op right` of typed operands (strings: == and != compare them)."""
        lt, rt = left.type, right.type
        if strings and op in ("==", "!=") and lt.kind == "str" and rt.kind == "str":
            return ir.Binary(op, left, right, type=T.S32)
        for span, typ in ((left_span, lt), (right_span, rt)):
            if not typ.is_int:
                hint = self.STRING_COMPARE_HINT if typ.kind == "str" and op in COMPARISONS else None
                self.err(f"operator '{op}' needs integers, got {typ}", span, hint)
        if op in COMPARISONS + ("&&", "||"):
            typ = T.S32
        elif op in ("<<", ">>"):
            typ = T.Int(8, lt.signed)     # C's: the shifted value's sign
        elif op in ("&", "|", "^", "%"):
            typ = T.Int(8, T.promoted(lt, rt).signed)
        else:
            typ = T.arith(op, lt, rt)
        node = ir.Binary(op, left, right, type=typ)
        v = const_value(node)
        if v is not None and v >= 0 and op not in COMPARISONS + ("&&", "||"):
            node.type = replace(typ, flexible=True)     # a constant, as a literal
        return node

    def ternary(self, cond: ir.Expr, a: ir.Expr, b: ir.Expr, span) -> ir.Ternary:
        """`cond ? a : b` of typed parts (each typed once: nested ternaries
        would otherwise be typed an exponential number of times)."""
        u = T.unify(a.type, b.type)
        if u is None or u.kind not in ("int", "str"):
            self.err(f"the branches of '?:' have different types: {a.type} and {b.type}", span)
        for x in (a, b):
            unheld(x, u, "the value of '?:'", span, self.err)
        return ir.Ternary(cond, a, b, type=u)

    def tp_field(self, name: str, span, here: bool = False) -> ir.TpField:
        """A tracepoint's field, as its provider types it; its errors where
        the provider puts them (the spec, when its format can't be read),
        or all at span (here)."""
        try:
            fld = self.probe.provider.member(self.probe.target, name, span, self.ktypes)
        except PlycError as err:
            d = err.diags[0]
            self.err(d.message, span if here else d.span, d.note)
        self.probe.tp_fields[name] = fld
        return ir.TpField(name, fld, type=fld.type)

    def register(self, name: str, span) -> ir.Register:
        names = A.get(self.arch).regs
        if name not in names:
            self.err(f"{self.arch} has no register '{name}'", span, f"registers: {', '.join(names)}")
        return ir.Register(name, type=T.U64)

    def kernel_member(self, objt: T.Type, field: str, arrow: bool, span, field_span=None,
                      bitfields: bool = False) -> T.Type:
        """obj->field (arrow) / obj.field through a kernel type, from BTF; an
        error about the member is at field_span, if given."""
        at = span if field_span is None else field_span
        if objt.kind == "struct":
            if arrow:
                self.err(f"{objt.pointee} is not a pointer: use '.{field}'", span)
        elif objt.is_pointer:
            if not arrow:
                self.err(f"{objt.pointee} * is a pointer: use '->{field}'", span)
            if not objt.btf and objt.pointee.split()[0] in ("struct", "union"):
                objt = self.kernel(lambda k: k.pointer_to(k.lookup(tuple(objt.pointee.split()[:2])) or 0), span)
            if not objt.btf:
                self.err(f"can't access '{field}' through a {objt}", at,
                         "cast it to a kernel type first, e.g. ((struct file *)arg0)->f_flags")
        else:
            self.err(f"a value of type {objt} has no members", span,
                     "cast it to a kernel type first, e.g. ((struct file *)arg0)->f_flags")
        found = self.kernel(lambda k: k.member(objt.btf, field, bitfields), at)
        if found is None:
            members = self.kernel(lambda k: k.members_of(T.Type("struct", btf=objt.btf)), at)
            self.err(f"{objt.pointee} has no member '{field}'", at,
                     "its members include: " + ", ".join(members) if members else None)
        return found[1]

    def kernel(self, fn, span):
        """Run a BTF query, turning its failures into diagnostics."""
        try:
            return fn(self.ktypes)
        except (BTFError, TypeError) as err:
            self.err(str(err), span)

    def index(self, obj: ir.Expr, idx: int, span, index_span) -> ir.Index:
        """obj[idx] of a string or an array, idx known at compile time."""
        objt = obj.type
        if objt.kind not in ("buf", "str"):
            self.err(f"can't index a value of type {objt}", span)
        if objt.kind == "buf" and objt.btf:
            elem = self.kernel(lambda k: k.element_type(objt), span)
            count = objt.size // max(1, elem.size)
            # a flexible array member (`struct upid numbers[]`) is as long as its holder makes it
            if not 0 <= idx < (count or idx + 1):
                self.err(f"index {idx} is out of bounds for {objt.pointee}[{objt.size // max(1, elem.size)}]",
                         index_span)
            return ir.Index(obj, idx, type=elem)
        if not 0 <= idx < objt.size:
            self.err(f"index {idx} is out of bounds for {objt}", index_span)
        return ir.Index(obj, idx, type=T.Int(1, objt.kind == "str"))

    def cast(self, x: ir.Expr, to: TypeRef, span) -> ir.Cast:
        return self.convert(x, B.cast_type(to) or self.kernel_cast(to), span, str(to))

    def convert(self, x: ir.Expr, dst: T.Type, span, shown: str) -> ir.Cast:
        """x cast to dst (shown: dst as the script wrote it)."""
        src = x.type
        if not src.is_int and src.kind != "dataloc":
            self.err(f"can't cast {src} to {shown}", span)
        if dst.is_pointer and src.user:
            dst = replace(dst, user=True)
        return ir.Cast(x, type=dst)

    def kernel_cast(self, to: TypeRef) -> T.Type:
        words = tuple(w for w in to.words if w not in ("const", "volatile"))
        if words[0] not in ("struct", "union", "enum"):
            self.err(f"unknown type '{to}'", to.span)
        tid = self.kernel(lambda k: k.lookup(words), to.span)
        if tid is None:
            self.err(f"the kernel has no type '{' '.join(words)}'", to.span,
                     f"types come from the kernel's BTF ({self.ktypes.path or '/sys/kernel/btf/vmlinux'})"
                     + ("" if self.ktypes.path else " and the loaded modules' (/sys/kernel/btf/MODULE)"))
        if words[0] == "enum" and not to.pointers:
            return self.kernel(lambda k: k.value_type(tid), to.span)
        if to.pointers != 1:
            self.err(f"casts to '{to}' are not supported: cast to one pointer to a kernel type", to.span)
        return self.kernel(lambda k: k.pointer_to(tid), to.span)

    def sizeof(self, of: TypeRef, span) -> ir.SizeOf:
        t = B.cast_type(of)
        if t is not None:
            return ir.SizeOf(str(of), t.size, type=T.U64)
        words = tuple(w for w in of.words if w not in ("const", "volatile"))
        if of.pointers or words[0] not in ("struct", "union", "enum"):
            self.err(f"sizeof({of}) is not supported", span)
        tid = self.kernel(lambda k: k.lookup(words), span)
        if tid is None:
            self.err(f"the kernel has no type '{' '.join(words)}'", of.span)
        if words[0] != "enum":
            # defined in the C (members only as read), so CO-RE's size
            # relocation has a struct to match, not a declaration
            self.kernel(lambda k: k.use(tid), span)
        return ir.SizeOf(" ".join(w for w in of.words if w != "const"), type=T.U64)

    # --- calls ----------------------------------------------------------------------

    def apply(self, func, name: str, call, statement: bool, span):
        """A function's rule (func.check) on its call as written; span: set
        on the node, where the front end wants it there."""
        lo, hi = func.arity
        if not lo <= len(call.args) <= hi:
            self.err(B.arity_error(name, func.arity, len(call.args)), call.span)
        node = func.check(self, call)
        if isinstance(node, ir.Stmt) and not statement:
            self.err(f"{name}() has no value", call.span)
        if span is not None:
            node.span = span
        return node

    def read_str(self, size: int) -> T.Type:
        """The type of a string read from memory (str(p), str(p, n)) of
        size bytes; a front end may cap it or mark it cut (bpftrace 0.27's)."""
        return T.Str(size)

    def make_call(self, call, args: list, typ: T.Type) -> ir.Call:
        return ir.Call(B.FUNCTIONS[call.func].op, args, type=typ, span=call.span)

    def event(self, call, kind: str, args: list = (), **kw) -> ir.EmitEvent:
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
