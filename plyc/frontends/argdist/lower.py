"""argdist specifiers straight to the core IR (plyc/ir/nodes.py): a probe
per specifier (and an entry probe for $entry/$latency), its maps, the
statements that update them and the report's sections. Every node's span
is a place in the specifier text (line: the specifier's number in the
command line, column: its offset), so an error is shown under what the
user typed.

The C of each specifier (signature, types, expressions, filter) is parsed
with pycparser (plyc/frontends/argdist/cparse.py) and translated node by
node, typed as the core types its expressions. Names resolve as argdist's
C would: parameters (typed by the signature), tracepoint fields (`args->f`
or bare `f`), $aliases, then constants (plyc/frontends/argdist/ctypes.py).
Members of user-space structs are read from user memory at offsets
computed for the target (ir.UserRead); kernel structs are read by CO-RE
(ir.KMember, typed by BTF).

Entry values ($entry(param), $latency) are kept in plain maps keyed by
thread, as argdist does; the report every interval is the core's
(plyc/ir/report.py): each specifier is one of its sections."""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import Optional

from pycparser import c_ast

from ... import aggregations as AGG
from ... import builtins as B
from ... import layout as L
from ... import tracefs
from ... import providers
from ... import types as T
from ...arch import is_native
from ...btf import BTFError
from ...diag import Collector
from ...ir import fold
from ...ir import nodes as ir
from ...ir.report import Section
from ...kernel_types import KernelTypes
from ...sema import Sema
from ...cachedir import ToolchainError
from ...toolchain import find_cc
from .cparse import CSyntaxError, cast_names, char_constant, int_constant, parse_expr, parse_type, type_words
from .ctypes import (GENERIC_HINT, CType, CTypeError, Int, KernelDomain, UserDomain, include_dirs,
                     kernel_flags, kernel_tree, resolve_header)
from .spec import Part, SpecError, Specifier, probe_spec

ALIASES = {"$PID": "pid", "$TID": "kpid", "$UID": "uid", "$GID": "gid", "$CPU": "cpu"}
STRING_ALIASES = {"$COMM": "comm"}


def _ns_id(var, span) -> ir.Variable:
    """The task's id in the tracer's PID namespace (B.NS_PID, B.NS_TID)."""
    return ir.Variable(var, type=var.type, span=span)


@dataclass
class Lowered:
    program: ir.Program
    sections: list = field(default_factory=list)    # the report's, a Section per specifier
    spec_list: list = field(default_factory=list)   # the Specifiers, in the order of their line numbers
    warnings: list = field(default_factory=list)

    def spec_at(self, line: int) -> Optional[Specifier]:
        """The specifier of a span's line."""
        return self.spec_list[line - 1] if 1 <= line <= len(self.spec_list) else None


@dataclass
class Val:
    """A translated C value: its IR and what plyc knows of its C type.
    `addr` is set for user-memory lvalues (members of user structs)."""
    x: Optional[ir.Expr]
    ct: Optional[CType] = None
    addr: Optional[ir.Expr] = None
    string: bool = False          # a core string (comm)
    user: bool = False            # a pointer into user memory
    tp_args: bool = False         # the tracepoint's `args`
    cast: bool = False            # already converted to `ct` (a parameter, an entry value)


class Context:
    """What lowering needs beyond the specifiers: the target, where types
    and constants come from (created when first needed)."""

    def __init__(self, target: str = "x86_64", sysroot: Optional[str] = None, btf: Optional[str] = None,
                 includes: tuple = (), kernel_headers: Optional[str] = None, verbose: bool = False,
                 spec_text: str = ""):
        self.target = target
        self.abi = L.abi(target)
        self.sysroot = sysroot
        self.btf = btf
        self.includes = list(includes)
        self.kernel_headers = kernel_headers
        self.verbose = verbose
        self.spec_text = spec_text
        self._user = None
        self._kernel = None
        self._cc = None

    def compiler(self) -> tuple:
        """The target's C compiler and flags, whose headers are the user
        types: chosen as plyc build chooses the loader's compiler ($CC,
        $CROSS_COMPILE, the Debian cross compiler; --sysroot), but without
        preparing a sysroot of libraries, which headers don't need."""
        if self._cc is None:
            try:
                cc, flags, sysroot = find_cc(self.target, self.sysroot)
            except ToolchainError as err:
                raise CTypeError(f"the target's C headers can't be read: {err}; `plyc doctor --target "
                                 f"{self.target}` says more") from None
            if sysroot and "--sysroot" not in " ".join(cc + flags):
                flags.append(f"--sysroot={sysroot}")
            self._cc = (cc, [f for f in flags if f.startswith(("-I", "-D", "-U", "--sysroot", "-isystem",
                                                              "-m", "-f"))])
        return self._cc

    def user(self):
        if self._user is None:
            self._user = UserDomain(self.abi, self.compiler, self.includes, self.verbose)
        return self._user

    def kernel(self):
        if self._kernel is None:
            self._kernel = KernelDomain(self.abi, self.target, self.btf, self.compiler, self.includes,
                                        self.tree, self.spec_text, self.verbose)
        return self._kernel

    def missing_includes(self) -> list:
        """The -I headers that are nowhere to be found."""
        if not self.includes:
            return []
        cc, flags = self.compiler()
        search = include_dirs(cc, flags)
        tree = self.tree()
        if tree is not None:
            search += include_dirs(cc, kernel_flags(tree, self.target, cc))
        return [h for h in self.includes if resolve_header(h, search) is None]

    def tree(self):
        """The kernel headers to read -I headers with, if any."""
        native = is_native(self.target)
        return kernel_tree(self.kernel_headers, self.target, native, self.btf)


def _number(x) -> Optional[int]:
    return x.value if isinstance(x, ir.IntConst) else None


def const_value(x: ir.Expr) -> Optional[int]:
    """The value of a constant integer expression (numbers, and + - * of
    them), exact: a specifier's index, not the generated C's arithmetic."""
    return fold.evaluate(x, fold.COUNTS, _number, ir.Unary, ir.Binary)


class Probe:
    """A probe being built: its IR, and the variables of its provider."""

    def __init__(self, probe: ir.Probe, ktypes: KernelTypes):
        self.ir = probe
        self.ktypes = ktypes

    def var(self, name: str, span: ir.Span) -> ir.Variable:
        """A built-in or provider variable, as the probe reads it (the
        shared rule: argdist's names are all known)."""
        rules = Rules(None, self.ktypes)
        rules.probe = self.ir
        v = rules.variable(name, span)
        v.span = span
        return v

    def var_type(self, name: str) -> T.Type:
        """A variable's type as the core types it (a kernel function's
        arguments from its BTF prototype, where it has one)."""
        p = self.ir
        var = p.provider.var(name) or B.variable(name)
        if p.provider.typed is not None and var in p.provider.variables:
            return p.provider.typed(p.target, name, self.ktypes) or var.type
        return var.type


class Rules(Sema):
    """The shared typing rules (plyc/sema) for one specifier: each error
    is argdist's, under the specifier, at the span it is given."""

    def __init__(self, spec: Specifier, ktypes: KernelTypes):
        self.spec = spec
        self.ktypes = ktypes
        self.final = True

    def err(self, message: str, span, note: str = None):
        raise SpecError(message, self.spec, span.col - 1, span.end_col - 1, note)


class Translator:
    """One specifier's C into IR, node by node, typed through the shared
    rules (Rules) where argdist's C means what they say."""

    def __init__(self, spec: Specifier, index: int, strsize: int, ctx: Context, low: "Lowering",
                 probe: Probe, entry: Optional[Probe]):
        self.spec = spec
        self.index = index
        self.strsize = strsize
        self.ctx = ctx
        self.low = low
        self.probe = probe            # the probe the expressions run in
        self.entry = entry            # a return probe's entry probe
        self.entry_params: set = set()
        self.latency = False
        self.part: Optional[Part] = None
        self.parsed = None
        self._param_cts: dict = {}
        self._fields = None
        self.rules = Rules(spec, low.ktypes)
        self.rules.probe = probe.ir

    # --- where things are ------------------------------------------------------

    @property
    def domain(self):
        return self.ctx.user() if (self.spec.is_user or self.spec.probe == "u") else self.ctx.kernel()

    def span(self, node) -> tuple:
        if self.part is None or self.part.start < 0:
            return 0, len(self.spec.raw)
        s, e = self.parsed.span(node)
        return self.part.start + s, self.part.start + e

    def at(self, node=None) -> ir.Span:
        """The IR span of a C node (the specifier's line, its columns)."""
        s, e = self.span(node) if node is not None else (0, len(self.spec.raw))
        return self.low.span(self.index, s, e)

    def bail(self, msg: str, node=None, note: Optional[str] = None):
        if node is None or self.part is None or self.part.start < 0:
            part = self.part if self.part is not None and self.part.start >= 0 else None
            raise self.spec.error(msg, part, note)
        s, e = self.span(node)
        raise SpecError(msg, self.spec, s, e, note)

    # --- the core's typing of what is built --------------------------------------

    def var(self, name: str, node) -> ir.Variable:
        return self.probe.var(name, self.at(node))

    def num(self, value: int, node) -> ir.Expr:
        if value < 0:
            return ir.Unary("-", self.num(-value, node), type=T.Int(8, True), span=self.at(node))
        x = self.rules.int_const(value)
        x.span = self.at(node)
        return x

    def integer(self, x: ir.Expr, op: str, node):
        if not x.type.is_int:
            self.bail(f"operator '{op}' needs integers, got {x.type}", node)

    def unary(self, op: str, x: ir.Expr, node) -> ir.Expr:
        self.integer(x, op, node)
        u = self.rules.unary(op, x, self.at(node))
        u.span = self.at(node)
        return u

    def binary(self, op: str, a: ir.Expr, b: ir.Expr, node) -> ir.Expr:
        self.integer(a, op, node)
        self.integer(b, op, node)
        # C's == of two arrays compares addresses: no string comparison here
        x = self.rules.binary(op, a, b, self.at(node), self.at(node), strings=False)
        x.span = self.at(node)
        return x

    def cast(self, x: ir.Expr, dst: T.Type, node) -> ir.Expr:
        c = self.rules.convert(x, dst, self.at(node), str(dst))
        c.span = self.at(node)
        return c

    def kernel(self, fn, node):
        try:
            return fn(self.low.ktypes)
        except (BTFError, TypeError) as err:
            self.bail(str(err), node)

    def kernel_pointer(self, key: str, node) -> T.Type:
        """The pointer type of a kernel struct (`struct file`), from BTF."""
        words = tuple(key.split())
        tid = self.kernel(lambda k: k.lookup(words), node)
        if tid is None:
            self.bail(f"the kernel has no type '{key}'", node)
        return self.kernel(lambda k: k.pointer_to(tid), node)

    def call(self, name: str, args: list, typ: T.Type, node) -> ir.Call:
        return ir.Call(B.FUNCTIONS[name].op, args, type=typ, span=self.at(node))

    def str_of(self, x: ir.Expr, size: int, node) -> ir.Call:
        return self.call("str", [x], T.Str(size), node)

    def uptr(self, x: ir.Expr, node) -> ir.Call:
        return self.call("uptr", [x], T.Ptr(x.type.pointee or "void", user=True, size=8), node)

    def uread(self, addr: ir.Expr, size: int, signed: bool, node) -> ir.UserRead:
        return ir.UserRead(addr, size, signed, type=T.Int(size, signed), span=self.at(node))

    def entry_value(self, name: str, node) -> ir.MapRead:
        """`name` as the entry probe stored it, for this thread."""
        return self.low.read(name, [self.var("kpid", node)], self.at(node))

    # --- entry points -------------------------------------------------------------

    def expr(self, part: Part) -> Val:
        self.part = part
        values = {p.name for p in self.spec.params} | {"args"}
        names = (cast_names(part.text, values) | set(FIXED_NAMES)) - values
        try:
            self.parsed = parse_expr(part.text, names)
        except CSyntaxError as err:
            if err.offset is not None and part.start >= 0:
                raise SpecError(f"invalid C expression: {err}", self.spec, part.start + err.offset,
                                part.start + (err.end or err.offset + 1)) from None
            raise self.spec.error(f"invalid C expression: {err}", part) from None
        return self.visit(self.parsed.node)

    def ctype_of(self, part: Part) -> CType:
        """A key type (`u32`, `char*`, `size_t`)."""
        self.part = part
        try:
            self.parsed = parse_type(part.text, type_words(part.text) | set(FIXED_NAMES))
        except CSyntaxError:
            raise self.spec.error(f"'{part.text}' is not a C type", part) from None
        return self.resolve(self.parsed.node, part)

    def resolve(self, node, part: Optional[Part] = None) -> CType:
        try:
            return self.domain.resolve(node)
        except CTypeError as err:
            if part is not None:
                raise self.spec.error(str(err), part, err.note) from None
            self.bail(str(err), node, err.note)

    def param_ct(self, pos: int) -> CType:
        if pos not in self._param_cts:
            p = self.spec.params[pos]
            saved = self.part, self.parsed
            try:
                self._param_cts[pos] = self.resolve(p.decl.type, p.part)
            finally:
                self.part, self.parsed = saved
        return self._param_cts[pos]

    # --- values ---------------------------------------------------------------------

    def int_type(self, ct: CType, node) -> T.Type:
        if ct.size not in (1, 2, 4, 8):
            self.bail(f"unknown type '{'s' if ct.signed else 'u'}{ct.size * 8}'", node)
        return T.Int(ct.size, ct.signed)

    def typed(self, x: ir.Expr, ct: Optional[CType], user: bool = False, node=None) -> Val:
        """A raw 64-bit value (a register, an entry map) as a value of C type ct."""
        if ct is None:
            return Val(x, None, user=user)
        if ct.kind == "int":
            return Val(self.cast(x, self.int_type(ct, node), node), ct, cast=True)
        if ct.kind == "ptr":
            t = ct.target
            user = user or ct.user or self.domain.user
            if t is not None and t.kind == "record" and t.kernel:
                return Val(self.cast(x, self.kernel_pointer(t.key, node), node), ct, user=user)
            if t is not None and t.kind == "int" and t.size == 1:
                return Val(self.cast(x, T.Ptr("char"), node), ct, user=user)
            return Val(x, ct, user=user)
        if ct.kind == "record" and ct.kernel:
            self.bail(f"a parameter of type {ct} (a struct passed by value) can't be read", node)
        return Val(x, ct, user=user)

    def rvalue(self, v: Val, node) -> ir.Expr:
        """The IR of a value (user lvalues are read)."""
        if v.tp_args:
            self.bail("'args' is the tracepoint's fields: write args->FIELD", node)
        if v.addr is not None:
            ct = v.ct
            if ct.kind in ("int", "ptr"):
                if ct.size not in (1, 2, 4, 8):
                    self.bail(f"a value of type {ct} can't be read", node)
                return self.uread(v.addr, ct.size, bool(ct.signed), node)
            if ct.kind == "array":
                return v.addr          # an array is its address
            self.bail(f"a value of type {ct} can't be used as a number", node)
        return v.x

    def string(self, v: Val, node, size: int) -> ir.Expr:
        """A value argdist reads as a string (char*), as a string."""
        if v.string:
            return self.str_of(v.x, size, node)
        if v.addr is not None and v.ct is not None and v.ct.kind == "array":
            return self.str_of(self.uptr(v.addr, node), min(size, max(1, v.ct.count)), node)
        x = self.rvalue(v, node)
        if not x.type.is_int and x.type.kind not in ("str", "dataloc"):
            self.bail(f"str() needs a pointer or a string, got {x.type}", node)
        if v.user or self.domain.user or (v.ct is not None and v.ct.user):
            return self.str_of(self.uptr(x, node), size, node)
        return self.str_of(x, size, node)

    # --- nodes --------------------------------------------------------------------------

    def visit(self, node) -> Val:
        fn = getattr(self, "v_" + type(node).__name__, None)
        if fn is None:
            self.bail(f"{_describe(node)} is not supported in argdist expressions", node)
        return fn(node)

    def v_ID(self, node) -> Val:
        name = node.name
        s = self.spec
        if name.startswith("$"):
            return self.special(name, node)
        if name == "args" and s.probe == "t":
            return Val(None, tp_args=True)
        found = s.param(name)
        if found is not None:
            if s.probe == "r":
                self.bail(f"'{name}' is a parameter: in a return probe, read it with $entry({name})", node)
            pos, param = found
            return self.typed(self.var(f"arg{pos}", node), self.param_ct(pos), param.user or s.is_user, node)
        if s.probe == "u":
            m = re.fullmatch(r"arg(\d+)", name)
            if m:
                n = int(m.group(1))
                if not 1 <= n <= 10:
                    self.bail(f"USDT arguments are arg1 to arg10 (argdist counts from 1), not {name}", node)
                return Val(self.var(f"arg{n - 1}", node), None, user=True)
        if s.probe == "t" and name in self.tp_fields(node):
            return Val(self.tp_field(name, node))
        try:
            value = self.domain.constant(name)
        except CTypeError as err:
            if s.probe == "t":
                fields = [f for f in self.tp_fields(node) if not f.startswith("common_")]
                note = err.note if err.note != GENERIC_HINT or not fields else f"its fields are: {', '.join(fields)}"
                self.bail(f"'{name}' is not a field of {s.library}:{s.function} nor a constant plyc can find",
                          node, note)
            self.bail(str(err), node, err.note)
        return Val(self.num(value, node), Int(8, value < 0))

    def tp_fields(self, node) -> dict:
        if self._fields is None:
            try:
                self._fields = tracefs.event_fields(self.spec.library, self.spec.function)
            except tracefs.TracefsError as err:
                raise self.spec.error(str(err), self.spec.where) from None
        return self._fields

    def tp_field(self, name: str, node) -> ir.TpField:
        f = self.rules.tp_field(name, self.at(node), here=True)
        f.span = self.at(node)
        return f

    def special(self, name: str, node) -> Val:
        s = self.spec
        if name == "$retval":
            if s.probe != "r":
                self.bail("$retval is only available in return probes (r)", node)
            return Val(self.var("retval", node), None, user=s.is_user)
        if name == "$latency":
            if s.probe != "r":
                self.bail("$entry() and $latency are only available in return probes (r)", node)
            self.latency = True
            return Val(self.binary("-", self.var("time", node), self.entry_value(f"e{self.index}__lat", node),
                                   node), Int(8, False))
        if name == "$entry":
            self.bail("$entry takes a parameter: $entry(name)", node)
        if name in STRING_ALIASES:
            return Val(self.var(STRING_ALIASES[name], node), string=True)
        if name not in ALIASES:
            self.bail(f"unknown alias '{name}' (known: $retval, $entry(param), $latency, "
                      + ", ".join(list(ALIASES) + list(STRING_ALIASES)) + ")", node)
        return Val(self.var(ALIASES[name], node), Int(4, False))

    def v_Constant(self, node) -> Val:
        if node.type == "char":
            return Val(self.num(char_constant(node.value), node), Int(4, True))
        if node.type == "string":
            self.bail("a string literal can only be STRCMP's first argument", node)
        try:
            value, unsigned, _ = int_constant(node.value)
        except ValueError:
            self.bail(f"'{node.value}' is not an integer", node)
        return Val(self.num(value, node), None)

    def v_FuncCall(self, node) -> Val:
        name = node.name.name if isinstance(node.name, c_ast.ID) else ""
        args = node.args.exprs if node.args is not None else []
        if name == "$entry":
            if self.spec.probe != "r":
                self.bail("$entry() and $latency are only available in return probes (r)", node)
            if len(args) != 1 or not isinstance(args[0], c_ast.ID):
                self.bail("$entry takes a parameter: $entry(name)", node)
            pname = args[0].name
            found = self.spec.param(pname)
            if found is None:
                self.bail(f"$entry({pname}): no such param", args[0],
                          "the parameters are the signature's: r:lib:func(type name, ...)")
            pos, param = found
            self.entry_params.add(pname)
            return self.typed(self.entry_value(f"e{self.index}_{pname}", node), self.param_ct(pos),
                              param.user or self.spec.is_user, node)
        if name == "STRCMP":
            if len(args) != 2 or not (isinstance(args[0], c_ast.Constant) and args[0].type == "string"):
                self.bail('STRCMP takes a string literal and an expression: STRCMP("name", expr)', node)
            lit = codecs.escape_decode(args[0].value[1:-1].encode())[0]
            other = self.visit(args[1])
            text = ir.BytesConst(lit, type=T.literal_str(lit), span=self.at(args[0]))
            cmp = self.call("strcmp", [text, self.string(other, args[1], self.strsize)], T.S32, node)
            return Val(self.binary("==", cmp, self.num(0, node), node), Int(4, True))
        self.bail(f"unknown function '{name or '?'}'", node.name,
                  "argdist's expressions may call $entry(param) and STRCMP(\"literal\", expr)")

    def v_UnaryOp(self, node) -> Val:
        op = node.op
        if op == "sizeof":
            if isinstance(node.expr, c_ast.Typename):
                ct = self.resolve(node.expr)
                if ct.kind == "record" and ct.kernel:
                    if self.kernel(lambda k: k.lookup(tuple(ct.key.split())), node) is None:
                        self.bail(f"the kernel has no type '{ct.key}'", node)
                    return Val(ir.SizeOf(ct.key, type=T.U64, span=self.at(node)), Int(8, False))
                if ct.kind == "record":
                    try:
                        ct = self.domain.headers.complete(ct)
                    except CTypeError as err:
                        self.bail(str(err), node)
                return Val(self.num(ct.size, node), Int(8, False))
            self.bail("sizeof of an expression is not supported: write sizeof(type)", node)
        if op in ("-", "+", "~", "!"):
            v = self.visit(node.expr)
            x = self.rvalue(v, node.expr)
            if op == "+":
                self.integer(x, op, node)
                return Val(x, v.ct)
            return Val(self.unary(op, x, node), v.ct if op != "!" else Int(4, True))
        if op == "*":
            v = self.visit(node.expr)
            if not (v.addr is not None or v.user or self.domain.user):
                self.bail("'*' reads user memory only (a user probe's pointers, __user ones); "
                          "kernel memory is read through struct members ('->')", node)
            return self.deref(v, node.expr, node, self.num(0, node))
        if op == "&":
            self.bail("'&' (an address) is not supported in argdist expressions", node)
        self.bail(f"'{op.strip('p')}' changes a value: argdist's expressions only read", node)

    def v_BinaryOp(self, node) -> Val:
        a, b = self.visit(node.left), self.visit(node.right)
        op = node.op
        if a.string or b.string:
            self.bail("$COMM is a string: compare it with STRCMP(\"name\", $COMM)", node)
        xa, xb = self.rvalue(a, node.left), self.rvalue(b, node.right)
        ct = None
        for p, other, first in ((a, b, True), (b, a, False)):
            if op in ("+", "-") and p.ct is not None and p.ct.kind in ("ptr", "array") and \
                    (p.addr is not None or p.user or self.domain.user) and (other.ct is None or other.ct.kind == "int"):
                # Pointer arithmetic in user memory: scaled by the element size.
                elem = self.complete(p.ct.target, node)
                if first or op == "+":
                    scaled = self.binary("*", xb if first else xa, self.num(max(1, elem.size), node), node)
                    res = self.binary(op, xa if first else xb, scaled, node)
                    return Val(res, CType("ptr", p.ct.size or self.ctx.abi.ptr, self.ctx.abi.ptr, False, "",
                                          p.ct.target), user=True)
        if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            ct = Int(4, True)
        for side, x in ((node.left, xa), (node.right, xb)):
            self.integer(x, op, side)
        return Val(self.binary(op, xa, xb, node), ct)

    def v_TernaryOp(self, node) -> Val:
        c, a, b = self.visit(node.cond), self.visit(node.iftrue), self.visit(node.iffalse)
        cond = self.rules.condition(self.rvalue(c, node.cond), self.at(node.cond))
        xa, xb = self.rvalue(a, node.iftrue), self.rvalue(b, node.iffalse)
        t = self.rules.ternary(cond, xa, xb, self.at(node))
        t.span = self.at(node)
        return Val(t, a.ct)

    def v_Cast(self, node) -> Val:
        ct = self.resolve(node.to_type)
        v = self.visit(node.expr)
        if v.string:
            self.bail(f"$COMM is a string: it can't be cast to {ct}", node)
        inner = self.rvalue(v, node.expr)
        if ct.kind == "void":
            return Val(inner, None)
        if ct.kind in ("record", "array", "func", "float"):
            self.bail(f"casts to {ct} are not supported", node.to_type)
        return self.typed(inner, ct, v.user, node)

    def v_StructRef(self, node) -> Val:
        base = self.visit(node.name)
        field_name = node.field.name
        arrow = node.type == "->"
        if base.tp_args:
            if not arrow:
                self.bail("args is a pointer: write args->" + field_name, node)
            return Val(self.tp_field(field_name, node.field))
        ct = base.ct
        rec = None
        if ct is not None:
            if arrow and ct.kind in ("ptr", "array"):
                rec = ct.target
            elif not arrow and ct.kind == "record":
                rec = ct
            elif arrow and ct.kind == "record":
                self.bail(f"{ct} is not a pointer: use '.{field_name}'", node)
            elif not arrow and ct.kind == "ptr":
                self.bail(f"{ct} is a pointer: use '->{field_name}'", node)
        if rec is not None and rec.kind == "record" and not rec.kernel:
            return self.user_member(base, rec, field_name, arrow, node)
        if rec is not None and rec.kind != "record":
            self.bail(f"a value of type {ct} has no members", node)
        obj = self.rvalue(base, node.name) if arrow or base.addr is None else base.x
        return Val(ir.KMember(obj, field_name, type=self.kernel_member(obj.type, field_name, arrow, node),
                              span=self.at(node)), None)

    def kernel_member(self, objt: T.Type, name: str, arrow: bool, node) -> T.Type:
        """obj->name / obj.name through a kernel type, from BTF. An error
        that names the member points at it, others at the whole access."""
        field = node.field if node.field.coord else node
        return self.rules.kernel_member(objt, name, arrow, self.at(node), self.at(field))

    def complete(self, ct: CType, node) -> CType:
        if ct.kind == "record" and not ct.kernel:
            try:
                return self.domain.headers.complete(ct)
            except CTypeError as err:
                self.bail(str(err), node, err.note)
        if ct.kind == "void":
            return Int(1, False)
        return ct

    def user_member(self, base: Val, rec: CType, name: str, arrow: bool, node) -> Val:
        try:
            lay = self.domain.layout(rec)
        except CTypeError as err:
            self.bail(str(err), node.name, err.note)
        found = lay.find(name, self.domain.headers)
        if found is None:
            names = lay.names()
            self.bail(f"{rec} has no member '{name}'", node.field if node.field.coord else node,
                      "its members are: " + ", ".join(names[:12]) if names else None)
        off, m = found
        if m.bits:
            self.bail(f"'{name}' is a bitfield, which can't be read yet", node)
        addr = self.rvalue(base, node.name) if arrow else base.addr
        if addr is None:
            self.bail(f"{rec} here is not in memory: use '->'", node)
        mt = self.complete(m.type, node)
        maddr = self.binary("+", addr, self.num(off, node), node) if off else addr
        return Val(None, mt, addr=maddr, user=True)

    def v_ArrayRef(self, node) -> Val:
        base = self.visit(node.name)
        ct = base.ct
        if ct is not None and ct.kind in ("ptr", "array") and (base.addr is not None or base.user or
                                                             self.domain.user) and \
                not (ct.target.kind == "record" and ct.target.kernel):
            return self.deref(base, node.name, node, self.rvalue(self.visit(node.subscript), node.subscript))
        idx = self.rvalue(self.visit(node.subscript), node.subscript)
        obj = self.rvalue(base, node.name) if base.addr is None else base.addr
        return Val(self.element(obj, idx, node), None)

    def element(self, obj: ir.Expr, idx: ir.Expr, node) -> ir.Expr:
        """obj[idx] of a kernel array or a string (a constant index)."""
        n = const_value(idx)
        objt = obj.type
        if n is None:
            self.bail("an index must be a constant integer", node.subscript,
                      "only numbers, and + - * of numbers, are known at compile time")
        if objt.kind not in ("buf", "str"):
            self.bail(f"can't index a value of type {objt}", node)
        if objt.kind == "buf" and objt.btf:
            elem = self.kernel(lambda k: k.element_type(objt), node)
            count = objt.size // max(1, elem.size)
            if not 0 <= n < count:
                self.bail(f"index {n} is out of bounds for {objt.pointee}[{count}]", node.subscript)
            return ir.Index(obj, n, type=elem, span=self.at(node))
        if not 0 <= n < objt.size:
            self.bail(f"index {n} is out of bounds for {objt}", node.subscript)
        return ir.Index(obj, n, type=T.Int(1, objt.kind == "str"), span=self.at(node))

    def deref(self, base: Val, base_node, node, index: ir.Expr) -> Val:
        """*p / p[i] of a pointer into user memory."""
        ct = base.ct
        if ct is None or ct.kind not in ("ptr", "array") or ct.target is None:
            self.bail("only pointers to user-space types can be dereferenced here; "
                      "use '->' for kernel structs", node)
        elem = self.complete(ct.target, node)
        start = base.addr if ct.kind == "array" and base.addr is not None else self.rvalue(base, base_node)
        if const_value(index) == 0 and isinstance(index, ir.IntConst):
            addr = start
        else:
            addr = self.binary("+", start, self.binary("*", index, self.num(max(1, elem.size), node), node), node)
        return Val(None, elem, addr=addr, user=True)


FIXED_NAMES = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "size_t", "ssize_t", "bool")


def _describe(node) -> str:
    return {"Assignment": "an assignment", "ExprList": "a comma expression", "CompoundLiteral": "a compound literal",
            "Compound": "a block"}.get(type(node).__name__, f"'{type(node).__name__}'")


def key_value(tr: Translator, type_part: Part, expr_part: Part, strsize: int, hist: bool) -> ir.Expr:
    """One expression as the key (or histogram value) of its declared type."""
    ct = tr.ctype_of(type_part)
    v = tr.expr(expr_part)
    node = tr.parsed.node
    if ct.is_string():
        if hist:
            raise tr.spec.error(f"histograms take integers, not {type_part.text}", type_part)
        return tr.string(v, node, strsize)
    if v.string:
        raise tr.spec.error(f"{expr_part.text} is a string: its type must be char*", type_part)
    x = tr.rvalue(v, node)
    if ct.kind == "int":
        if v.cast and (v.ct.size, v.ct.signed) == (ct.size, ct.signed):
            return x                    # already of that type
        return tr.cast(x, tr.int_type(ct, node), node)
    if ct.kind == "ptr":
        return tr.cast(x, T.U64, node)
    raise tr.spec.error(f"a value of type {type_part.text} can't be collected: argdist's types are "
                        "integers and char*", type_part)


def condition(tr: Translator, spec: Specifier) -> ir.Expr:
    """The specifier's filter."""
    v = tr.expr(spec.filter)
    if v.string:
        raise spec.error("$COMM is a string: compare it with STRCMP(\"name\", $COMM)", spec.filter)
    x = tr.rvalue(v, tr.parsed.node)
    if not x.type.is_int:
        raise spec.error(f"a condition must be an integer, got {x.type}", spec.filter)
    return x


class SpecErrors(SpecError):
    """Several specifiers refused."""

    def __init__(self, errors: list):
        super().__init__(errors[0].message, errors[0].spec, errors[0].start, errors[0].end, errors[0].note)
        self.errors = errors


class Lowering:
    """The program being built: its maps (in the order the statements name
    them), probes, and the report's sections."""

    def __init__(self, ctx: Context):
        self.ktypes = KernelTypes(ctx.btf)
        self.maps: dict = {}
        self.probes: list = []
        self.sections: list = []
        self.entry_types: dict = {}    # entry map name -> the type of what the entry probe stores

    def span(self, index: int, start: int, end: int) -> ir.Span:
        return ir.Span(index + 1, start + 1, index + 1, max(end, start + 1) + 1)

    def map(self, name: str, storage: str, span: ir.Span, key_types: list, value_type: T.Type,
            agg=None, key_names: Optional[list] = None) -> ir.Map:
        m = self.maps.get(name)
        if m is None:
            m = ir.Map(name, len(self.maps), storage, span, key_types, value_type, agg, key_names=key_names)
            self.maps[name] = m
        m.written = True
        return m

    def read(self, name: str, keys: list, span: ir.Span) -> ir.MapRead:
        """A plain map's value (its type: what the entry probe stores)."""
        return ir.MapRead(name, keys, type=self.entry_types[name], span=span)

    def resolve(self, spec: Specifier, index: int, entry: bool) -> Probe:
        provider, arg = probe_spec(spec, entry)
        where = spec.where
        span = self.span(index, where.start, where.end) if where is not None and where.start >= 0 \
            else self.span(index, 0, len(spec.raw))
        diag = Collector()
        ((_, target),) = providers.resolve_specs([ir.Spec(provider, arg, span=span)], diag)
        if diag.diags:
            d = diag.diags[0]
            raise spec.error(d.message, where if where is not None and where.start >= 0 else None, d.note)
        return Probe(ir.Probe(len(self.probes), ir.Spec(provider, arg, span=span), target, ir.Block([])),
                     self.ktypes)


def lower(specs: list, *, strsize: int = 80, tid: Optional[int] = None,
          ctx: Optional[Context] = None) -> Lowered:
    ctx = ctx or Context()
    low = Lowering(ctx)
    errors = []
    for i, spec in enumerate(specs):
        try:
            lower_one(low, spec, i, strsize, tid, ctx)
        except SpecErrors as err:
            errors += err.errors
        except SpecError as err:
            errors.append(err)
        except CTypeError as err:
            errors.append(spec.error(str(err), None, err.note))
    if errors:
        raise errors[0] if len(errors) == 1 else SpecErrors(errors)
    program = ir.Program(low.probes, low.maps, [], strsize=strsize, ktypes=low.ktypes, arch=ctx.target)
    return Lowered(program, low.sections, list(specs))


def lower_one(low: Lowering, spec: Specifier, i: int, strsize: int, tid: Optional[int], ctx: Context):
    main = low.resolve(spec, i, entry=False)
    entry = low.resolve(spec, i, entry=True) if spec.probe == "r" else None
    tr = Translator(spec, i, strsize, ctx, low, main, entry)
    whole = low.span(i, 0, len(spec.raw))
    kpid = B.variable("kpid").type
    # What the entry probe stores, as the return probe reads it.
    if entry is not None:
        for p in spec.params:
            pos, _ = spec.param(p.name)
            low.entry_types[f"e{i}_{p.name}"] = entry.var_type(f"arg{pos}")
        low.entry_types[f"e{i}__lat"] = T.TIME
        low.entry_types[f"e{i}__seen"] = T.S64
    # The filter first, as it runs first: what it reads comes first in the
    # tracer's tables. Each expression's first error is said.
    errors = []
    filt = None
    if spec.filter is not None:
        try:
            filt = condition(tr, spec)
        except SpecError as err:
            errors.append(err)
    hist = spec.kind == "hist"
    keys = []
    for t, e in zip(spec.types, spec.exprs):
        try:
            keys.append(key_value(tr, t, e, strsize, hist))
        except SpecError as err:
            errors.append(err)
    if errors:
        raise errors[0] if len(errors) == 1 else SpecErrors(errors)
    tr.part = None
    conds = []
    if not spec.is_user and spec.probe != "u":
        # -p PID at build or run time: kernel probes filter on it (user
        # probes attach to that process only). The user's PID (and -t's
        # TID) is the tracer's PID namespace's: compared with the task's
        # id there, not $PID's initial one (bcc's).
        pidf = ir.Param(ir.PID_FILTER, type=T.U32, span=whole)
        conds.append(tr.binary("||", tr.binary("==", pidf, tr.num(0, None), None),
                               tr.binary("==", _ns_id(B.NS_PID, whole), pidf, None), None))
    if tid is not None:
        conds.append(tr.binary("==", _ns_id(B.NS_TID, whole), tr.num(tid, None), None))
    if filt is not None:
        conds.append(filt)
    cond = None
    for c in conds:
        cond = c if cond is None else tr.binary("&&", cond, c, None)
    name = f"@s{i}"
    paired = entry is not None and (tr.entry_params or tr.latency)
    if paired:
        # The entry probe first, as its maps come first.
        seen = f"e{i}__seen"
        stores = []
        for pname in sorted(tr.entry_params):
            pos, _ = spec.param(pname)
            stores.append((f"e{i}_{pname}", entry.var(f"arg{pos}", whole)))
        if tr.latency:
            stores.append((f"e{i}__lat", entry.var("time", whole)))
        stores.append((seen, tr.num(1, None)))
        body = []
        for mname, value in stores:
            low.map(mname, ir.HASH, whole, [kpid], low.entry_types[mname], key_names=["kpid"])
            body.append(ir.MapStore(mname, [entry.var("kpid", whole)], value, span=whole))
        entry.ir.body = ir.Block(body, span=whole)
        entry.ir.index = len(low.probes)
        low.probes.append(entry.ir)
    sec = section(spec, name)
    update = aggregate(low, spec, sec, keys, whole)
    if paired:
        # The return probe only counts calls whose entry it saw, and
        # always forgets the entry, whatever the filter says.
        first = ir.If(cond, update, span=whole) if cond is not None else update
        forget = [ir.MapDelete(f"e{i}_{pname}", [tr.var("kpid", None)], span=whole)
                  for pname in sorted(tr.entry_params)]
        if tr.latency:
            forget.append(ir.MapDelete(f"e{i}__lat", [tr.var("kpid", None)], span=whole))
        forget.append(ir.MapDelete(f"e{i}__seen", [tr.var("kpid", None)], span=whole))
        seen = low.read(f"e{i}__seen", [tr.var("kpid", None)], whole)
        body = ir.If(seen, ir.Block([first] + forget, span=whole), span=whole)
    elif cond is not None:
        body = ir.If(cond, ir.Block([update], span=whole), span=whole)
    else:
        body = update
    main.ir.body = ir.Block([body], span=whole)
    main.ir.index = len(low.probes)
    low.probes.append(main.ir)
    low.sections.append(sec)


def aggregate(low: Lowering, spec: Specifier, sec: Section, keys: list, span: ir.Span) -> ir.Aggregate:
    """The specifier's update: a log2 histogram of its value, or a count
    keyed by its values (none: the calls, by an entry probe)."""
    name = sec.map
    if sec.style == "log2":
        x = keys[0]
        m = low.map(name, ir.AGGREGATION, span, [], T.Int(8, x.type.signed, x.type.denotes), AGG.AGGREGATIONS["log2"])
        return ir.Aggregate(name, [], m.agg, [x], span=span)
    if sec.keyless_row:
        keys = []
    # the keys' names as metric labels: what the expressions read
    labels = [label_name(k) for k in sec.key_labels]
    m = low.map(name, ir.AGGREGATION, span, [k.type for k in keys], T.U64, AGG.AGGREGATIONS["count"],
                key_names=labels)
    return ir.Aggregate(name, keys, m.agg, [], span=span)


def section(spec: Specifier, name: str) -> Section:
    """What the report shows of a specifier's map, as bcc's argdist does."""
    exprs = [e.text for e in spec.exprs]
    if spec.kind == "hist":
        return Section(name, "log2", spec.label or ("retval" if spec.default_expr else exprs[0]))
    header = spec.label or spec.raw
    if spec.default_expr and spec.probe != "r":
        return Section(name, "counts", header, keyless_row="total calls")
    labels = ["retval"] if spec.default_expr else exprs
    return Section(name, "counts", header, tuple(labels))


def label_name(text: str) -> str:
    """A key expression as a metric label name: `req->tv_nsec` -> tv_nsec."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    return words[-1] if len(words) == 1 or "->" in text or "." in text else re.sub(r"\W+", "_", text).strip("_")
