"""argdist specifiers to a ply script: the same script a user would write by
hand, so the rest of the compiler (checker, codegen, loader) is shared.

The C of each specifier (signature, types, expressions, filter) is parsed
with pycparser (plyc/frontends/argdist/cparse.py) and translated node by node. Names
resolve as argdist's C would: parameters (typed by the signature),
tracepoint fields (`args->f` or bare `f`), $aliases, then constants
(plyc/frontends/argdist/ctypes.py). Members of user-space structs are read from user
memory at offsets computed for the target (`_uread`); kernel structs stay
ply member accesses, typed by BTF and read with CO-RE.

Every piece of generated text remembers the part of the specifier it came
from (a source map, `Lowered.regions`), so an error the ply checker finds
in the lowered script is shown under the specifier the user typed.

Entry values ($entry(param), $latency) are kept in plain maps keyed by
thread, as argdist does. `_log2` is ply's spelling of the core's log2
aggregation, which ply scripts don't see; the report every interval is the
core's (plyc/ir/report.py): each specifier is one of its sections."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from pycparser import c_ast

from ... import tracefs
from ...arch import is_native
from ...ir.report import Section
from ...toolchain import ToolchainError, find_cc
from .cparse import CSyntaxError, cast_names, char_constant, int_constant, parse_expr, parse_type, type_words
from .ctypes import (ABIS, GENERIC_HINT, CType, CTypeError, Int, KernelDomain, UserDomain, include_dirs,
                     kernel_flags, kernel_tree, resolve_header)
from .spec import Part, SpecError, Specifier

ALIASES = {"$PID": "pid", "$TID": "kpid", "$UID": "uid", "$GID": "gid", "$CPU": "cpu"}
STRING_ALIASES = {"$COMM": "comm"}


@dataclass
class Region:
    begin: int                # offsets in the script
    end: int
    spec: int                 # index of the specifier
    start: int                # offsets in its text
    stop: int


@dataclass
class Lowered:
    script: str
    sections: list = field(default_factory=list)    # the report's, a Section per specifier
    regions: list = field(default_factory=list)     # where each piece of the script came from
    spec_list: list = field(default_factory=list)   # the Specifiers
    warnings: list = field(default_factory=list)

    def origin(self, begin: int, end: int, names: tuple = ()) -> Optional[Region]:
        """The innermost piece of a specifier that produced script[begin:end]
        (all of it if one did, else where it starts). Within it, a piece
        whose text is one of `names` (the name an error message quotes)."""
        def size(r):
            return r.end - r.begin
        whole = [r for r in self.regions if r.begin <= begin and end <= r.end]
        start = [r for r in self.regions if r.begin <= begin < max(r.end, r.begin + 1)]
        best = min(whole or start, key=size, default=None)
        if best is not None and names:
            inner = [r for r in self.regions if best.begin <= r.begin and r.end <= best.end and
                     self.script[r.begin:r.end] in names]
            if inner:
                best = min(inner, key=size)
        return best


class Frag:
    """Generated text, and the part of a specifier it came from."""
    __slots__ = ("parts", "origin")

    def __init__(self, *parts, origin: Optional[tuple] = None):
        self.parts = list(parts)
        self.origin = origin      # (spec index, start, end)

    def text(self) -> str:
        return "".join(p.text() if isinstance(p, Frag) else p for p in self.parts)


class Builder:
    def __init__(self):
        self.chunks: list = []
        self.pos = 0
        self.regions: list = []

    def add(self, item):
        if isinstance(item, Frag):
            begin = self.pos
            for p in item.parts:
                self.add(p)
            if item.origin is not None and item.origin[1] >= 0:
                self.regions.append(Region(begin, self.pos, *item.origin))
        else:
            self.chunks.append(item)
            self.pos += len(item)

    def line(self, *items):
        for it in items:
            self.add(it)
        self.add("\n")

    def text(self) -> str:
        return "".join(self.chunks)


@dataclass
class Val:
    """A translated C value: its ply text and what plyc knows of its C type.
    `addr` is set for user-memory lvalues (members of user structs)."""
    frag: Optional[Frag]
    ct: Optional[CType] = None
    addr: Optional[Frag] = None
    string: bool = False          # a ply string (comm)
    user: bool = False            # a pointer into user memory
    tp_args: bool = False         # the tracepoint's `args`
    cast: bool = False            # already a ply cast to `ct` (a parameter, an entry value)


class Context:
    """What lowering needs beyond the specifiers: the target, where types
    and constants come from (created when first needed)."""

    def __init__(self, target: str = "x86_64", sysroot: Optional[str] = None, btf: Optional[str] = None,
                 includes: tuple = (), kernel_headers: Optional[str] = None, verbose: bool = False,
                 spec_text: str = ""):
        self.target = target
        self.abi = ABIS[target]
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


def ply_int(ct: CType) -> str:
    return f"{'s' if ct.signed else 'u'}{ct.size * 8}"


class Translator:
    """One specifier's C into ply, node by node."""

    def __init__(self, spec: Specifier, index: int, strsize: int, ctx: Context):
        self.spec = spec
        self.index = index
        self.strsize = strsize
        self.ctx = ctx
        self.entry_params: set = set()
        self.latency = False
        self.part: Optional[Part] = None
        self.parsed = None
        self._param_cts: dict = {}
        self._fields = None

    # --- where things are ------------------------------------------------------

    @property
    def domain(self):
        return self.ctx.user() if (self.spec.is_user or self.spec.probe == "u") else self.ctx.kernel()

    def span(self, node) -> tuple:
        if self.part is None or self.part.start < 0:
            return 0, len(self.spec.raw)
        s, e = self.parsed.span(node)
        return self.part.start + s, self.part.start + e

    def origin(self, node) -> tuple:
        if self.part is None or self.part.start < 0:
            return (self.index, -1, -1)
        return (self.index, *self.span(node))

    def frag(self, node, *parts) -> Frag:
        return Frag(*parts, origin=self.origin(node))

    def bail(self, msg: str, node=None, note: Optional[str] = None):
        if node is None or self.part is None or self.part.start < 0:
            part = self.part if self.part is not None and self.part.start >= 0 else None
            raise self.spec.error(msg, part, note)
        s, e = self.span(node)
        raise SpecError(msg, self.spec, s, e, note)

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

    def typed(self, text, ct: Optional[CType], user: bool = False, node=None) -> Val:
        """A raw 64-bit value (a register, an entry map) as a value of C type ct."""
        frag = text if isinstance(text, Frag) else Frag(text)
        if ct is None:
            return Val(frag, None, user=user)
        if ct.kind == "int":
            return Val(Frag(f"({ply_int(ct)})", frag), ct, cast=True)
        if ct.kind == "ptr":
            t = ct.target
            user = user or ct.user or self.domain.user
            if t is not None and t.kind == "record" and t.kernel:
                return Val(Frag(f"(({t.key} *)", frag, ")"), ct, user=user)
            if t is not None and t.kind == "int" and t.size == 1:
                return Val(Frag("((char *)", frag, ")"), ct, user=user)
            return Val(frag, ct, user=user)
        if ct.kind == "record" and ct.kernel:
            self.bail(f"a parameter of type {ct} (a struct passed by value) can't be read", node)
        return Val(frag, ct, user=user)

    def rvalue(self, v: Val, node) -> Frag:
        """The ply text of a value (user lvalues are read)."""
        if v.tp_args:
            self.bail("'args' is the tracepoint's fields: write args->FIELD", node)
        if v.addr is not None:
            ct = v.ct
            if ct.kind in ("int", "ptr"):
                if ct.size not in (1, 2, 4, 8):
                    self.bail(f"a value of type {ct} can't be read", node)
                return self.frag(node, "_uread(", v.addr, f", {ct.size}, {int(ct.signed)})")
            if ct.kind == "array":
                return v.addr          # an array is its address
            self.bail(f"a value of type {ct} can't be used as a number", node)
        return v.frag

    def string(self, v: Val, node, size: int) -> Frag:
        """str() of a value argdist reads as a string (char*)."""
        if v.string:
            return Frag("str(", v.frag, f", {size})")
        if v.addr is not None and v.ct is not None and v.ct.kind == "array":
            return Frag("str(uptr(", v.addr, f"), {min(size, max(1, v.ct.count))})")
        text = self.rvalue(v, node)
        if v.user or self.domain.user or (v.ct is not None and v.ct.user):
            return Frag("str(uptr(", text, f"), {size})")
        return Frag("str(", text, f", {size})")

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
            return Val(self.frag(node, "data"), tp_args=True)
        found = s.param(name)
        if found is not None:
            if s.probe == "r":
                self.bail(f"'{name}' is a parameter: in a return probe, read it with $entry({name})", node)
            pos, param = found
            v = self.typed(f"arg{pos}", self.param_ct(pos), param.user or s.is_user, node)
            return Val(self.frag(node, v.frag), v.ct, user=v.user, cast=v.cast)
        if s.probe == "u":
            m = re.fullmatch(r"arg(\d+)", name)
            if m:
                n = int(m.group(1))
                if not 1 <= n <= 10:
                    self.bail(f"USDT arguments are arg1 to arg10 (argdist counts from 1), not {name}", node)
                return Val(self.frag(node, f"arg{n - 1}"), None, user=True)
        if s.probe == "t" and name in self.tp_fields(node):
            return Val(self.frag(node, f"data->{name}"))
        try:
            value = self.domain.constant(name)
        except CTypeError as err:
            if s.probe == "t":
                fields = [f for f in self.tp_fields(node) if not f.startswith("common_")]
                note = err.note if err.note != GENERIC_HINT or not fields else f"its fields are: {', '.join(fields)}"
                self.bail(f"'{name}' is not a field of {s.library}:{s.function} nor a constant plyc can find",
                          node, note)
            self.bail(str(err), node, err.note)
        text = str(value) if value >= 0 else f"({value})"
        return Val(self.frag(node, text), Int(8, value < 0))

    def tp_fields(self, node) -> dict:
        if self._fields is None:
            try:
                self._fields = tracefs.event_fields(self.spec.library, self.spec.function)
            except tracefs.TracefsError as err:
                raise self.spec.error(str(err), self.spec.where) from None
        return self._fields

    def special(self, name: str, node) -> Val:
        s = self.spec
        if name == "$retval":
            if s.probe != "r":
                self.bail("$retval is only available in return probes (r)", node)
            return Val(self.frag(node, "retval"), None, user=s.is_user)
        if name == "$latency":
            if s.probe != "r":
                self.bail("$entry() and $latency are only available in return probes (r)", node)
            self.latency = True
            return Val(self.frag(node, f"(time - e{self.index}__lat[kpid])"), Int(8, False))
        if name == "$entry":
            self.bail("$entry takes a parameter: $entry(name)", node)
        if name in STRING_ALIASES:
            return Val(self.frag(node, STRING_ALIASES[name]), string=True)
        if name not in ALIASES:
            self.bail(f"unknown alias '{name}' (known: $retval, $entry(param), $latency, "
                      + ", ".join(list(ALIASES) + list(STRING_ALIASES)) + ")", node)
        return Val(self.frag(node, ALIASES[name]), Int(4, False))

    def v_Constant(self, node) -> Val:
        if node.type == "char":
            return Val(self.frag(node, str(char_constant(node.value))), Int(4, True))
        if node.type == "string":
            self.bail("a string literal can only be STRCMP's first argument", node)
        try:
            value, unsigned, _ = int_constant(node.value)
        except ValueError:
            self.bail(f"'{node.value}' is not an integer", node)
        return Val(self.frag(node, str(value)), None)

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
            v = self.typed(f"e{self.index}_{pname}[kpid]", self.param_ct(pos), param.user or self.spec.is_user,
                           node)
            return Val(self.frag(node, v.frag), v.ct, user=v.user, cast=v.cast)
        if name == "STRCMP":
            if len(args) != 2 or not (isinstance(args[0], c_ast.Constant) and args[0].type == "string"):
                self.bail('STRCMP takes a string literal and an expression: STRCMP("name", expr)', node)
            lit = args[0].value
            other = self.visit(args[1])
            return Val(self.frag(node, f"(strcmp({lit}, ", self.string(other, args[1], self.strsize), ") == 0)"),
                       Int(4, True))
        self.bail(f"unknown function '{name or '?'}'", node.name,
                  "argdist's expressions may call $entry(param) and STRCMP(\"literal\", expr)")

    def v_UnaryOp(self, node) -> Val:
        op = node.op
        if op == "sizeof":
            if isinstance(node.expr, c_ast.Typename):
                ct = self.resolve(node.expr)
                if ct.kind == "record" and ct.kernel:
                    return Val(self.frag(node, f"sizeof({ct.key})"), Int(8, False))
                if ct.kind == "record":
                    try:
                        ct = self.domain.headers.complete(ct)
                    except CTypeError as err:
                        self.bail(str(err), node)
                return Val(self.frag(node, str(ct.size)), Int(8, False))
            self.bail("sizeof of an expression is not supported: write sizeof(type)", node)
        if op in ("-", "+", "~", "!"):
            v = self.visit(node.expr)
            return Val(self.frag(node, f"({op}", self.rvalue(v, node.expr), ")"), v.ct if op != "!" else Int(4, True))
        if op == "*":
            v = self.visit(node.expr)
            if not (v.addr is not None or v.user or self.domain.user):
                self.bail("'*' reads user memory only (a user probe's pointers, __user ones); "
                          "kernel memory is read through struct members ('->')", node)
            return self.deref(v, node.expr, node, Frag("0"))
        if op == "&":
            self.bail("'&' (an address) is not supported in argdist expressions", node)
        self.bail(f"'{op.strip('p')}' changes a value: argdist's expressions only read", node)

    def v_BinaryOp(self, node) -> Val:
        a, b = self.visit(node.left), self.visit(node.right)
        op = node.op
        if a.string or b.string:
            self.bail("$COMM is a string: compare it with STRCMP(\"name\", $COMM)", node)
        ta, tb = self.rvalue(a, node.left), self.rvalue(b, node.right)
        ct = None
        for p, other, first in ((a, b, True), (b, a, False)):
            if op in ("+", "-") and p.ct is not None and p.ct.kind in ("ptr", "array") and \
                    (p.addr is not None or p.user or self.domain.user) and (other.ct is None or other.ct.kind == "int"):
                # Pointer arithmetic in user memory: scaled by the element size.
                elem = self.complete(p.ct.target, node)
                if first or op == "+":
                    scaled = Frag("(", tb if first else ta, f") * {max(1, elem.size)}")
                    base = ta if first else tb
                    res = Frag("(", base, f" {op} ", scaled, ")")
                    return Val(self.frag(node, res), CType("ptr", p.ct.size or self.ctx.abi.ptr,
                                                           self.ctx.abi.ptr, False, "", p.ct.target), user=True)
        if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            ct = Int(4, True)
        return Val(self.frag(node, "(", ta, f" {op} ", tb, ")"), ct)

    def v_TernaryOp(self, node) -> Val:
        c, a, b = self.visit(node.cond), self.visit(node.iftrue), self.visit(node.iffalse)
        return Val(self.frag(node, "(", self.rvalue(c, node.cond), " ? ", self.rvalue(a, node.iftrue), " : ",
                             self.rvalue(b, node.iffalse), ")"), a.ct)

    def v_Cast(self, node) -> Val:
        ct = self.resolve(node.to_type)
        v = self.visit(node.expr)
        if v.string:
            self.bail(f"$COMM is a string: it can't be cast to {ct}", node)
        inner = self.rvalue(v, node.expr)
        if ct.kind == "void":
            return Val(self.frag(node, inner), None)
        if ct.kind in ("record", "array", "func", "float"):
            self.bail(f"casts to {ct} are not supported", node.to_type)
        t = self.typed(Frag("(", inner, ")"), ct, v.user, node)
        return Val(self.frag(node, t.frag), t.ct, user=t.user)

    def v_StructRef(self, node) -> Val:
        base = self.visit(node.name)
        field_name = node.field.name
        arrow = node.type == "->"
        if base.tp_args:
            if not arrow:
                self.bail("args is a pointer: write args->" + field_name, node)
            return Val(self.frag(node, "data->", self.frag(node.field, field_name)))
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
        # A kernel struct (or a value the checker types): ply's member access.
        text = self.rvalue(base, node.name) if arrow or base.addr is None else base.frag
        return Val(self.frag(node, text, node.type, self.frag(node.field, field_name)), None)

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
        maddr = Frag("(", addr, f" + {off})") if off else addr
        return Val(None, mt, addr=self.frag(node, maddr), user=True)

    def v_ArrayRef(self, node) -> Val:
        base = self.visit(node.name)
        ct = base.ct
        if ct is not None and ct.kind in ("ptr", "array") and (base.addr is not None or base.user or
                                                             self.domain.user) and \
                not (ct.target.kind == "record" and ct.target.kernel):
            return self.deref(base, node.name, node, self.rvalue(self.visit(node.subscript), node.subscript))
        idx = self.visit(node.subscript)
        text = self.rvalue(base, node.name) if base.addr is None else base.addr
        return Val(self.frag(node, text, "[", self.rvalue(idx, node.subscript), "]"), None)

    def deref(self, base: Val, base_node, node, index: Frag) -> Val:
        """*p / p[i] of a pointer into user memory."""
        ct = base.ct
        if ct is None or ct.kind not in ("ptr", "array") or ct.target is None:
            self.bail("only pointers to user-space types can be dereferenced here; "
                      "use '->' for kernel structs", node)
        elem = self.complete(ct.target, node)
        start = base.addr if ct.kind == "array" and base.addr is not None else self.rvalue(base, base_node)
        idx = index.text()
        addr = start if idx == "0" else Frag("(", start, " + (", index, f") * {max(1, elem.size)})")
        return Val(None, elem, addr=self.frag(node, addr), user=True)


FIXED_NAMES = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "size_t", "ssize_t", "bool")


def _describe(node) -> str:
    return {"Assignment": "an assignment", "ExprList": "a comma expression", "CompoundLiteral": "a compound literal",
            "Compound": "a block"}.get(type(node).__name__, f"'{type(node).__name__}'")


def probe_spec(spec: Specifier, entry: bool = False) -> str:
    ret = spec.probe == "r" and not entry
    if spec.probe == "t":
        return f"tracepoint:{spec.library}/{spec.function}"
    if spec.probe == "u":
        return f"usdt:{spec.library}:{spec.function}"
    if spec.library:
        return f"{'uretprobe' if ret else 'uprobe'}:{spec.library}:{spec.function}"
    return f"{'kretprobe' if ret else 'kprobe'}:{spec.function}"


def key_value(tr: Translator, type_part: Part, expr_part: Part, strsize: int, hist: bool) -> Frag:
    """One expression as the key (or histogram value) of its declared type."""
    ct = tr.ctype_of(type_part)
    v = tr.expr(expr_part)
    node = tr.parsed.node
    whole = (tr.index, expr_part.start, expr_part.end) if expr_part.start >= 0 else None
    if ct.is_string():
        if hist:
            raise tr.spec.error(f"histograms take integers, not {type_part.text}", type_part)
        return Frag(tr.string(v, node, strsize), origin=whole)
    if v.string:
        raise tr.spec.error(f"{expr_part.text} is a string: its type must be char*", type_part)
    text = tr.rvalue(v, node)
    if ct.kind == "int":
        if v.cast and (v.ct.size, v.ct.signed) == (ct.size, ct.signed):
            return Frag(text, origin=whole)         # already of that type
        return Frag(f"({ply_int(ct)})(", text, ")", origin=whole)
    if ct.kind == "ptr":
        return Frag("(u64)(", text, ")", origin=whole)
    raise tr.spec.error(f"a value of type {type_part.text} can't be collected: argdist's types are "
                        "integers and char*", type_part)


def lower(specs: list, *, strsize: int = 80, tid: Optional[int] = None,
          ctx: Optional[Context] = None) -> Lowered:
    ctx = ctx or Context()
    b = Builder()
    out = Lowered("")
    b.line("/* Generated by plyc argdist. */")
    b.line()
    errors = []
    for i, spec in enumerate(specs):
        try:
            lower_one(b, out, spec, i, strsize, tid, ctx)
        except SpecError as err:
            errors.append(err)
        except CTypeError as err:
            errors.append(spec.error(str(err), None, err.note))
    if errors:
        raise errors[0] if len(errors) == 1 else SpecErrors(errors)
    out.script = b.text().rstrip("\n") + "\n"
    out.regions = b.regions
    out.spec_list = list(specs)
    return out


class SpecErrors(SpecError):
    """Several specifiers refused."""

    def __init__(self, errors: list):
        super().__init__(errors[0].message, errors[0].spec, errors[0].start, errors[0].end, errors[0].note)
        self.errors = errors


def lower_one(b: Builder, out: Lowered, spec: Specifier, i: int, strsize: int, tid: Optional[int], ctx: Context):
    tr = Translator(spec, i, strsize, ctx)
    whole = (i, 0, len(spec.raw))
    hist = spec.kind == "hist"
    keys = [key_value(tr, t, e, strsize, hist) for t, e in zip(spec.types, spec.exprs)]
    filt = None
    if spec.filter is not None:
        v = tr.expr(spec.filter)
        if v.string:
            raise spec.error("$COMM is a string: compare it with STRCMP(\"name\", $COMM)", spec.filter)
        filt = Frag(tr.rvalue(v, tr.parsed.node), origin=(i, spec.filter.start, spec.filter.end))
    conds = []
    if not spec.is_user and spec.probe != "u":
        # -p PID at build or run time: kernel probes filter on it (user
        # probes attach to that process only).
        conds.append(Frag("(_pidfilter == 0 || pid == _pidfilter)"))
    if tid is not None:
        conds.append(Frag(f"kpid == {tid}"))
    name = f"@s{i}"
    if hist:
        update = Frag(f"{name} = _log2(", keys[0], ");")
    elif spec.default_expr and spec.probe != "r":
        update = Frag(f"{name} = count();")
    else:
        joined = []
        for k, key in enumerate(keys):
            joined += ([", "] if k else []) + [key]
        update = Frag(f"{name}[", *joined, "] = count();")
    where = (i, spec.where.start, spec.where.end) if spec.where else whole
    all_conds = conds + ([filt] if filt is not None else [])
    cond = Frag()
    for k, c in enumerate(all_conds):
        if len(all_conds) > 1 and c is filt:
            c = Frag("(", c, ")")
        cond.parts += ([" && "] if k else []) + [c]
    if tr.entry_params or tr.latency:
        b.line(Frag(probe_spec(spec, entry=True), origin=where))
        b.line("{")
        for pname in sorted(tr.entry_params):
            pos, _ = spec.param(pname)
            b.line(f"\te{i}_{pname}[kpid] = arg{pos};")
        if tr.latency:
            b.line(f"\te{i}__lat[kpid] = time;")
        b.line(f"\te{i}__seen[kpid] = 1;")
        b.line("}")
        b.line()
        # The return probe only counts calls whose entry it saw, and
        # always forgets the entry, whatever the filter says.
        b.line(Frag(probe_spec(spec), origin=where), f" / e{i}__seen[kpid] /")
        b.line("{")
        if all_conds:
            b.line("\tif (", cond, ")")
            b.line("\t\t", update)
        else:
            b.line("\t", update)
        for pname in sorted(tr.entry_params):
            b.line(f"\tdelete e{i}_{pname}[kpid];")
        if tr.latency:
            b.line(f"\tdelete e{i}__lat[kpid];")
        b.line(f"\tdelete e{i}__seen[kpid];")
        b.line("}")
    else:
        if all_conds:
            b.line(Frag(probe_spec(spec), origin=where), " / ", cond, " /")
        else:
            b.line(Frag(probe_spec(spec), origin=where))
        b.line("{")
        b.line("\t", update)
        b.line("}")
    b.line()
    out.sections.append(section(spec, name))


def section(spec: Specifier, name: str) -> Section:
    """What the report shows of a specifier's map, as bcc's argdist does."""
    exprs = [e.text for e in spec.exprs]
    if spec.kind == "hist":
        return Section(name, "log2", spec.label or ("retval" if spec.default_expr else exprs[0]))
    header = spec.label or spec.raw
    if spec.default_expr and spec.probe != "r":
        return Section(name, "counts", header, keyless_row="total calls")
    labels = ["retval"] if spec.default_expr else exprs
    return Section(name, "counts", header, tuple(labels), key_names=tuple(label_name(k) for k in labels))


def label_name(text: str) -> str:
    """A key expression as a metric label name: `req->tv_nsec` -> tv_nsec."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    return words[-1] if len(words) == 1 or "->" in text or "." in text else re.sub(r"\W+", "_", text).strip("_")
