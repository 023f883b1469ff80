"""Random well-typed integer programs for the differential fuzzer of numbers
(tests/test_numfuzz.py), written as a ply script and as a bpftrace one, and
what ply's tracer must print for them, computed here under the integer rule
docs/language.md states ("Types and values").

A program is a list of statements run in order in one BEGIN probe: scratch
variables assigned once, plain map stores, aggregations and printf lines,
each printf printing one expression through one conversion. Expressions mix
casts between every width and sign, arithmetic, shifts, division and modulo
of negatives, comparisons, `!`, `~`, unary minus, ternaries and map reads;
their leaves are literals, the tracer's positional arguments (ply: values
the compilers cannot fold) and the scratch variables.

Where two types meet (a ternary's arms, a map's keys and values written in
several places, an aggregation's arguments) the generator casts each side
itself, so the program's types are known whatever the language; with
mixed=False the two sides keep one sign (a signed and an unsigned type
meeting is the merge rule of docs/language.md, "Where two integer types
meet", checked with mixed=True).

The bpftrace program is compared with bpftrace 0.27 rather than evaluated
here: 0.27's rule is its own (docs/bpftrace.md, signs.py). What 0.27 refuses
or prints otherwise on purpose (docs/bpftrace.md, "Against bpftrace 0.27")
is not generated for it: zero-padded negative `%d`, `%v`, sizeof."""
from __future__ import annotations

import random
from dataclasses import dataclass

M64 = (1 << 64) - 1


@dataclass(frozen=True)
class Ty:
    bits: int
    signed: bool

    def ply(self) -> str:
        return f"{'s' if self.signed else 'u'}{self.bits}"

    def bt(self) -> str:
        return f"{'' if self.signed else 'u'}int{self.bits}"


S64, U64, S32 = Ty(64, True), Ty(64, False), Ty(32, True)
INTS = [Ty(b, s) for b in (8, 16, 32, 64) for s in (True, False)]


def wrap(v: int, ty: Ty) -> int:
    """v's low bits as a value of ty."""
    v &= (1 << ty.bits) - 1
    if ty.signed and v >> (ty.bits - 1):
        v -= 1 << ty.bits
    return v


def signed64(v: int) -> int:
    return wrap(v, S64)


# --- expressions -----------------------------------------------------------------

@dataclass
class Node:
    op: str                   # lit param var cast neg not inv bin tern get
    args: tuple = ()
    value: int = 0            # lit: its (non-negative) value; param: its number
    ty: Ty = None             # cast: the type cast to
    name: str = ""            # var, get: the variable's or map's name; bin: the operator

    def constant(self) -> bool:
        """Made of literals only (a compiler folds it)."""
        return self.op == "lit" or self.op not in ("param", "var", "get") and all(a.constant() for a in self.args)


def lit(v):
    return Node("lit", value=v)


BINARY = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&", "||"]
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def is_bool(n: Node) -> bool:
    """A comparison's, `!`'s, `&&`'s or `||`'s value: bpftrace 0.27's bool."""
    return n.op == "not" or n.op == "bin" and (
        n.name in COMPARISONS + ("&&", "||") or n.name in "&|^" and all(map(is_bool, n.args)))


def render(n: Node, lang: str) -> str:
    """The expression in ply's or bpftrace's syntax, fully parenthesised."""
    r = lambda x: render(x, lang)  # noqa: E731
    if n.op == "lit":
        return hex(n.value) if n.value > 9 and n.value % 3 == 0 else str(n.value)
    if n.op == "param":
        return f"${n.value}"
    if n.op == "var":
        return f"${n.name}"
    if n.op == "cast":
        return f"(({n.ty.ply() if lang == 'ply' else n.ty.bt()}){r(n.args[0])})"
    if n.op in ("neg", "not", "inv"):
        return f"({'-' if n.op == 'neg' else '!' if n.op == 'not' else '~'}{r(n.args[0])})"
    if n.op == "bin":
        return f"({r(n.args[0])} {n.name} {r(n.args[1])})"
    if n.op == "tern":
        return f"({r(n.args[0])} ? {r(n.args[1])} : {r(n.args[2])})"
    if n.op == "get":
        return f"{'' if lang == 'ply' else '@'}{n.name}[{r(n.args[0])}]"
    raise AssertionError(n.op)


def bt_refuses(n: Node) -> bool:
    """Whether bpftrace 0.27's folder of literal expressions refuses n, as
    plyc's (plyc/frontends/bpftrace/literals.py) says: an overflow, or one
    0.27 computes through C++'s undefined behaviour, which plyc refuses. A
    wrong answer here only leaves an expression out (a fold it refuses) or
    makes 0.27 refuse the batch (one it takes): neither passes unseen."""
    from plyc.frontends.bpftrace import literals
    from plyc.frontends.bpftrace.parser import parse
    e = parse(f"BEGIN {{ $x = {render(n, 'bt')}; }}", "numgen.bt").probes[0].body.stmts[0].value
    try:
        literals.fold(e)
    except literals.Refused:
        return True
    return False


# --- statements ------------------------------------------------------------------

@dataclass
class Stmt:
    op: str                   # set store agg print
    name: str = ""            # set: the variable; store, agg: the map
    key: Node = None
    value: Node = None        # set, store: the value; agg: its argument; print: the expression
    fn: str = ""              # agg: count sum min max avg
    spec: str = ""            # print: the conversion, "%-5d"
    index: int = 0            # print: the line's number


@dataclass
class Program:
    stmts: list
    params: list              # ply: the tracer's positional arguments
    maps: dict                # name: (key types, value types) as written
    aggs: dict                # name: (function, key types, argument types)


class Gen:
    """Programs from one seed; lang "ply" or "bt" (what to leave out for
    bpftrace 0.27), mixed: signed and unsigned meet at merges."""

    def __init__(self, seed, lang: str, mixed: bool = False):
        self.rng = random.Random(seed)
        self.lang = lang
        self.mixed = mixed

    def literal(self) -> int:
        rng = self.rng
        k = rng.random()
        if k < 0.35:
            return rng.randrange(0, 10)
        if k < 0.6:
            return rng.randrange(0, 300)
        if k < 0.8:   # about a width's bounds
            bits = rng.choice((7, 8, 15, 16, 31, 32, 63))
            return (1 << bits) + rng.randrange(-2, 2)
        if k < 0.97 or self.lang == "bt":
            return rng.randrange(0, 1 << rng.choice((16, 32, 62)))
        return rng.randrange(1 << 63, 1 << 64)    # an unsigned constant (ply)

    def leaf(self, env) -> Node:
        rng = self.rng
        k = rng.random()
        if k < 0.3 and env.vars:
            return Node("var", name=rng.choice(env.vars))
        if k < 0.45 and self.lang == "ply":
            return Node("param", value=rng.randrange(1, len(env.params) + 1))
        if k < 0.55 and env.readable:
            name = rng.choice(env.readable)
            return Node("get", (self.cast_to(rng.choice(env.key_types[name]), self.expr(env, 1)),), name=name)
        n = lit(self.literal())
        # (0.27 refuses a negative literal below int64's least: "negative value will underflow")
        if rng.random() < 0.4 and (self.lang == "ply" or n.value <= 1 << 63):
            n = Node("neg", (n,))
        return n

    def cast_to(self, ty: Ty, e: Node) -> Node:
        return Node("cast", (e,), ty=ty)

    def expr(self, env, depth: int) -> Node:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            n = self.leaf(env)
            return self.cast_to(rng.choice(INTS), n) if rng.random() < 0.6 else n
        k = rng.random()
        if k < 0.15:
            return self.cast_to(rng.choice(INTS), self.expr(env, depth - 1))
        if k < 0.22:
            op, x = rng.choice(("neg", "not", "inv")), self.expr(env, depth - 1)
            if op != "not" and self.lang == "bt" and (x.op != "lit" or x.value > 1 << 63):
                # 0.27: "The - operator can not be used on expressions of type
                # 'bool'", "negative value will underflow"; and of a narrower
                # type its own widths (`-(int8)5` is 251, `-$c` of an int8
                # -128 is 128, `~$b` of an int8 variable prints `ff`),
                # left to tests/runtime/bt-numfuzz-unary.test
                x = self.cast_to(rng.choice((S64, U64)), x)
            return Node(op, (x,))
        if k < 0.32:
            a, b = self.arms()
            return Node("tern", (self.expr(env, depth - 1), self.cast_to(a, self.expr(env, depth - 1)),
                                 self.cast_to(b, self.expr(env, depth - 1))))
        op = rng.choice(BINARY)
        left = self.expr(env, depth - 1)
        if op in ("<<", ">>"):
            # C leaves a shift by 64 or more (or by a negative) undefined
            right = lit(rng.randrange(0, 64)) if rng.random() < 0.5 else \
                Node("bin", (self.expr(env, depth - 1), lit(63)), name="&")
            if self.lang == "bt" and right.op == "bin" and is_bool(right.args[0]):
                # a bool's `& 63` is unsigned in 0.27, signed in plyc (its
                # bool meets as signed: left to signs), which decides the
                # sign of a literal shifted by it
                right = Node("bin", (self.cast_to(rng.choice(INTS), right.args[0]), lit(63)), name="&")
        else:
            right = self.expr(env, depth - 1)
        if self.lang == "bt":
            left, right = self.bt_operands(op, left, right)
        return Node("bin", (left, right), name=op)

    def bt_operands(self, op: str, left: Node, right: Node) -> tuple:
        """left and right as bpftrace 0.27 takes them beside op."""
        rng = self.rng
        if op in ("/", "%") and right.constant():
            right = Node("bin", (right, lit(1)), name="|")    # a constant zero divisor is refused
        if op not in ("&&", "||"):
            # 0.27 aborts on a bool divided by a bool (an LLVM assertion);
            # and its bool is unsigned where plyc's meets as signed
            # (`(uint64)-1 >= (a > b)` is false in plyc: left to signs)
            left, right = (self.cast_to(rng.choice(INTS), x) if is_bool(x) else x for x in (left, right))
        if left.constant() and right.constant() and bt_refuses(Node("bin", (left, right), name=op)):
            # 0.27 folds literals and refuses what overflows ("unable to fold
            # literals due to overflow or underflow", `-67 == 0x8000000000000001`
            # too): two small ones
            left, right = lit(rng.randrange(0, 1000)), lit(rng.randrange(0, 40 if op in ("<<", ">>") else 1000))
            if op in ("/", "%"):
                right = Node("bin", (right, lit(1)), name="|")
        return left, right

    def arms(self):
        """Two types that meet: the same sign unless mixed."""
        a = self.rng.choice(INTS)
        b = self.rng.choice(INTS if self.mixed else [t for t in INTS if t.signed == a.signed])
        return a, b

    def spec(self) -> str:
        """A printf conversion for an integer."""
        rng = self.rng
        conv = rng.choice("ddiuuxXo" + ("v" if self.lang == "ply" else ""))
        if conv == "v":
            return "%v"
        flags = ""
        for f in "-+ 0#":
            if rng.random() < 0.12:
                flags += f
        if self.lang == "bt":
            # 0.27 pads a negative with zeros before its sign (docs/bpftrace.md),
            # and a `0x` prefix too
            # and a left-justified one with zeros after it (`%-08x` of 46:
            # `2e000000`): plyc keeps C's (and 0.17's) spaces
            if conv in "di" or "#" in flags or "-" in flags:     # `%#05x` of 4: `000x4`
                flags = flags.replace("0", "")
            # its reader takes the flags in this order only, and plyc
            # accepts any order (documented); keep bpftrace's order
            flags = "".join(f for f in "-+ #0" if f in flags)
        if conv not in "di":
            flags = flags.replace("+", "").replace(" ", "")
        if conv in "diu":
            flags = flags.replace("#", "")
        width = str(rng.randrange(1, 24)) if rng.random() < 0.3 else ""
        prec = f".{rng.randrange(0, 22)}" if rng.random() < 0.15 and self.lang == "ply" else ""
        return f"%{flags}{width}{prec}{conv}"

    def program(self, count: int, nparams: int = 4) -> Program:
        rng = self.rng
        env = Env()
        env.params = [self.param_value() for _ in range(nparams)] if self.lang == "ply" else []
        stmts, maps, aggs = [], {}, {}
        nvars = 0
        for i in range(count):
            k = rng.random()
            if k < 0.08 or (k < 0.12 and nvars < 3):
                name = f"v{nvars}"
                nvars += 1
                value = self.expr(env, 2)
                if self.lang == "bt":
                    # a variable holding a bool crashes 0.27 in places (an
                    # LLVM assertion: `(uint16)$b` in a ternary's arm)
                    value = self.cast_to(rng.choice(INTS), value)
                stmts.append(Stmt("set", name, value=value))
                env.vars.append(name)
            if k < 0.1:
                self.store(env, maps, stmts)
            elif k < 0.16:
                self.aggregate(aggs, env, stmts)
            stmts.append(Stmt("print", value=self.expr(env, rng.choice((1, 2, 3, 3, 4))),
                              spec=self.spec(), index=i))
        return Program(stmts, env.params, maps, aggs)

    def param_value(self) -> int:
        v = self.literal()
        return -v if self.rng.random() < 0.4 and v < 1 << 63 else signed64(v)

    def store(self, env, maps, stmts):
        rng = self.rng
        if maps and rng.random() < 0.6:
            name = rng.choice(list(maps))
        else:
            name = f"m{len(maps)}"
            maps[name] = ([], [])
            sign = (rng.random() < 0.5, rng.random() < 0.5)
            env.signs[name] = sign
        keys, values = maps[name]
        ksign, vsign = env.signs[name]
        kt = rng.choice(INTS if self.mixed else [t for t in INTS if t.signed == ksign])
        vt = rng.choice(INTS if self.mixed else [t for t in INTS if t.signed == vsign])
        keys.append(kt)
        values.append(vt)
        env.key_types[name] = keys
        stmts.append(Stmt("store", name, key=self.cast_to(kt, self.expr(env, 1)),
                          value=self.cast_to(vt, self.expr(env, 2))))
        if name not in env.readable:
            env.readable.append(name)

    def aggregate(self, aggs, env, stmts):
        rng = self.rng
        if aggs and rng.random() < 0.6:
            name = rng.choice(list(aggs))
        else:
            name = f"a{len(aggs)}"
            aggs[name] = (rng.choice(("count", "sum", "sum", "min", "max", "avg")), [], [])
            env.signs[name] = (rng.random() < 0.5, rng.random() < 0.5)
        fn, keys, args = aggs[name]
        ksign, vsign = env.signs[name]
        kt = rng.choice(INTS if self.mixed else [t for t in INTS if t.signed == ksign])
        # 0.27 sign-extends a narrow unsigned argument in a map also given a
        # signed one (docs/bpftrace.md, "Against bpftrace 0.27"): plyc keeps its value
        vts = [t for t in INTS if self.lang == "ply" or t.signed or t.bits == 64]
        vt = rng.choice(vts if self.mixed else [t for t in vts if t.signed == vsign])
        keys.append(kt)
        args.append(vt)
        # few keys, so that entries are added to
        key = self.cast_to(kt, lit(rng.randrange(0, 4)) if rng.random() < 0.7 else self.expr(env, 1))
        stmts.append(Stmt("agg", name, key=key, fn=fn,
                          value=None if fn == "count" else self.cast_to(vt, self.expr(env, 2))))


class Env:
    def __init__(self):
        self.vars, self.params, self.readable = [], [], []
        self.signs, self.key_types = {}, {}


# --- the scripts -------------------------------------------------------------------

def script(p: Program, lang: str) -> str:
    out = ["BEGIN {" if lang == "ply" else "BEGIN {"]
    for s in p.stmts:
        if s.op == "set":
            out.append(f"\t${s.name} = {render(s.value, lang)};")
        elif s.op == "store":
            m = s.name if lang == "ply" else "@" + s.name
            out.append(f"\t{m}[{render(s.key, lang)}] = {render(s.value, lang)};")
        elif s.op == "agg":
            arg = "" if s.value is None else render(s.value, lang)
            out.append(f"\t@{s.name}[{render(s.key, lang)}] = {s.fn}({arg});")
        else:
            out.append(f'\tprintf("{s.index} {s.spec}\\n", {render(s.value, lang)});')
    out.append("\texit(0);" if lang == "ply" else "\texit();")
    out.append("}")
    return "\n".join(out) + "\n"


def line_of(p: Program, lang: str, index: int) -> str:
    """The statement that prints line `index`, as written."""
    for s in p.stmts:
        if s.op == "print" and s.index == index:
            return f'printf("{s.index} {s.spec}\\n", {render(s.value, lang)});'
    return "?"
