"""bpftrace 0.27's questions a script asks of its own expressions, answered
when it is compiled: is_str(), is_ptr(), is_array(), is_integer(),
is_unsigned_integer() of an expression's type, is_literal() of how it is
written, static_assert() of such answers; assert(cond, msg), 0.27's
macro that stops the tracer (an error line, exit(1)) when cond is false;
container_of(ptr, typeof(TYPE), member), a cast of the address less the
member's offset; assert_str(), strcap() and default_str_length(), 0.27's
questions of strings; str() of a number written as a literal, its decimal text
(0.27's: str(123) is "123", where a variable's value is an address).

The type questions answer as 0.27.1 does (each tried beside it,
tests/runtime/bt-meta.test): a bool, a pointer or a value the tracer
prints as text (username, strerror()'s, ksym()'s) is no integer; a literal
number is a signed one (int64); comm and str() are strings; pton()'s
bytes and an array cast are arrays, buf()'s are not."""
from __future__ import annotations

from ... import printf
from ... import types as T
from ...ir import nodes as ir
from . import ast as A
from . import smalltypes
from .trees import const_value, rebuilt, walk

BOOL = T.Int(1, False, "bool")


def _integer(t: T.Type) -> bool:
    return t.kind == "int" and not t.is_pointer and t.denotes not in ("bool", "sym") + printf.TEXT_FMTS


TYPE_TESTS = {
    "is_str": lambda t: t.kind == "str",
    "is_ptr": lambda t: t.kind == "int" and t.is_pointer,
    "is_array": lambda t: (t.kind == "buf" and not t.sized) or (t.kind == "tuple" and t.denotes == "array"),
    "is_integer": _integer,
    "is_unsigned_integer": lambda t: _integer(t) and not t.signed,
}


def is_literal(e) -> bool:
    """Whether e is written as a literal: a number, a string, true or
    false, or operators of them (0.27 folds `1 + 2`, `1 < 2 ? 3 : 4`); a
    cast is not one."""
    if isinstance(e, A.Str) or isinstance(e, A.Ident) and e.name in ("true", "false"):
        return True
    if isinstance(e, A.Unary) and e.op in "-~!":
        return is_literal(e.operand)
    if isinstance(e, A.Binary):
        return is_literal(e.left) and is_literal(e.right)
    if isinstance(e, A.Ternary):
        return is_literal(e.cond) and is_literal(e.then) and is_literal(e.other)
    return isinstance(e, A.Int)


def answer(chk, e):
    """e's value when the script is compiled (a bool or an integer), or None."""
    if isinstance(e, A.Call) and e.name in TYPE_TESTS and len(e.args) == 1:
        return TYPE_TESTS[e.name](type_of(chk, e.args[0]))
    if isinstance(e, A.Call) and e.name == "is_literal" and len(e.args) == 1:
        return is_literal(e.args[0])
    if isinstance(e, A.Ident) and e.name in ("true", "false"):
        return e.name == "true"
    if isinstance(e, A.Unary) and e.op == "!":
        v = answer(chk, e.operand)
        return None if v is None else not v
    if isinstance(e, A.Binary) and e.op in COMPARE:
        a, b = answer(chk, e.left), answer(chk, e.right)
        return None if a is None or b is None else COMPARE[e.op](a, b)
    return const_value(e)


COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
           "&&": lambda a, b: bool(a) and bool(b), "||": lambda a, b: bool(a) or bool(b)}


# 0.27's uint64 values that plyc types int64, so that differences of them
# are 0.27's numbers (`1 - nsecs` is negative in both): builtins.py
SIGNED_HERE = ("nsecs",)


def type_of(chk, e) -> T.Type:
    """e's type as 0.27 answers questions of it."""
    t = chk.expr(e).type
    if isinstance(e, (A.Ident, A.Call)) and e.name in SIGNED_HERE and not getattr(e, "args", None):
        t = T.Int(t.size, False, t.denotes)
    return t


def check_type_test(chk, call: A.Call):
    """is_str(e) and the others: a bool constant (e is typed, never run)."""
    return ir.IntConst(int(TYPE_TESTS[call.name](type_of(chk, call.args[0]))), type=BOOL, span=call.span)


def check_is_literal(chk, call: A.Call):
    return ir.IntConst(int(is_literal(call.args[0])), type=BOOL, span=call.span)


def check_static_assert(chk, call: A.Call):
    """static_assert(cond, msg): the build stops with msg where cond is
    false; cond must be known when the script is compiled."""
    msg = chk.literal_string(call.args[1])
    if msg is None:
        chk.err("static_assert()'s message must be a string literal", call.args[1].span)
    v = answer(chk, call.args[0])
    if v is None:
        chk.err("static_assert()'s condition must be known when the script is compiled", call.args[0].span,
                "a constant, or is_str(), is_integer(), ... of an expression")
    if not v:
        chk.err(msg.split(b"\0")[0].decode("utf-8", "replace"), call.span)
    return ir.IntConst(0, type=T.S64, span=call.span)


def string_like(chk, e, span) -> T.Type:
    """e's type (as 0.27 sizes it), where 0.27's assert_str() takes it: a
    string, an array of int8 or a pointer to int8 (not C's char: a
    tracepoint's `const char *` is refused, as by 0.27)."""
    t = smalltypes.visible(chk, smalltypes.of(chk, e))
    if TYPE_TESTS["is_array"](t):
        if t.kind == "buf" or t.items[0] != T.Int(1, True):
            chk.err("string-like arrays must contain a char-like type", span, f"it holds {t}")
    elif TYPE_TESTS["is_ptr"](t):
        if t.pointee != "s8":
            chk.err("string-like pointers must point to a char-like type", span, "cast it to (int8 *)")
    elif t.kind != "str":
        chk.err("string-like values must be either strings, arrays or pointers", span)
    return t


def check_assert_str(chk, call: A.Call):
    """assert_str(e): the build stops where e is not string-like."""
    string_like(chk, call.args[0], call.span)
    return ir.IntConst(0, type=T.S64, span=call.span)


def check_strcap(chk, call: A.Call):
    """strcap(e): a string's size (0.27's: str(p) max_strlen), an array's
    elements, a pointer's string's length (strlen)."""
    t = string_like(chk, call.args[0], call.span)
    if t.kind == "str":
        return ir.IntConst(t.size, type=T.S64, span=call.span)
    if t.kind == "tuple":
        return ir.IntConst(len(t.items), type=T.S64, span=call.span)
    return chk.expr(A.Call("strlen", [call.args[0]], span=call.span, name_span=call.name_span))


def check_default_str_length(chk, call: A.Call):
    """default_str_length(): the size of a string str() reads, max_strlen."""
    return ir.IntConst(chk.st.max_strlen, type=T.U64, span=call.span)


def check_assert(chk, call: A.Call):
    """assert() anywhere but as a statement of its own (expand() took those)."""
    chk.err("assert(condition, message) is a statement of its own", call.span)


FUNCTIONS = {name: ((1, 1), check_type_test) for name in TYPE_TESTS}
FUNCTIONS.update({"is_literal": ((1, 1), check_is_literal), "static_assert": ((2, 2), check_static_assert),
                  "assert": ((2, 2), check_assert)})


def call(chk, e: A.Call):
    (lo, hi), check = FUNCTIONS[e.name]
    if not lo <= len(e.args) <= hi:
        n = f"{lo} argument{'s' if lo != 1 else ''}"
        chk.err(f"{e.name}() takes {n}, got {len(e.args)}", e.span)
    return check(chk, e)


def _member_path(e):
    """`a` or `a.b.c` as the member names, else None."""
    if isinstance(e, A.Ident):
        return [e.name]
    if isinstance(e, A.Field) and not e.arrow:
        path = _member_path(e.obj)
        return None if path is None else path + [e.name]
    return None


def container_of(c: A.Call):
    """container_of(ptr, typeof(TYPE), member) as 0.27's stdlib macro reads
    it: `(TYPE *)((uint64)ptr - offsetof(TYPE, member))`, or None where the
    arguments are not so written (check_container_of says why)."""
    if len(c.args) != 3:
        return None
    ptr, of, member = c.args
    tn = of.args[0] if isinstance(of, A.Call) and of.name == "typeof" and len(of.args) == 1 else None
    path = _member_path(member)
    if not isinstance(tn, A.TypeName) or tn.pointers or tn.array_len is not None or path is None:
        return None
    sp = c.span
    addr = A.Cast(A.TypeName("uint64", span=sp), ptr, span=sp)
    at = A.Binary("-", addr, A.Offsetof(tn, path, span=sp), span=sp)
    return A.Cast(A.TypeName(tn.base, 1, span=sp), at, span=sp)


def check_container_of(chk, call: A.Call):
    """container_of() whose arguments expand() could not read."""
    chk.err("container_of() takes a pointer, the container's type as typeof(TYPE) and a member's name",
            call.span, "container_of($p, typeof(struct task_struct), tasks)")


FUNCTIONS["container_of"] = ((3, 3), check_container_of)
FUNCTIONS.update({"assert_str": ((1, 1), check_assert_str), "strcap": ((1, 1), check_strcap),
                  "default_str_length": ((0, 0), check_default_str_length)})


def number_text(c: A.Call):
    """str(N[, n]) of an integer written as a literal (`str(123)`, `str(-5)`,
    `str(1 + 2)`: not a cast, not a variable): its decimal text, its first
    n bytes, as 0.27 gives it; None for any other str()."""
    if not 1 <= len(c.args) <= 2 or not is_literal(c.args[0]) or \
            any(isinstance(n, A.Str) or isinstance(n, A.Ident) for n in walk(c.args[0])):
        return None
    v = const_value(c.args[0])
    n = const_value(c.args[1]) if len(c.args) == 2 else None
    if v is None or len(c.args) == 2 and (n is None or n < 0):
        return None
    text = str(v).encode()
    return A.Str(text if n is None else text[:n], span=c.span)


def expand(node, version: str = "0.27"):
    """The tree with 0.27's stdlib macros that are statements or types
    written out: each `assert(cond, msg);` statement as
    `if (!cond) { errorf("assert failed: %s", msg); exit(1); }`, each
    container_of() as its cast, str() of a literal number as its text
    (0.27's; bpftrace 0.17 reads memory there)."""
    if isinstance(node, list):
        return [expand(x, version) for x in node]
    if isinstance(node, A.Call) and node.name == "str" and version != "0.17":    # 0.17 reads address 123
        made = number_text(node)
        if made is not None:
            return made
    if isinstance(node, A.Call) and node.name == "container_of":
        made = container_of(node)
        if made is not None:
            return expand(made, version)
    if isinstance(node, A.ExprStmt) and isinstance(node.expr, A.Call) and node.expr.name == "assert" \
            and len(node.expr.args) == 2:
        c, sp = node.expr, node.expr.span
        fail = [A.ExprStmt(A.Call("errorf", [A.Str(b"assert failed: %s", span=sp), c.args[1]], span=sp,
                                  name_span=c.name_span), span=sp),
                A.ExprStmt(A.Call("exit", [A.Int(1, "1", span=sp)], span=sp, name_span=c.name_span), span=sp)]
        return expand(A.If(A.Unary("!", c.args[0], span=sp), A.Block(fail, span=sp), span=sp), version)
    if isinstance(node, A.Node):
        return rebuilt(node, lambda x: expand(x, version))
    return node
