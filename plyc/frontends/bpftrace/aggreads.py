"""Reading an aggregation's value in a probe, as bpftrace 0.27 does: `@c > 5`,
`(uint64)@s`, `@x = @n[comm] + 1`, `printf("%s", @m)`, a `for` over `@c`.

The value is an ir.MapRead of the aggregation (the code generator combines
every CPU's value: plyc/codegen/aggread.py), an integer of the aggregated
value's signedness (count()'s unsigned). bpftrace types it as the
aggregation (`count_t`, `sum_t`, `usum_t` of unsigned values, ...), a number
only where an integer is wanted, and refuses it elsewhere; plyc refuses the
same places with 0.27's words: printf() conversions other than %s, `!`, `~`
and unary `-`, an `if` or `?:` condition of the bare value, and a copy into
a map that holds nothing else (`@y = @c`: bpftrace wants `(int64)@c`).
hist(), lhist(), stats() and tseries() have no value in a probe."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ... import printf as P
from ... import types as T
from ...ir import nodes as ir
from . import ast as A
from .trees import walk

READABLE = ("count", "sum", "min", "max", "avg")
# 0.27's example call in "The function that returns this type must be called directly"
EXAMPLES = {"count": "count()", "sum": "sum(retval)", "min": "min(retval)", "max": "max(retval)",
            "avg": "avg(retval)", "stats": "stats(arg2)", "hist": "hist(retval)",
            "lhist": "lhist(rand %10, 0, 10, 1)", "tseries": "tseries(rand %10, 10s, 1)"}


def functions(probes, names) -> dict:
    """Each aggregation map's function as written: @name -> "count", ...
    (names: the front end's aggregations)."""
    out = {}
    for n in walk([p.body for p in probes]):
        if isinstance(n, A.Assign) and isinstance(n.target, A.Map) and isinstance(n.value, A.Call) \
                and n.value.name in names:
            out.setdefault(n.target.name, n.value.name)
    return out


def source(ty, e) -> Optional[str]:
    """The aggregation map whose value e is as written (`@c`, `@c[k]`, a for
    loop's `$kv.1` over @c), or None."""
    if isinstance(e, A.Map) and e.name in ty.agg_funcs:
        return e.name
    if isinstance(e, A.TupleIndex) and e.index == 1 and isinstance(e.obj, A.Var) and e.obj.name in ty.pairs:
        name = ty.pairs[e.obj.name][2]
        return name if name in ty.agg_funcs else None
    return None


def spelled(e) -> str:
    """The value as the script writes it, for a hint: @c, @c[...], $kv.1."""
    if isinstance(e, A.Map):
        return e.name + ("[...]" if e.keys else "")
    return f"${e.obj.name}.1"


def type_name(ty, name: str) -> str:
    """bpftrace's name for the map's value type: count_t, sum_t, usum_t, ..."""
    func = ty.agg_funcs[name]
    info = ty.maps.get(name)
    unsigned = func in ("sum", "min", "max", "avg", "stats") and info is not None and \
        info.value_type is not None and not info.value_type.signed
    return f"{'u' if unsigned else ''}{func}_t"


def read(ty, e: A.Map, keys_of) -> ir.MapRead:
    """`@c` or `@c[k]` as a value; keys_of(ref) -> (ir.Map, keys)."""
    func = ty.agg_funcs[e.name]
    if func not in READABLE:
        ty.err(f"{e.name} is a {func}() map, whose {type_name(ty, e.name)} has no value to read in a probe",
               e.span, "bpftrace reads the values of count(), sum(), min(), max() and avg() maps only")
    info, keys = keys_of(e)
    typ = info.value_type if info.value_type is not None else T.S64
    return ir.MapRead(info.name, keys, type=T.Int(8, typ.signed))


def check_operand(ty, e, span, what: str):
    """A bare aggregation value where 0.27 refuses one: an operator's operand
    (`The ! operator can not be used on ...`) or a condition."""
    name = source(ty, e)
    if name is None:
        return
    if what == "condition":
        ty.err(f"Invalid condition: {type_name(ty, name)}", span,
               f"compare it, e.g. {spelled(e)} > 0, or cast it: (int64){spelled(e)}")
    ty.err(f"The {what} operator can not be used on expressions of type '{type_name(ty, name)}'", span,
           f"cast it first: (int64){spelled(e)}")


def check_copy(ty, target: A.Map, value, span):
    """`@y = @c`: bpftrace copies no aggregation into another map, but takes
    its value where the map holds integers assigned elsewhere."""
    name = source(ty, value)
    if name is None or not isinstance(value, A.Map):
        return
    func = ty.agg_funcs[name]
    others = [n for n in walk([p.body for p in ty.st.ast.probes])
              if isinstance(n, A.Assign) and isinstance(n.target, A.Map) and n.target.name == target.name
              and source(ty, n.value) is None]
    if others and func in READABLE:
        return
    ty.err(f"Map value '{type_name(ty, name)}' cannot be assigned from one map to another. The function "
           f"that returns this type must be called directly e.g. `{target.name} = {EXAMPLES.get(func, func + '(...)')};`.", span,
           f"Add a cast to integer if you want the value of the aggregate, e.g. `{target.name} = (int64){name};`."
           if func in READABLE else None)


def printf_call(ty, call: A.Call) -> A.Call:
    """printf() of aggregation values: 0.27 prints them with %s alone (as a
    number), which plyc's printf spells %d (%u unsigned); any other
    conversion is refused with 0.27's words."""
    if not call.args or not isinstance(call.args[0], A.Str):
        return call
    values = call.args[1:]
    if not any(source(ty, v) for v in values):
        return call
    try:
        parts = P.parse(call.args[0].value.decode("utf-8", "replace"))
    except P.FormatError:
        return call      # the shared check says why
    out = []
    i = -1
    for part in parts:
        if not isinstance(part, P.Conv):
            out.append(part.replace("%", "%%"))
            continue
        i += 1
        name = source(ty, values[i]) if i < len(values) else None
        if name is None:
            out.append(part.text)
            continue
        if part.conv != "s":
            ty.err(f"unsupported format specifier for type '{type_name(ty, name)}': {part.conv}", call.span,
                   "bpftrace prints an aggregation's value with %s, or cast it: (int64)" + spelled(values[i]))
        if part.prec is not None:
            ty.err(f"a precision in '{part.text}' of {name}'s value is not supported by plyc yet", call.span)
        info = ty.maps.get(name)
        signed = info is None or info.value_type is None or info.value_type.signed
        out.append(f"%{part.flags}{part.width or ''}{'lld' if signed else 'llu'}")     # 64 bits, not C's int
    fmt = replace(call.args[0], value="".join(out).encode())
    return replace(call, args=[fmt] + list(values))


def check_delete(ty, name: str, span):
    """delete() from an aggregation: bpftrace 0.27 deletes a key of count(),
    sum(), min(), max(), avg() and stats() maps (the key-less one's value
    zeroed), but nothing from hist(), lhist() and tseries() ones, which it
    keys by (key, bucket or interval)."""
    func = ty.agg_funcs[name]
    if func in ("hist", "lhist", "tseries"):
        ty.err(f"delete() from the {func}() map {name} is refused: bpftrace 0.27 deletes nothing from "
               "hist(), lhist() and tseries() maps (it keys each bucket or interval apart)", span)


def check_loop(ty, name: str, span):
    """A for loop over an aggregation: its values, as count() ... avg()'s."""
    func = ty.agg_funcs.get(name)
    if func is not None and func not in READABLE:
        ty.err(f"Loop expression does not support type: {type_name(ty, name)}", span,
               "bpftrace loops over count(), sum(), min(), max() and avg() maps")
