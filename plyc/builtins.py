"""Built-in variables and functions, as tables. Each function's typing rule
(`check`, called by the checker) sits beside its emission (`emit`, called by
the BPF code generator); the C helpers they call live in
runtime-c/bpf/plyc.bpf.h under the same names."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import ast
from . import printf as P
from . import types as T
from .parser import parse_int
from .providers import Var

VARIABLES = (
    Var("comm", T.Str(16), fill="plyc_comm", doc="task name"),
    Var("execname", T.Str(16), fill="plyc_comm", doc="task name"),
    Var("pid", T.Int(4, False, width=5), "(bpf_get_current_pid_tgid() >> 32)", doc="process id (tgid)"),
    Var("kpid", T.Int(4, False, width=5), "(__u32)bpf_get_current_pid_tgid()", doc="thread id"),
    Var("uid", T.Int(4, False, width=4), "(__u32)bpf_get_current_uid_gid()"),
    Var("gid", T.Int(4, False, width=4), "(bpf_get_current_uid_gid() >> 32)"),
    Var("cpu", T.Int(4, False, width=2), "bpf_get_smp_processor_id()"),
    Var("time", T.TIME, "bpf_ktime_get_ns()", doc="ns since boot, printed as a duration"),
    Var("walltime", T.WALLTIME, "bpf_ktime_get_ns()", doc="printed as local time of day"),
    Var("stack", T.STACK, "plyc_stackid(ctx)", doc="kernel stack"),
    # The tracer's -p PID, not $target's -c child (for `plyc argdist`'s filters).
    Var("_pidfilter", T.U32, "plyc_params.pid_filter", doc="-p PID, or 0"),
)


# Other names published ply scripts use for a variable.
ALIASES = {"kstack": "stack"}


def variable(name: str) -> Optional[Var]:
    name = ALIASES.get(name, name)
    for v in VARIABLES:
        if v.name == name:
            return v
    return None


def const_value(e: ast.Expr) -> Optional[int]:
    if isinstance(e, ast.Num):
        return e.value
    if isinstance(e, ast.Unary) and e.op == "-":
        v = const_value(e.operand)
        return None if v is None else -v
    if isinstance(e, ast.Binary) and e.op in "+-*":
        a, b = const_value(e.left), const_value(e.right)
        if a is None or b is None:
            return None
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]
    return None


def env_number(value: str) -> Optional[int]:
    try:
        return parse_int(value.strip()) if value.strip() else None
    except ValueError:
        return None


INT_WORDS = {
    ("u8",): (1, False), ("__u8",): (1, False), ("unsigned", "char"): (1, False), ("bool",): (1, False),
    ("_Bool",): (1, False), ("char",): (1, True), ("s8",): (1, True), ("__s8",): (1, True),
    ("signed", "char"): (1, True), ("short",): (2, True), ("s16",): (2, True), ("__s16",): (2, True),
    ("unsigned", "short"): (2, False), ("u16",): (2, False), ("__u16",): (2, False),
    ("int",): (4, True), ("signed",): (4, True), ("signed", "int"): (4, True), ("s32",): (4, True),
    ("__s32",): (4, True), ("pid_t",): (4, True), ("unsigned",): (4, False),
    ("unsigned", "int"): (4, False), ("u32",): (4, False), ("__u32",): (4, False),
    ("uid_t",): (4, False), ("gid_t",): (4, False), ("long",): (8, True), ("long", "long"): (8, True),
    ("long", "int"): (8, True), ("s64",): (8, True), ("__s64",): (8, True), ("ssize_t",): (8, True),
    ("unsigned", "long"): (8, False), ("unsigned", "long", "long"): (8, False), ("u64",): (8, False),
    ("__u64",): (8, False), ("size_t",): (8, False), ("void",): (0, False),
}


def cast_type(tn: ast.TypeName) -> Optional[T.Type]:
    """The type of a cast to a base type or pointer; None for kernel types (BTF)."""
    words = tuple(w for w in tn.words if w not in ("const", "volatile"))
    if words and words[0] in ("struct", "union", "enum"):
        return None
    if words not in INT_WORDS:
        return None
    size, signed = INT_WORDS[words]
    if tn.pointers:
        return T.Ptr(" ".join(words) + " *" * (tn.pointers - 1))
    if size == 0:
        return None
    return T.Int(size, signed)


# --- functions -------------------------------------------------------------

@dataclass(frozen=True)
class Func:
    name: str
    arity: tuple[int, int]
    check: Callable      # (checker, call) -> Type
    emit: Callable       # (gen, call) -> C expression, array name, or None
    doc: str = ""


def _size_arg(chk, call, index: int, default: int) -> int:
    if len(call.args) > index:
        n = chk.const_int(call.args[index])
        if not 1 <= n <= 4096:
            chk.err("a size must be between 1 and 4096", call.args[index].span)
        return n
    return default


def _is_positional(e) -> bool:
    return isinstance(e, ast.Dollar) and e.name.isdigit()


# str(p[, n]): a string read from memory (kernel, else user), or a string as is
def check_str(chk, call):
    arg = call.args[0]
    if _is_positional(arg) and arg.name not in chk.scratch_names:
        chk.expr(arg)
        return T.Str(_size_arg(chk, call, 1, chk.strsize))
    typ = chk.expr(arg)
    if typ.kind == "str":
        return T.Str(_size_arg(chk, call, 1, typ.size))
    if typ.kind == "dataloc" or typ.is_int:
        return T.Str(_size_arg(chk, call, 1, chk.strsize))
    chk.err(f"str() needs a pointer or a string, got {typ}", arg.span)


def emit_str(g, call):
    arg, typ = call.args[0], g.type(call)
    if _is_positional(arg) and arg.name not in g.unit.locals:
        dst = g.local_bytes(typ.size)
        g.line(f"plyc_copy_str({dst}, sizeof({dst}), (const char *)plyc_params.arg_str[{int(arg.name) - 1}], "
               f"sizeof(plyc_params.arg_str[0]));")
        return dst
    at = g.type(arg)
    if at.kind == "str":
        if at.size == typ.size:
            return g.bytes(arg)
        dst = g.local_bytes(typ.size)
        src = g.bytes(arg)
        g.line(f"plyc_copy_str({dst}, sizeof({dst}), {src}, sizeof({src}));")
        return dst
    dst = g.local_bytes(typ.size)
    g.read_string_into(dst, typ.size, arg)
    return dst


def check_mem(chk, call):
    typ = chk.expr(call.args[0])
    if not typ.is_int:
        chk.err(f"mem() needs a pointer, got {typ}", call.args[0].span)
    return T.Buf(_size_arg(chk, call, 1, chk.strsize))


def emit_mem(g, call):
    typ = g.type(call)
    dst = g.local_bytes(typ.size)
    ptr = g.scalar(call.args[0])
    fn = "plyc_read_user" if g.type(call.args[0]).user else "plyc_read_any"
    g.line(f"{fn}({dst}, sizeof({dst}), (const void *)(unsigned long)({ptr}));")
    return dst


def check_dyn(chk, call):
    typ = chk.expr(call.args[0])
    if typ.kind != "dataloc":
        chk.err(f"dyn() reads a __data_loc tracepoint field, got {typ}", call.args[0].span)
    return T.Str(_size_arg(chk, call, 1, chk.strsize))


def emit_dyn(g, call):
    dst = g.local_bytes(g.type(call).size)
    g.read_string_into(dst, g.type(call).size, call.args[0])
    return dst


def check_uptr(chk, call):
    typ = chk.expr(call.args[0])
    if not typ.is_int:
        chk.err(f"uptr() needs a pointer, got {typ}", call.args[0].span)
    return T.Ptr(typ.pointee or "void", user=True, size=8)


def emit_uptr(g, call):
    return g.scalar(call.args[0])


# _uread(addr, size, signed): an integer of `size` bytes read from user
# memory at addr (plyc argdist's reads through user-space struct types,
# whose offsets and sizes come from the target's C headers).
def check_uread(chk, call):
    typ = chk.expr(call.args[0])
    if not typ.is_int:
        chk.err(f"_uread() needs an address, got {typ}", call.args[0].span)
    size = chk.const_int(call.args[1])
    signed = chk.const_int(call.args[2])
    if size not in (1, 2, 4, 8):
        chk.err("_uread() reads 1, 2, 4 or 8 bytes", call.args[1].span)
    return T.Int(size, bool(signed))


def emit_uread(g, call):
    typ = g.type(call)
    ptr = g.scalar(call.args[0])
    name = g.tmp("u")
    g.line(f"{typ.ctype()} {name} = 0;")
    g.line(f"plyc_read_user(&{name}, sizeof({name}), (const void *)(unsigned long)({ptr}));")
    return f"(({typ.scalar_ctype()}){name})"


def check_ksym(chk, call):
    typ = chk.expr(call.args[0])
    if not typ.is_int:
        chk.err(f"ksym() needs an address, got {typ}", call.args[0].span)
    return T.SYM


def emit_ksym(g, call):
    return g.scalar(call.args[0])


def check_strcmp(chk, call):
    for a in call.args:
        typ = chk.expr(a)
        if typ.kind != "str":
            chk.err(f"strcmp() compares strings, got {typ}", a.span,
                    "read a string from a pointer with str(p)" if typ.is_int else None)
    return T.S32


def emit_strcmp(g, call):
    a, b = (g.bytes(x) for x in call.args)
    return f"(__s64)plyc_strcmp({a}, sizeof({a}), {b}, sizeof({b}))"


def check_exit(chk, call):
    if call.args:
        typ = chk.expr(call.args[0])
        if not typ.is_int:
            chk.err(f"exit() takes an integer status, got {typ}", call.args[0].span)
    chk.event(call, "exit", arg_types=[T.S32])
    return T.VOID


def emit_exit(g, call):
    code = g.scalar(call.args[0]) if call.args else "0"
    g.emit_event(call, [(T.S32, code)])
    return None


def _map_arg(chk, call, fname):
    arg = call.args[0]
    if not isinstance(arg, ast.MapRef) or arg.keys:
        chk.err(f"{fname}() takes a map, e.g. {fname}(@name)", arg.span)
    if arg.name not in chk.maps:
        chk.err(f"no map named {arg.name}", arg.span)
    return arg.name


def check_clear(chk, call):
    name = _map_arg(chk, call, "clear")
    chk.event(call, "clear", map=name)
    return T.VOID


def emit_map_event(g, call):
    g.emit_event(call, [])
    return None


def check_print(chk, call):
    if len(call.args) == 1 and isinstance(call.args[0], ast.MapRef) and not call.args[0].keys \
            and call.args[0].name in chk.maps and \
            (call.args[0].is_agg or chk.maps[call.args[0].name].key_types):
        chk.event(call, "printmap", map=call.args[0].name)
        return T.VOID
    types = []
    for a in call.args:
        if isinstance(a, ast.MapRef) and not a.keys and a.is_agg:
            if len(call.args) == 1:
                chk.err(f"no map named {a.name}", a.span)
            chk.err("print() of a map takes that map alone: print(@name)", a.span)
        typ = chk.expr(a)
        if typ.kind not in ("int", "str", "buf", "stack"):
            chk.err(f"can't print a value of type {typ}", a.span)
        types.append(typ)
    chk.event(call, "print", arg_types=types)
    return T.VOID


def emit_print(g, call):
    ev = g.event_of(call)
    if ev.kind == "printmap":
        g.emit_event(call, [])
        return None
    g.emit_event(call, list(zip(ev.arg_types, call.args)))
    return None


def check_printf(chk, call):
    fmt_arg = call.args[0]
    if not isinstance(fmt_arg, ast.Str):
        chk.err("printf()'s first argument must be a format string literal", fmt_arg.span)
    try:
        parts = P.parse(fmt_arg.value.decode("utf-8", "replace"))
    except P.FormatError as err:
        chk.err(str(err), fmt_arg.span)
    convs = [p for p in parts if isinstance(p, P.Conv)]
    args = call.args[1:]
    if len(convs) != len(args):
        chk.err(f"the format has {len(convs)} conversion{'s' if len(convs) != 1 else ''} "
                f"but {len(args)} argument{'s follow' if len(args) != 1 else ' follows'}", call.span)
    types = []
    for conv, a in zip(convs, args):
        typ = chk.expr(a)
        if not P.accepts(conv.conv, typ):
            chk.err(f"'{conv.text}' can't print a value of type {typ}", a.span,
                    "use %v for any value's default format" if typ.kind != "void" else None)
        types.append(typ)
    chk.event(call, "printf", parts=parts, arg_types=types)
    return T.VOID


def emit_printf(g, call):
    ev = g.event_of(call)
    g.emit_event(call, list(zip(ev.arg_types, call.args[1:])))
    return None


MANY = 99

FUNCTIONS = {f.name: f for f in (
    Func("str", (1, 2), check_str, emit_str, "string from a pointer"),
    Func("mem", (1, 2), check_mem, emit_mem, "bytes from a pointer, printed as hex"),
    Func("dyn", (1, 2), check_dyn, emit_dyn, "a __data_loc tracepoint field"),
    Func("uptr", (1, 1), check_uptr, emit_uptr, "mark a pointer as a user pointer"),
    Func("ksym", (1, 1), check_ksym, emit_ksym, "print an address as a kernel symbol"),
    Func("strcmp", (2, 2), check_strcmp, emit_strcmp, "compare two strings"),
    Func("exit", (0, 1), check_exit, emit_exit, "stop tracing with a status"),
    Func("clear", (1, 1), check_clear, emit_map_event, "empty a map"),
    Func("print", (1, MANY), check_print, emit_print, "print values, or dump a map"),
    Func("printf", (1, MANY), check_printf, emit_printf, "formatted output"),
    Func("_uread", (3, 3), check_uread, emit_uread, "argdist's read of user memory"),
)}
