"""`plyc emit --stage ir`: the IR as text, one line per statement, every
expression with its type (`expr:type`). Stable: the golden files in
tests/golden/ir/ hold it."""
from __future__ import annotations

from ..quoting import quoted
from . import nodes as ir


def dump(program: ir.Program) -> str:
    out = []
    for m in program.maps.values():
        keys = ", ".join(str(k) for k in m.key_types or [])
        value = f"{m.agg.name}({m.value_type})" if m.agg else str(m.value_type)
        params = f" params={list(m.params)}" if m.params else ""
        names = f" names={m.key_names}" if m.key_names and any(m.key_names) else ""
        out.append(f"map {m.name} {m.storage} [{keys}] -> {value}{params}{names}")
    for ev in program.events:
        args = ", ".join(str(t) for t in ev.arg_types)
        extra = f" {quoted(''.join(p if isinstance(p, str) else p.text for p in ev.parts).encode())}" \
            if ev.kind in (ir.PRINTF, ir.TIME) else f" {ev.map}" if ev.map else ""
        out.append(f"event {ev.id} {ev.kind}{extra} ({args}) line {ev.span.line}")
    params = []
    if program.nargs:
        params.append(f"args={program.nargs}")
    if program.uses_target:
        params.append("target")
    if program.report is not None:
        params.append("report")
    out.append(f"program strsize={program.strsize} arch={program.arch}"
               + "".join(" " + p for p in params))
    for p in program.probes:
        spec = f"{p.spec.provider}:{p.spec.arg}" if p.spec.arg else p.spec.provider
        flags = [f for f, on in (("stack", p.uses_stack), ("regs", p.uses_regs)) if on]
        if p.args_read:
            flags.append("reads=" + ",".join(sorted(p.args_read)))
        out.append(f"probe {p.index} {spec} -> {p.provider.name} {p.target.target or '-'} line {p.spec.span.line}"
                   + "".join(" " + f for f in flags))
        for name, typ in sorted(p.locals.items()):
            out.append(f"  local ${name}: {typ}")
        for name, fld in p.tp_fields.items():
            out.append(f"  field {name}: {fld.type}")
        out += stmt(p.body, 1)
    return "\n".join(out) + "\n"


def stmt(s: ir.Stmt, depth: int) -> list:
    pad = "  " * depth
    at = f"  @{s.span.line}"
    if isinstance(s, ir.Block):
        return [line for sub in s.stmts for line in stmt(sub, depth)]
    if isinstance(s, ir.If):
        out = [f"{pad}if {expr(s.cond)}{at}"] + stmt(s.then, depth + 1)
        if s.other is not None:
            out += [f"{pad}else"] + stmt(s.other, depth + 1)
        return out
    if isinstance(s, ir.While):
        out = [f"{pad}while {expr(s.cond)} cap={ir.LOOP_CAP}{at}"]
        if s.step is not None:
            out += [f"{pad}  step"] + stmt(s.step, depth + 2)
        return out + stmt(s.body, depth + 1)
    if isinstance(s, ir.ForMap):
        keys = ", ".join(f"${k}" for k in s.keys)
        return [f"{pad}for [{keys}], ${s.value} in {s.map}{at}"] + stmt(s.body, depth + 1)
    if isinstance(s, ir.Return):
        text = "return"
    elif isinstance(s, ir.Break):
        text = "break"
    elif isinstance(s, ir.Continue):
        text = "continue"
    elif isinstance(s, ir.SetLocal):
        text = f"${s.name} = {expr(s.value)}"
    elif isinstance(s, ir.MapStore):
        text = f"{s.map}[{exprs(s.keys)}] = {expr(s.value)}"
    elif isinstance(s, ir.Aggregate):
        text = f"{s.map}[{exprs(s.keys)}] <- {s.agg.name}({exprs(s.args)})"
    elif isinstance(s, ir.KeyLet):
        text = f"let {s.name} = key {s.map}[{exprs(s.keys)}]"
    elif isinstance(s, ir.LookupLet):
        text = f"let {s.name} = lookup {s.map}[{exprs(s.keys)}]"
    elif isinstance(s, ir.MapDelete):
        text = f"delete {s.map}[{exprs(s.keys)}]"
    elif isinstance(s, ir.EmitEvent):
        text = f"emit {s.event.kind} {s.event.id} ({exprs(s.args)})"
    elif isinstance(s, ir.CallStmt):
        text = f"call {expr(s.call)}"
    else:
        raise AssertionError(type(s).__name__)
    return [pad + text + at]


def exprs(es: list) -> str:
    return ", ".join(expr(e) for e in es)


def expr(e: ir.Expr) -> str:
    if isinstance(e, ir.KeyRef):
        return e.name       # the KeyLet's, whose keys have their types
    return f"{_expr(e)}:{e.type}"


def _expr(e: ir.Expr) -> str:
    if isinstance(e, ir.IntConst):
        return str(e.value)
    if isinstance(e, ir.BytesConst):
        return quoted(e.value)
    if isinstance(e, ir.Variable):
        return e.var.name
    if isinstance(e, ir.Local):
        return f"${e.name}"
    if isinstance(e, ir.Param):
        return f"param.{e.kind}" + (f"[{e.index}]" if e.index else "") + (f"+{e.offset}" if e.offset else "")
    if isinstance(e, ir.MapRead):
        return f"{e.map}[{exprs(e.keys)}]"
    if isinstance(e, ir.Unary):
        return f"({e.op}{expr(e.operand)})"
    if isinstance(e, ir.Binary):
        return f"({expr(e.left)} {e.op} {expr(e.right)})"
    if isinstance(e, ir.Ternary):
        return f"({expr(e.cond)} ? {expr(e.then)} : {expr(e.other)})"
    if isinstance(e, ir.TpField):
        return f"field.{e.name}"
    if isinstance(e, ir.Register):
        return f"reg.{e.name}"
    if isinstance(e, ir.KMember):
        return f"{expr(e.obj)}{'.' if e.obj.type.kind == 'struct' else '->'}{e.field}"
    if isinstance(e, ir.Index):
        return f"{expr(e.obj)}[{e.index}]"
    if isinstance(e, ir.Cast):
        return f"cast({expr(e.operand)})"
    if isinstance(e, ir.SizeOf):
        return f"sizeof({e.ctype})" + (f"={e.size}" if e.size is not None else "")
    if isinstance(e, ir.UserRead):
        return f"uread{e.size * 8}{'s' if e.signed else 'u'}({expr(e.addr)})"
    if isinstance(e, ir.DeviceConst):
        return f"device.{e.kind}" + (f"({quoted(e.name.encode())})" if e.name else "") + \
            (f" in {e.binary}" if e.binary else "")
    if isinstance(e, ir.Deref):
        return f"*{'user ' if e.user else ''}{expr(e.addr)}"
    if isinstance(e, ir.LookupValue):
        return f"*{e.name}"
    if isinstance(e, ir.LookupFound):
        return f"found {e.name}"
    if isinstance(e, ir.MapHas):
        return f"has {e.map}[{exprs(e.keys)}]"
    if isinstance(e, ir.Call):
        return f"{e.func.name}({exprs(e.args)})"
    if isinstance(e, ir.TupleMake):
        return f"tuple({exprs(e.items)})"
    if isinstance(e, ir.TupleGet):
        return f"{expr(e.obj)}.{e.index}"
    raise AssertionError(type(e).__name__)
