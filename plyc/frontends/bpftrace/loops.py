"""bpftrace's loops, lowered to the core's While and ForMap.

- `while (c) { ... }`: an ir.While (at most ir.LOOP_CAP iterations, so that
  the verifier always sees it end).
- `for ($i : a..b)`: `$i = a`, the end evaluated once into a hidden local,
  then a While of `$i < end` stepping `$i++` (a plain bounded loop: Linux 5.3,
  where bpftrace calls bpf_loop, 5.17).
- `for ($kv : @m)`: an ir.ForMap over the plain map @m, or a count() ... avg()
  aggregation, whose `$kv.1` is the key's value over every CPU
  (bpf_for_each_map_elem, Linux 5.13; an aggregation's: aggreads.py). `$kv` is a (key, value) pair, read as `$kv.0` and `$kv.1`
  (`$kv.0.N`: the Nth part of a key of several): each part is a hidden local
  the loop sets, named "kv@LINE:COL.0", "...0.N", "...1" (no script name has
  a dot; the loop's place tells apart loops binding the same name).
  The pair as a whole is the tuple (key, value) (`print($kv)`); members of a
  part that is a tuple are read as a tuple's (`$kv.1.0`).
- `break`, `continue`: in the innermost loop; `return` is refused in a `for`
  body, as bpftrace refuses it.
"""
from __future__ import annotations

from ... import types as T
from ...ir import nodes as ir
from . import ast as A
from . import aggreads, scopes, tuples
from .trees import const_value, walk


def pair_base(n) -> tuple:
    """`$kv.0.1` -> (Var kv, [0, 1]); other nodes -> (node, [])."""
    path = []
    while isinstance(n, A.TupleIndex):
        path.insert(0, n.index)
        n = n.obj
    return n, path


def lower_while(ty, s: A.While) -> ir.While:
    outer, ty.before = ty.before, []
    try:
        cond = ty.cond(s.cond)
        first = ty.before       # what the condition runs first (`$i++ < 3`: blocks.py)
    finally:
        ty.before = outer
    body = in_loop(ty, s.body)
    if first:
        # run each time round: `while (1) { first; if (!cond) break; body }`
        leave = ir.If(ty.unary("!", cond, s.cond.span), ir.Break(span=s.span), span=s.span)
        body = ir.Block(first + [leave, body], span=s.span)
        cond = ir.IntConst(1, type=T.S64, span=s.span)
    return ir.While(cond, body, span=s.span)


def in_loop(ty, body) -> ir.Stmt:
    ty.loop_kinds.append("loop")
    try:
        return ty.body(body)
    finally:
        ty.loop_kinds.pop()


def lower_for(ty, s: A.For):
    name = s.var.name
    scopes.error(ty, s.var.span)
    if name in ty.defined or name in ty.pairs:
        ty.err(f"the loop variable ${name} is already a variable here (bpftrace refuses the shadowing)",
               s.var.span)
    # `return` in the body returns from the probe, as 0.27's (a map loop's
    # callback stops the iteration with its context's flag set, as for exit())
    if isinstance(s.iterable, A.Range):
        return _for_range(ty, s, name)
    return _for_map(ty, s, name)


def _for_range(ty, s: A.For, name: str) -> ir.Block:
    rng = s.iterable
    start, end = ty.expr(rng.start), ty.expr(rng.end)
    for x, e in ((start, rng.start), (end, rng.end)):
        if not x.type.is_int:
            ty.err(f"a range's bounds must be integers, got {x.type}", e.span)
    lo, hi = const_value(rng.start), const_value(rng.end)
    if lo is not None and hi is not None and hi - lo > ir.LOOP_CAP:
        ty.err(f"this range has {hi - lo} values; plyc runs a loop at most {ir.LOOP_CAP} times",
               rng.span, "docs/bpftrace.md, Loops: the cap lets the verifier see every loop end")
    typ = T.unify(start.type, end.type) or T.S64
    typ = T.Int(8, typ.signed)
    hidden = f"{name}.end"
    locals_ = ty.probe.locals
    for n in (name, hidden):
        old = locals_.get(n)
        locals_[n] = typ if old is None else (T.unify(old, typ) or typ)
    typ = locals_[name]
    sp = s.span
    var = ir.Local(name, type=typ, span=s.var.span)
    first = ir.SetLocal(name, start, span=sp)
    last = ir.SetLocal(hidden, end, span=sp)
    ty.defined.add(name)
    ty.defined.add(hidden)
    ty.pairs.pop(name, None)
    cond = ir.Binary("<", var, ir.Local(hidden, type=locals_[hidden], span=sp), type=T.S32, span=sp)
    step = ir.SetLocal(name, ir.Binary("+", var, ir.IntConst(1, type=T.S64, span=sp), type=typ, span=sp),
                       span=sp)
    body = in_loop(ty, s.body)
    ty.defined.discard(name)      # the loop's own: not a variable after it
    return ir.Block([first, last, ir.While(cond, body, step, span=sp)], span=sp)


def _for_map(ty, s: A.For, name: str) -> ir.ForMap:
    ref = s.iterable
    aggreads.check_loop(ty, ref.name, ref.span)      # count() ... avg(): each key's value, every CPU's
    info = ty.maps.get(ref.name)
    if info is None or info.value_type is None or info.key_types is None:
        if ty.final:
            ty.err(f"map '{ref.name}' is never assigned", ref.span)
        ty.err("", ref.span)      # the silent pass: types come later
    keys = list(info.key_types)
    if not keys:
        ty.err(f"{ref.name} has no keys: a for loop needs a map with keys", ref.span)
    # Each loop's own locals (another loop may bind the same name to other types).
    base = f"{name}@{s.span.line}:{s.span.col}"
    key_names = [f"{base}.0"] if len(keys) == 1 else [f"{base}.0.{i}" for i in range(len(keys))]
    value = f"{base}.1"
    for n, t in zip(key_names + [value], keys + [info.value_type]):
        ty.probe.locals[n] = t
        ty.defined.add(n)
    ty.pairs[name] = (key_names, value, ref.name)
    try:
        body = in_loop(ty, s.body)
    finally:
        del ty.pairs[name]
    for n in key_names + [value]:
        ty.defined.discard(n)
    return ir.ForMap(ref.name, key_names, value, body, span=s.span)


def lower_jump(ty, s: A.Jump):
    if s.kind == "return":
        if s.value is None:
            return ir.Return(span=s.span)
        # 0.27 takes a probe's integer return value and keeps nothing of it
        # (the program's return code): it is run for its effects
        x = ty.expr(s.value)
        if not x.type.is_int:
            ty.err(f"probe return values can only be integers (as bpftrace 0.27's), not {x.type}", s.value.span)
        run = [ir.CallStmt(x, span=s.span)] if isinstance(x, ir.Call) else []
        return ir.Block(run + [ir.Return(span=s.span)], span=s.span)
    if not ty.loop_kinds:
        ty.err(f"'{s.kind}' outside a loop", s.span)
    return (ir.Break if s.kind == "break" else ir.Continue)(span=s.span)


def whole_pair(ty, e: A.Var) -> ir.TupleMake:
    """`$kv` as a value: the tuple (key, value), ((k1, k2, ...), value) for a
    key of several parts, as bpftrace's."""
    key_names, value, _ = ty.pairs[e.name]
    parts = [ir.Local(n, type=ty.probe.locals[n], span=e.span) for n in key_names]
    key = parts[0] if len(parts) == 1 else ir.TupleMake(parts, type=T.Tuple([p.type for p in parts]), span=e.span)
    val = ir.Local(value, type=ty.probe.locals[value], span=e.span)
    return ir.TupleMake([key, val], type=T.Tuple([key.type, val.type]), span=e.span)


def pair_part(ty, e: A.TupleIndex) -> ir.Expr:
    """`$kv.0`, `$kv.1`, `$kv.0.N` of a for loop's pair, and members of
    those that are tuples (`$kv.1.0` of a map holding tuples)."""
    base, path = pair_base(e)
    key_names, value, mapname = ty.pairs[base.name]
    name, used = None, 1
    if path[0] == 1:
        name = value
    elif path[0] == 0 and len(key_names) == 1:
        name = key_names[0]
    elif len(path) > 1 and path[0] == 0 and len(key_names) > 1 and path[1] < len(key_names):
        name, used = key_names[path[1]], 2
    elif path == [0] and len(key_names) > 1:
        # the key of several parts as a whole: their tuple
        return whole_pair(ty, base).items[0]
    if name is None:
        shape = "(key, value)" if len(key_names) == 1 else \
            "((" + ", ".join(f"key{i}" for i in range(len(key_names))) + "), value)"
        ty.err(f"${base.name} is {shape} of {mapname}: no element {'.'.join(map(str, path))}", e.span,
               "$kv is the tuple (key, value); a key of several parts is a tuple too")
    x = ir.Local(name, type=ty.probe.locals[name])
    for index in path[used:]:
        x = tuples.member(ty, x, index, e.span)
    return x


# bpftrace's bounds on an unroll's count, which it checks when it compiles.
UNROLL_MAX = 100


def unroll_param(ty, s: A.Unroll) -> ir.Block:
    """`unroll($N)` (softirqstat.bt's `unroll($1)`): bpftrace reads $N when
    it compiles the script; a plyc tracer is given its parameters when it
    starts, so the body runs in a loop of $N turns, at most UNROLL_MAX (a
    hidden counter "unroll@LINE:COL"). The body is not a loop's body in
    bpftrace: a `break` or `continue` there is refused, as it would leave
    this loop rather than the one around it."""
    for n in walk(s.body):
        if isinstance(n, A.Jump) and n.kind in ("break", "continue"):
            ty.err(f"'{n.kind}' in the body of unroll(${s.count.index}) is not supported by plyc: "
                   "it runs that body as a loop of its own", n.span)
    sp = s.span
    count = ty.expr(s.count)
    name = f"unroll@{sp.line}:{sp.col}"
    # bpftrace refuses a count outside 1..100 when it compiles; the tracer, when it starts
    ty.st.arg_bounds[(sp.line, sp.col)] = (s.count.index, 1, UNROLL_MAX, sp.line, sp.col, "unroll")
    ty.probe.locals[name] = T.S64
    ty.defined.add(name)
    var = ir.Local(name, type=T.S64, span=sp)
    below = [ir.Binary("<", var, bound, type=T.S32, span=sp)
             for bound in (count, ir.IntConst(UNROLL_MAX, type=T.S64, span=sp))]
    cond = ir.Binary("&&", *below, type=T.S32, span=sp)
    step = ir.SetLocal(name, ir.Binary("+", var, ir.IntConst(1, type=T.S64, span=sp), type=T.S64, span=sp),
                       span=sp)
    first = ir.SetLocal(name, ir.IntConst(0, type=T.S64, span=sp), span=sp)
    return ir.Block([first, ir.While(cond, ty.body(s.body), step, span=sp)], span=sp)
