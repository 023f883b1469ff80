"""bpftrace 0.27's own types of values, where sizeof(e) and typeof(e) see
them: 0.27 gives an integer literal the smallest signed type that holds it
(`1` and `-1` int8, `300` int16, uint64 from 2^63; a constant expression of
literals folded first), so `$x = 1; sizeof($x)` is 1 there.

plyc computes every value in its own types (a literal is a 64-bit number
where it meets others), whose numbers print as 0.27's; these types are
only what sizeof() and typeof() answer, so that no number printed changes
except theirs. As 0.27 (tested against 0.27.1):
- a variable's type is where every value the probe assigns it meets
  (types.promoted: `$x = 1; $x = 300` int16; a literal that is not
  negative takes the other side's sign: `$x = 1; $x = (uint32)5` uint32),
  a map's value likewise over the script, a `let $x: T` its T, a range
  loop's `$i` its bounds';
- arithmetic, `-x` and `~x` of what is not a constant are 64 bits, a
  comparison, `!`, `&&`, `||` a bool (1 byte), `c ? a : b` where a and b
  meet, a tuple its members laid out (`(1, 1000)` 4 bytes), a string
  literal its bytes and NUL (`"ab"` 3).
Anything else, or a variable or map given a value of it anywhere, has
plyc's type (`$x = 1; $x = pid` is plyc's u64 where 0.27's is uint32)."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ... import types as T
from ...sema.typer import Bail
from . import ast as A
from .trees import const_value, literal as folded, walk

BOOL = T.Int(1, False, "bool")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=", "&&", "||")


def literal(value: int) -> T.Type:
    """The smallest signed type holding value (uint64 past int64)."""
    for size in (1, 2, 4, 8):
        if -(1 << (8 * size - 1)) <= value < 1 << (8 * size - 1):
            return replace(T.Int(size, True), flexible=value >= 0)
    return replace(T.U64, flexible=True)


def of(typer, e: A.Expr) -> T.Type:
    """e's type as 0.27 gives it (e is typed, never run); built with
    `--bpftrace-output 0.17`, as 0.17 gives it (of0_17)."""
    if typer.st.version == "0.17":
        return of0_17(typer, e)
    return plain(_Types(typer).of(e))


def visible(typer, t: T.Type) -> T.Type:
    """t as 0.27 sizes it: plyc's read of a whole string, max_strlen + 1
    bytes under 1024 (lower.PAD_BELOW), is 0.27's string[max_strlen]."""
    st = typer.st
    if t.kind == "str" and st.str_cut and t.cut and t.size == st.strsize:
        return T.Str(st.max_strlen)
    return t


def stored(typer, t: T.Type) -> T.Type:
    """0.27's string[max_strlen] as plyc holds it: its read of a whole
    string (visible's other way)."""
    st = typer.st
    if t.kind == "str" and st.str_cut and t.size == st.max_strlen:
        return T.Str(st.strsize, cut=True)
    return t


def of0_17(typer, e: A.Expr) -> T.Type:
    """bpftrace 0.17's type of e: an integer literal, a constant expression
    and a comparison are 64 bits (`sizeof(1)` and `sizeof(1 == 1)` are 8), a
    tuple its members', anything else plyc's (a variable given a literal is
    its 64-bit number)."""
    v = const_value(e)
    if v is not None:
        return T.U64 if v >= 1 << 63 else T.S64
    if isinstance(e, A.Binary) and e.op in COMPARISONS or isinstance(e, A.Unary) and e.op == "!":
        return T.S64
    if isinstance(e, A.Tuple):
        return T.Tuple([of0_17(typer, i) for i in e.items], e.names or ())
    return typer.typed_only(e).type


def plain(t: T.Type) -> T.Type:
    """A type without the literal's flexibility (a type a cast or `let` names)."""
    if t.kind == "tuple":
        return replace(t, items=tuple(plain(i) for i in t.items))
    return replace(t, flexible=False) if t.flexible else t


def meet(types: list) -> Optional[T.Type]:
    """Where values of these types meet, or None where plyc's rule has no answer."""
    out = types[0]
    for t in types[1:]:
        if out.kind == t.kind == "int" and not out.denotes and not t.denotes and not out.pointee and not t.pointee:
            out = T.promoted(out, t)
        elif out == t:
            continue
        elif out.kind == t.kind == "str":
            out = T.Str(max(out.size, t.size))
        elif out.kind == t.kind == "tuple" and len(out.items) == len(t.items) and out.names == t.names:
            items = [meet([a, b]) for a, b in zip(out.items, t.items)]
            if None in items:
                return None
            out = T.Tuple(items, out.names)
        else:
            return None
    return out


class _Types:
    def __init__(self, typer):
        self.typer = typer
        self.visiting: set = set()

    # --- in place: e is typed where it is (sizeof's operand) -------------------

    def of(self, e) -> T.Type:
        t = self.static(e, in_place=True)
        return t if t is not None else self.plyc(e)

    def plyc(self, e) -> T.Type:
        return self.typer.typed_only(e).type

    # --- from the tree alone (a value assigned elsewhere in the probe) --------

    def static(self, e, in_place: bool = False) -> Optional[T.Type]:
        """0.27's type of e, known from the tree; None where it is plyc's
        own (in_place: e's parts may be typed by plyc where they stand)."""
        lit = folded(e)
        if lit is not None:
            return BOOL if lit.is_bool else literal(lit.value)     # 0.27 folds it first
        part = self.of if in_place else self.static
        if isinstance(e, A.Str):
            return T.Str(len(e.value) + 1)
        if isinstance(e, A.Var):
            return self.var(e, in_place)
        if isinstance(e, A.Call) and e.name == "str":
            return self.str_read(e)
        if isinstance(e, A.Map) and e.name not in self.typer.agg_maps:
            return self.map_value(e.name)
        if isinstance(e, A.Binary) and e.op in COMPARISONS or isinstance(e, A.Unary) and e.op == "!":
            return BOOL
        if isinstance(e, (A.Binary, A.Unary)) and e.op in ("-", "~") and in_place:
            t = self.plyc(e)      # 64 bits, plyc's sign (0.27's: signs.py)
            return T.Int(8, t.signed) if t.is_int and not t.is_pointer and not t.denotes else None
        if isinstance(e, A.Cast) and e.type.base != "typeof":
            return self.cast(e)
        cond = folded(e.cond) if isinstance(e, A.Ternary) else None
        if cond is not None:
            return part(e.then if cond.value else e.other)     # 0.27 folds it
        if isinstance(e, A.Ternary):
            arms = [part(e.then), part(e.other)]
            return None if None in arms else meet(arms)
        if isinstance(e, A.Tuple):
            items = [part(i) for i in e.items]
            return None if None in items else T.Tuple(items, e.names or ())
        if isinstance(e, A.TupleIndex):
            t = part(e.obj)
            return t.items[e.index] if t is not None and t.kind == "tuple" and e.index < len(t.items) else None
        if isinstance(e, A.Field) and not e.arrow and isinstance(e.obj, (A.Var, A.Tuple, A.TupleIndex, A.Field)):
            t = part(e.obj)         # a record's member by name (else a struct's: plyc's)
            return t.items[t.names.index(e.name)] if t is not None and e.name in t.names else None
        if isinstance(e, A.BlockExpr) and not in_place:
            return self.static(e.value)
        if isinstance(e, A.BlockExpr):
            value = self.static(e.value)        # its statements are typed with it, never run
            return value if value is not None else self.plyc(e)
        return None

    def str_read(self, e: A.Call) -> Optional[T.Type]:
        """0.27's type of str(p) and str(p, n): string[max_strlen], and
        string[n + 1] up to it (where plyc keeps n bytes, and the byte its
        read of a whole string pads it with: lower.PAD_BELOW)."""
        cap = self.typer.st.max_strlen
        if len(e.args) == 1:
            return T.Str(cap)
        n = const_value(e.args[1]) if len(e.args) == 2 else None
        return T.Str(min(n + 1, cap)) if n is not None and n >= 0 else None

    def cast(self, e: A.Cast) -> Optional[T.Type]:
        """A cast's integer type (its operand plays no part), typed quietly:
        the cast itself says its errors where it stands."""
        tn = e.type
        if tn.pointers or tn.array_len is not None or tn.words == ("string",):
            return None
        typer, final = self.typer, self.typer.final
        typer.final = False
        try:
            t = typer.typed_only(A.Cast(tn, A.Int(0, "0", span=e.span), span=e.span)).type
        except Bail:
            return None
        finally:
            typer.final = final
        return t if t.is_int and not t.is_pointer else None

    def var(self, e: A.Var, in_place: bool) -> Optional[T.Type]:
        typer = self.typer
        decl = typer.declared.get((typer.probe.index, e.name))     # `let $x: T` (lets.py)
        if decl is not None:
            return decl[0]
        if e.name in typer.pairs or e.name in self.visiting:
            return None
        self.visiting.add(e.name)
        try:
            # `$x = $x` gives it nothing new, nor `$x = $y` of a `$y` given `$x`
            values = [v for v in assigned(typer.unit_body, e.name)
                      if not (isinstance(v, A.Var) and v.name in self.visiting)]
            types = [self.static(v) for v in values] if values else [None]
        finally:
            self.visiting.discard(e.name)
        if None not in types:
            return meet(types)
        if in_place:
            return None                         # plyc's, typed where it stands
        t = typer.probe.locals.get(e.name)      # plyc's, from the learning run
        return t

    def map_value(self, name: str) -> Optional[T.Type]:
        """A map's value type from the script's stores, where every one is
        known from the tree without its probe (a constant, a tuple of them)."""
        values = []
        for p in self.typer.st.ast.probes:
            for n in walk([p.predicate, p.body]):
                if isinstance(n, (A.Assign, A.IncDec)) and isinstance(n.target, A.Map) and n.target.name == name:
                    if isinstance(n, A.IncDec) or n.op != "=":
                        return None         # arithmetic: plyc's 64 bits, as 0.27's
                    values.append(n.value)
        types = [self.str_read(v) if isinstance(v, A.Call) and v.name == "str" else _standalone(v) for v in values]
        return None if not types or None in types else meet(types)


def _standalone(e) -> Optional[T.Type]:
    """e's 0.27 type where it needs no probe: constants, string literals,
    comparisons of them, tuples of those."""
    lit = folded(e)
    if lit is not None:
        return BOOL if lit.is_bool else literal(lit.value)
    if isinstance(e, A.Str):
        return T.Str(len(e.value) + 1)
    if isinstance(e, A.Tuple):
        items = [_standalone(i) for i in e.items]
        return None if None in items else T.Tuple(items, e.names or ())
    return None


def assigned(body, name: str):
    """The values a probe's body gives $name: `=`, `let $x = v`, a range
    loop's bounds; a compound assignment or `++` as the arithmetic it is."""
    for n in walk(body):
        if isinstance(n, A.Assign) and isinstance(n.target, A.Var) and n.target.name == name:
            yield n.value if n.op == "=" else A.Binary(n.op[:-1], n.target, n.value, span=n.span)
        elif isinstance(n, A.Let) and n.var.name == name:
            if n.value is not None:
                yield n.value
        elif isinstance(n, A.IncDec) and isinstance(n.target, A.Var) and n.target.name == name:
            yield A.Binary(n.op[0], n.target, A.Int(1, "1", span=n.span), span=n.span)
        elif isinstance(n, A.For) and n.var.name == name and isinstance(n.iterable, A.Range):
            yield n.iterable.start
            yield n.iterable.end
        elif isinstance(n, A.Call) and n.name == "find" and len(n.args) == 3 and \
                isinstance(n.args[2], A.Var) and n.args[2].name == name:
            yield n         # the map's value: plyc's
