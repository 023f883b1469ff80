"""What a ply tracer prints for a program of tests/numgen.py, computed under
the integer rule of docs/language.md ("Types and values"): C's operations on
typed values, evaluated here in Python.

- A literal is an s64 (u64 from 2^63 on); a positional argument an s64.
- A cast keeps the low bits of the type's width, then sign- or zero-extends.
- Where two types meet (docs/language.md, "Where integer types meet"):
  `merge` for ternary arms, a map's keys and values, an aggregation's
  arguments; `meet_signed` for the operands of arithmetic and comparisons,
  where a constant that is not negative takes the other side's sign.
- Arithmetic, bitwise operators, division and modulo are done on 64 bits,
  signed when the operands meet signed; signed division and modulo truncate
  toward zero (C). A shift keeps its left operand's sign (`>>` of a signed
  one is arithmetic). A comparison compares signed or unsigned 64-bit values
  as the operands meet; comparisons, `!`, `&&`, `||` are s32.
- `-x` is an s64, `~x` keeps x's sign.
- printf converts the 64-bit value as C's printf does a long long of the
  conversion's signedness; `%v` prints it in its type."""
from __future__ import annotations

from numgen import S32, S64, U64, Ty, wrap, signed64, M64


def merge(a: Ty, b: Ty) -> Ty:
    """Two integer types that meet: the wider; signed when both are;
    a signed and an unsigned one: the smallest signed type holding both
    (s32 with u32 is s64), s64 with u64 is s64 (bpftrace's choice)."""
    if a.signed == b.signed:
        return Ty(max(a.bits, b.bits), a.signed)
    u, s = (a, b) if b.signed else (b, a)
    if s.bits > u.bits:
        return s
    return Ty(min(64, u.bits * 2), True)


def meet_signed(a: Ty, af: bool, b: Ty, bf: bool) -> bool:
    """Whether a and b meet signed (arithmetic, comparisons): of one sign,
    theirs; a flexible side (a constant that is not negative) takes the
    other's; else signed (s64 with u64 too)."""
    if a.signed == b.signed:
        return a.signed
    if af or bf:
        return (a.signed and not af) or (b.signed and not bf)
    return True


# what plyc/ir/fold.py folds: + - * & | ^ << of literals, and unary minus
FOLDED = ("+", "-", "*", "&", "|", "^", "<<")


def folds(n) -> bool:
    if n.op == "lit":
        return True
    if n.op == "neg":
        return folds(n.args[0])
    return n.op == "bin" and n.name in FOLDED and all(map(folds, n.args))


def merge_all(types) -> Ty:
    out = types[0]
    for t in types[1:]:
        out = merge(out, t)
    return out


class Machine:
    def __init__(self, program):
        self.p = program
        self.vars = {}
        self.maps = {}          # name: {key: value}
        self.map_types = {name: (merge_all(k), merge_all(v)) for name, (k, v) in program.maps.items()}
        self.aggs = {}          # name: {key: state}
        self.agg_types = {name: (merge_all(k), Ty(64, merge_all(a).signed) if fn != "count" else U64)
                          for name, (fn, k, a) in program.aggs.items()}

    # --- expressions -------------------------------------------------------

    def eval(self, n):
        """(value, type) of a node; ZeroDivisionError for a zero divisor."""
        v, ty, _ = self.typed(n)
        return v, ty

    def typed(self, n):
        """(value, type, flexible): flexible, a constant that is not negative,
        which takes the other side's sign where it meets a type (`5`, `1 + 2`:
        literals and + - * & | ^ << of them, as plyc/ir/fold.py folds)."""
        op = n.op
        if op == "lit":
            return n.value, (U64 if n.value >= 1 << 63 else S64), True
        if op == "param":
            return self.p.params[n.value - 1], S64, False
        if op == "var":
            return self.vars[n.name]
        if op == "cast":
            v, _ = self.eval(n.args[0])
            return wrap(v, n.ty), n.ty, False
        if op == "neg":
            v, _ = self.eval(n.args[0])
            return wrap(-v, S64), S64, False
        if op == "not":
            v, _ = self.eval(n.args[0])
            return int(v == 0), S32, False
        if op == "inv":
            v, t = self.eval(n.args[0])
            ty = Ty(64, t.signed)
            return wrap(~v, ty), ty, False
        if op == "tern":
            c, _ = self.eval(n.args[0])
            (a, at), (b, bt) = self.eval(n.args[1]), self.eval(n.args[2])
            ty = merge(at, bt)
            return wrap(a if c else b, ty), ty, False
        if op == "get":
            kt, vt = self.map_types[n.name]
            k, _ = self.eval(n.args[0])
            return self.maps.get(n.name, {}).get(wrap(k, kt), 0), vt, False
        if op == "bin":
            v, ty = self.binary(n.name, self.typed(n.args[0]), self.typed(n.args[1]))
            return v, ty, v >= 0 and n.name in FOLDED and all(map(folds, n.args))
        raise AssertionError(op)

    def binary(self, op, left, right):
        (a, at, af), (b, bt, bf) = left, right
        signed = meet_signed(at, af, bt, bf)
        if op in ("&&", "||"):
            return int(bool(a) and bool(b) if op == "&&" else bool(a) or bool(b)), S32
        if op in ("==", "!=", "<", "<=", ">", ">="):
            x, y = (signed64(a), signed64(b)) if signed else (a & M64, b & M64)
            return int({"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y,
                        ">": x > y, ">=": x >= y}[op]), S32
        ty = S64 if signed else U64
        if op in ("/", "%"):
            if b == 0:
                raise ZeroDivisionError
            if signed:
                a, b = signed64(a), signed64(b)
                q = abs(a) // abs(b)
                q = -q if (a < 0) != (b < 0) else q
                return wrap(q if op == "/" else a - q * b, ty), ty
            x, y = a & M64, b & M64
            return (x // y if op == "/" else x % y), ty
        if op in ("<<", ">>"):
            ty = Ty(64, at.signed)       # the shifted value's sign
            if op == "<<":
                return wrap(a << (b & 63), ty), ty
            x = signed64(a) if at.signed else a & M64
            return wrap(x >> (b & 63), ty), ty
        r = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
        return wrap(r, ty), ty

    # --- statements ---------------------------------------------------------

    def run(self) -> str:
        out = []
        for s in self.p.stmts:
            self.current = s
            if s.op == "set":
                self.vars[s.name] = self.typed(s.value)
            elif s.op == "store":
                kt, vt = self.map_types[s.name]
                k, _ = self.eval(s.key)
                v, _ = self.eval(s.value)
                self.maps.setdefault(s.name, {})[wrap(k, kt)] = wrap(v, vt)
            elif s.op == "agg":
                self.aggregate(s)
            else:
                v, ty = self.eval(s.value)
                out.append(f"{s.index} {cformat(s.spec, v, ty)}\n")
        return "".join(out) + self.dumps()

    def aggregate(self, s):
        kt, vt = self.agg_types[s.name]
        k, _ = self.eval(s.key)
        x = 0 if s.value is None else wrap(self.eval(s.value)[0], vt)
        entries = self.aggs.setdefault(s.name, {})
        k = wrap(k, kt)
        fn = self.p.aggs[s.name][0]
        old = entries.get(k)
        if fn == "count":
            entries[k] = (old or 0) + 1
        elif fn == "sum":
            entries[k] = wrap((old or 0) + x, vt)
        elif fn == "min":
            entries[k] = x if old is None else min(old, x)
        elif fn == "max":
            entries[k] = x if old is None else max(old, x)
        else:
            total, count = old or (0, 0)
            entries[k] = (total + x, count + 1)

    def dumps(self) -> str:
        """The maps at exit, in order of first appearance, each sorted by
        value then key (docs/output.md, "Map dumps")."""
        out = []
        seen = []
        for s in self.p.stmts:
            if s.op in ("store", "agg") and s.name not in seen:
                seen.append(s.name)
        for name in seen:
            if name in self.maps:
                entries, label = self.maps[name], name
            else:
                entries, label = self.aggs[name], "@" + name
                if self.p.aggs[name][0] == "avg":
                    vt = self.agg_types[name][1]
                    entries = {k: avg(t, c, vt) for k, (t, c) in entries.items()}
            out.append(f"\n{label}:\n")
            for k, v in sorted(entries.items(), key=lambda kv: (kv[1], kv[0])):
                out.append(f"{{ {k} }}: {v}\n")
        return "".join(out)


def avg(total: int, count: int, ty: Ty) -> int:
    """The integer mean, toward zero (the total wraps as the sum's does)."""
    total = wrap(total, ty)
    q = abs(total) // count
    return -q if total < 0 else q


def cformat(spec: str, value: int, ty: Ty) -> str:
    """C's printf of one integer conversion (flags, width, precision) of
    the 64-bit value; `%v`: the value in its type."""
    conv = spec[-1]
    if conv == "v":
        return str(value)
    body = spec[1:-1]
    flags = ""
    while body and body[0] in "-+ 0#":
        flags += body[0]
        body = body[1:]
    width, _, prec = body.partition(".")
    width = int(width) if width else 0
    prec = int(prec) if prec else (0 if "." in body else None)
    sign, prefix = "", ""
    if conv in "di":
        v = signed64(value)
        digits = str(abs(v))
        sign = "-" if v < 0 else "+" if "+" in flags else " " if " " in flags else ""
    else:
        v = value & M64
        digits = {"u": str, "x": lambda x: format(x, "x"), "X": lambda x: format(x, "X"),
                  "o": lambda x: format(x, "o")}[conv](v)
    if prec is not None:
        digits = "" if prec == 0 and v == 0 else digits.zfill(prec)
    if "#" in flags:
        if conv in "xX" and v != 0:
            prefix = "0" + conv
        elif conv == "o" and not digits.startswith("0"):
            digits = "0" + digits
    text = sign + prefix + digits
    if len(text) >= width:
        return text
    if "-" in flags:
        return text + " " * (width - len(text))
    if "0" in flags and prec is None:
        return sign + prefix + "0" * (width - len(text)) + digits
    return " " * (width - len(text)) + text


def expected(program) -> str:
    return Machine(program).run()


def settle(program, tries: int = 1000):
    """The program with every divisor that is zero when it runs made odd
    (`d | 1`), statement by statement: ply's division by zero is not what
    the fuzzer checks. Returns what the tracer must print."""
    from numgen import Node, lit
    for _ in range(tries):
        m = Machine(program)
        try:
            return m.run()
        except ZeroDivisionError:
            s = m.current
            for attr in ("key", "value"):
                node = getattr(s, attr)
                if node is not None:
                    setattr(s, attr, odd_divisors(node, Node, lit))
    raise AssertionError("divisors stay zero")


def odd_divisors(n, Node, lit):
    args = tuple(odd_divisors(a, Node, lit) for a in n.args)
    if n.op == "bin" and n.name in ("/", "%"):
        args = (args[0], Node("bin", (args[1], lit(1)), name="|"))
    return Node(n.op, args, n.value, n.ty, n.name)
