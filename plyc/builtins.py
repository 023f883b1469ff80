"""Built-in variables and functions, as tables. Each function is a typing
rule (`check`) giving a core intrinsic (plyc/ir/intrinsics.py, `op`) whose
C is the code generator's (plyc/codegen/intrinsics.py).

A typing rule gets the front end's typer and the call as written, and
returns its IR: an ir.Call (`typer.make_call`), an ir.EmitEvent for the
output functions (`typer.event`), or another IR node. The typer gives it
`expr(arg)` (the typed IR of an argument), `const_int(arg, what)`,
`literal_string(arg)`, `whole_map(arg)` (a map named alone: (name, is an
aggregation)), `is_positional(arg)`, `err(message, span, note)`, `maps` and
`strsize` (plyc/sema/typer.py's Sema, subclassed by each front end), and
the hooks where front ends' languages differ: `printf_conversions(convs, span)`,
`printf_accepts(conv, x, span)`, `AGG_WORDS`. The tables
speak no front end's dialect: a language's own rule is its Sema's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import printf as P
from . import types as T
from .ir import intrinsics as I
from .ir import nodes as ir
from .ir import variables as V
from .ir.variables import Var


VARIABLES = (
    Var("comm", T.Str(16), V.COMM, doc="task name", invariant=True),
    Var("execname", T.Str(16), V.COMM, doc="task name", invariant=True),
    Var("pid", T.U32, V.TGID, doc="process id (tgid)", invariant=True),
    Var("kpid", T.U32, V.TID, doc="thread id", invariant=True),
    Var("uid", T.U32, V.UID, invariant=True),
    Var("gid", T.U32, V.GID, invariant=True),
    Var("cpu", T.U32, V.CPU, invariant=True),
    Var("time", T.TIME, V.KTIME, doc="ns since boot, printed as a duration"),
    Var("walltime", T.WALLTIME, V.KTIME, doc="printed as local time of day"),
    Var("stack", T.STACK, V.KSTACK, doc="kernel stack", invariant=True),
)


# The process and thread ids as the tracer's PID namespace numbers them
# (runtime-c/load/pidns.c; the initial namespace's where it runs there),
# for the front ends whose `pid` is that, and for what a -p PID or -t TID
# the user gives is compared with. Not in VARIABLES: ply's pid and kpid
# stay the initial ones. Named apart from those in the IR's dump.
NS_PID = Var("nspid", T.U32, V.NS_TGID, doc="process id in the tracer's PID namespace", invariant=True)
NS_TID = Var("nstid", T.U32, V.NS_TID, doc="thread id in the tracer's PID namespace", invariant=True)

# Other names published ply scripts use for a variable.
ALIASES = {"kstack": "stack"}


def variable(name: str) -> Optional[Var]:
    name = ALIASES.get(name, name)
    for v in VARIABLES:
        if v.name == name:
            return v
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


def cast_type(tn) -> Optional[T.Type]:
    """The type of a cast to a base type or pointer (tn: its `words` and
    `pointers`); None for kernel types (BTF)."""
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
    check: Callable      # (typer, call as written) -> its IR node
    op: Optional[I.Intrinsic]   # what its ir.Call applies (None: an output function's ir.EmitEvent)
    doc: str = ""


def _size_arg(chk, call, index: int, default: int) -> int:
    if len(call.args) > index:
        n = chk.const_int(call.args[index], "expected a constant integer")
        if not 1 <= n <= 4096:
            chk.err("a size must be between 1 and 4096", call.args[index].span)
        return n
    return default


# str(p[, n]): a string read from memory (kernel, else user), or a string as is
def check_str(chk, call):
    arg = call.args[0]
    if chk.is_positional(arg):
        # The tracer's argument as a string.
        n = chk.expr(arg).index
        x = ir.Param(ir.ARG_STR, n, type=chk.read_str(chk.strsize), span=arg.span)
        return chk.make_call(call, [x], chk.read_str(_size_arg(chk, call, 1, chk.strsize)))
    x = chk.expr(arg)
    typ = x.type
    if typ.kind == "str":
        return chk.make_call(call, [x], typ if len(call.args) < 2 else T.Str(_size_arg(chk, call, 1, typ.size)))
    if typ.kind == "dataloc" or typ.is_int:
        return chk.make_call(call, [x], chk.read_str(_size_arg(chk, call, 1, chk.strsize)))
    chk.err(f"str() needs a pointer or a string, got {typ}", arg.span)


def check_mem(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"mem() needs a pointer, got {x.type}", call.args[0].span)
    return chk.make_call(call, [x], T.Buf(_size_arg(chk, call, 1, chk.strsize)))


def check_dyn(chk, call):
    x = chk.expr(call.args[0])
    if x.type.kind != "dataloc":
        chk.err(f"dyn() reads a __data_loc tracepoint field, got {x.type}", call.args[0].span)
    return chk.make_call(call, [x], T.Str(_size_arg(chk, call, 1, chk.strsize)))


def check_uptr(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"uptr() needs a pointer, got {x.type}", call.args[0].span)
    return chk.make_call(call, [x], T.Ptr(x.type.pointee or "void", user=True, size=8))


def check_ksym(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"ksym() needs an address, got {x.type}", call.args[0].span)
    return chk.make_call(call, [x], T.SYM)


def check_strcmp(chk, call):
    args = []
    for a in call.args:
        x = chk.expr(a)
        if x.type.kind != "str":
            chk.err(f"strcmp() compares strings, got {x.type}", a.span,
                    "read a string from a pointer with str(p)" if x.type.is_int else None)
        args.append(x)
    return chk.make_call(call, args, T.S32)


def check_exit(chk, call):
    code = ir.IntConst(0, type=T.S32)
    if call.args:
        code = chk.expr(call.args[0])
        if not code.type.is_int:
            chk.err(f"exit() takes an integer status, got {code.type}", call.args[0].span)
    # 64 bits: the tracer tells a status outside 0-255, which a narrower
    # field would have wrapped into one (exit(4294967296) as 0)
    return chk.event(call, ir.EXIT, [code], arg_types=[T.S64])


def _map_arg(chk, call, fname):
    arg = call.args[0]
    whole = chk.whole_map(arg)
    if whole is None:
        chk.err(f"{fname}() takes a map, e.g. {fname}(@name)", arg.span)
    if whole[0] not in chk.maps:
        chk.err(f"no map named {whole[0]}", arg.span)
    return whole[0]


def check_clear(chk, call):
    name = _map_arg(chk, call, "clear")
    return chk.event(call, ir.CLEAR, map=name)


def check_print(chk, call):
    whole = chk.whole_map(call.args[0]) if len(call.args) == 1 else None
    if whole and whole[0] in chk.maps and (whole[1] or chk.maps[whole[0]].key_types):
        return chk.event(call, ir.PRINTMAP, map=whole[0])
    args = []
    for a in call.args:
        whole = chk.whole_map(a)
        if whole and whole[1]:
            if len(call.args) == 1:
                chk.err(f"no map named {whole[0]}", a.span)
            chk.err("print() of a map takes that map alone: print(@name)", a.span)
        x = chk.expr(a)
        if x.type.kind not in ("int", "str", "buf", "inet", "usym", "stack", "tuple"):
            chk.err(f"can't print a value of type {x.type}", a.span)
        args.append(x)
    return chk.event(call, ir.PRINT, args, arg_types=[x.type for x in args])


def check_printf(chk, call):
    return check_formatted(chk, call, ir.PRINTF, "printf")


def check_format_count(chk, convs: list, rest: list, span) -> None:
    """A format's conversions and the values that follow it, one each
    (printf's, and a front end's other formatted calls, such as fail())."""
    if len(convs) != len(rest):
        chk.err(f"the format has {len(convs)} conversion{'s' if len(convs) != 1 else ''} "
                f"but {len(rest)} argument{'s follow' if len(rest) != 1 else ' follows'}", span)


def check_formatted(chk, call, kind: str, name: str) -> ir.EmitEvent:
    """An event of kind carrying a printf-style format and its arguments
    (printf(), and a front end's own formatted output, as cat() and system())."""
    fmt_arg = call.args[0]
    fmt = chk.literal_string(fmt_arg)
    if fmt is None:
        chk.err(f"{name}()'s first argument must be a format string literal", fmt_arg.span)
    try:
        parts = P.parse(fmt.decode("utf-8", "replace"))
    except P.FormatError as err:
        chk.err(str(err), fmt_arg.span)
    convs = [p for p in parts if isinstance(p, P.Conv)]
    chk.printf_conversions(convs, fmt_arg.span)
    rest = call.args[1:]
    check_format_count(chk, convs, rest, call.span)
    args = []
    for conv, a in zip(convs, rest):
        x = chk.expr(a)
        if not chk.printf_accepts(conv, x, a.span) and not P.accepts(conv.conv, x.type):
            chk.err(f"'{conv.text}' can't print a value of type {x.type}", a.span,
                    "a tuple prints with %s" if x.type.kind == "tuple"
                    else "use %v for any value's default format"
                    if x.type.kind != "void" and conv.conv != "v" else None)
        args.append(x)
    return chk.event(call, kind, args, parts=parts, arg_types=[x.type for x in args])


# The most arguments a function with a variable count takes (printf's format
# and 98 values): each value is a field of one output record.
MANY = 99


def arity_error(name: str, arity: tuple, got: int) -> str:
    """Why `got` arguments are not what a function of `arity` (lo, hi) takes."""
    lo, hi = arity
    if got > hi and hi >= MANY:
        return f"{name}() takes at most {hi} arguments, got {got}"
    want = str(lo) if lo == hi else (f"at least {lo}" if hi >= MANY else
                                     f"{lo} or {hi}" if hi == lo + 1 else f"{lo} to {hi}")
    plural = "" if want in ("1", "at least 1") else "s"
    return f"{name}() takes {want} argument{plural}, got {got}"

FUNCTIONS = {f.name: f for f in (
    Func("str", (1, 2), check_str, I.STR, "string from a pointer"),
    Func("mem", (1, 2), check_mem, I.MEM, "bytes from a pointer, printed as hex"),
    Func("dyn", (1, 2), check_dyn, I.DYN, "a __data_loc tracepoint field"),
    Func("uptr", (1, 1), check_uptr, I.UPTR, "mark a pointer as a user pointer"),
    Func("ksym", (1, 1), check_ksym, I.KSYM, "print an address as a kernel symbol"),
    Func("strcmp", (2, 2), check_strcmp, I.STRCMP, "compare two strings"),
    # The output functions are ir.EmitEvent statements, which the code
    # generator emits alike.
    Func("exit", (0, 1), check_exit, None, "stop tracing with a status"),
    Func("clear", (1, 1), check_clear, None, "empty a map"),
    Func("print", (1, MANY), check_print, None, "print values, or dump a map"),
    Func("printf", (1, MANY), check_printf, None, "formatted output"),
)}
