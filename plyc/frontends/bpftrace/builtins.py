"""bpftrace's own builtins that plyc's shared tables (plyc/builtins.py) do
not have: variables that are one BPF helper call, and functions whose C is
one expression. They are this front end's, so ply's language does not grow
them; each is a providers.Var or builtins.Func like the shared ones, and the
code generator emits them the same way."""
from __future__ import annotations

from dataclasses import replace

from ... import builtins as B
from ... import types as T
from ...ir import nodes as ir
from ...providers import Var

# Variables that are one helper call (any probe type).
VARIABLES = {v.name: v for v in (
    Var("rand", T.U32, "bpf_get_prandom_u32()", doc="a random number"),
    Var("cgroup", T.U64, "bpf_get_current_cgroup_id()", doc="the task's cgroup v2 id"),
    Var("numaid", T.U32, "bpf_get_numa_node_id()", doc="the NUMA node running the probe"),
    Var("jiffies", T.U64, "bpf_jiffies64()", doc="the kernel's jiffies (Linux 5.5)"),
)}

# curtask: the task_struct pointer, typed through BTF so `curtask->pid` reads
# by CO-RE (bpftrace 0.17 types it uint64 and casts it: that works too).
CURTASK = Var("curtask", T.U64, "(__u64)bpf_get_current_task()", doc="the current task_struct")


def curtask_type(chk, span) -> T.Type:
    tid = chk.kernel(lambda k: k.lookup(("struct", "task_struct")), span)
    if tid is None:
        chk.err("the kernel's BTF has no struct task_struct", span)
    return chk.kernel(lambda k: k.pointer_to(tid), span)


def _call(func, args, typ, span) -> ir.Call:
    return ir.Call(func, args, type=typ, span=span)


# bswap(x): x's bytes reversed, unsigned of x's width.
def check_bswap(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"bswap() needs an integer, got {x.type}", call.args[0].span)
    return _call(FUNCTIONS["bswap"], [x], T.Int(x.type.size, False), call.span)


def emit_bswap(g, call):
    size = call.type.size
    value = g.scalar(call.args[0])
    if size == 1:
        return f"((__u8)({value}))"
    return f"((__u{size * 8})__builtin_bswap{size * 8}((__u{size * 8})({value})))"


# kptr(p): p, marked as a kernel pointer (plyc's pointers are kernel ones
# unless they come from a user pointer or uptr()).
def check_kptr(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"kptr() needs a pointer, got {x.type}", call.args[0].span)
    typ = replace(x.type, user=False)
    return _call(FUNCTIONS["kptr"], [x], typ, call.span)


# strncmp(a, b, n): 0 when the first n bytes (up to a NUL) are equal.
def check_strncmp(chk, call):
    args = []
    for a in call.args[:2]:
        x = chk.expr(a)
        if x.type.kind != "str":
            chk.err(f"strncmp() compares strings, got {x.type}", a.span,
                    "read a string from a pointer with str(p)" if x.type.is_int else None)
        args.append(x)
    n = chk.const_int(call.args[2], "strncmp()'s length must be a constant")
    if n < 0:
        chk.err("strncmp()'s length can't be negative", call.args[2].span)
    return _call(FUNCTIONS["strncmp"], args + [ir.IntConst(n, type=T.U64)], T.S64, call.span)


def emit_strncmp(g, call):
    a, b = (g.bytes(x) for x in call.args[:2])
    n = call.args[2].value
    sa, sb = min(n, call.args[0].type.size), min(n, call.args[1].type.size)
    return f"(__s64)plyc_strcmp({a}, {sa}, {b}, {sb})"


# join(argv[, sep]): up to JOIN_ARGS strings of a NULL-terminated array,
# JOIN_SIZE bytes each (bpftrace 0.17's limits: 16 arguments of up to 1024
# bytes, not its 64-byte strings: execsnoop side by side with it prints a
# long `sh -c` argument whole), read into the event's record; the tracer
# joins them.
JOIN_ARGS, JOIN_SIZE = 16, 1024


def emit_join_read(g, call):
    arg = call.args[0]
    dst = g.local_bytes(JOIN_ARGS * JOIN_SIZE)
    base, more = g.tmp("argv"), g.tmp("more")
    read = "plyc_read_user" if arg.type.user else "plyc_read_any"
    read_str = "bpf_probe_read_user_str" if arg.type.user else "plyc_read_str"
    g.line(f"const char *const *{base} = (const char *const *)(unsigned long)({g.scalar(arg)});")
    g.line(f"int {more} = 1;")
    for i in range(JOIN_ARGS):
        p = g.tmp("p")
        g.line(f"if ({more}) {{")
        g.line(f"\tconst char *{p} = 0;")
        g.line(f"\t{read}(&{p}, sizeof({p}), {base} + {i});")
        g.line(f"\tif ({p})")
        g.line(f"\t\t{read_str}({dst} + {i * JOIN_SIZE}, {JOIN_SIZE}, {p});")
        g.line("\telse")
        g.line(f"\t\t{more} = 0;")
        g.line("}")
    return dst


JOIN_READ = B.Func("_join_read", (1, 1), None, emit_join_read, "join()'s strings, read")


def check_join(chk, call) -> ir.EmitEvent:
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"join() needs an array of string pointers (char **), got {x.type}", call.args[0].span)
    sep = " "
    if len(call.args) > 1:
        lit = chk.literal_string(call.args[1])
        if lit is None:
            chk.err("join()'s separator must be a string literal", call.args[1].span)
        sep = lit.decode("utf-8", "replace")
    typ = T.Buf(JOIN_ARGS * JOIN_SIZE)
    strings = _call(JOIN_READ, [x], typ, call.span)
    return chk.event(call, ir.JOIN, [strings], parts=[sep, JOIN_SIZE], arg_types=[typ])


# ntop([af,] addr): an IP address as text, bpftrace's inet value (T.INET):
# the family, then the address bytes as they are in memory (network order
# in the kernel's structs). An integer is IPv4 (its low 32 bits, as
# bpftrace stores them); an array of 4 or 16 bytes is IPv4 or IPv6.
AF_INET, AF_INET6 = 2, 10


def check_ntop(chk, call):
    args = [chk.expr(a) for a in call.args]
    addr, span = args[-1], call.args[-1].span
    if len(args) == 2 and not args[0].type.is_int:
        chk.err(f"ntop()'s address family must be an integer, got {args[0].type}", call.args[0].span)
    # A char array of the kernel's (u6_addr8) types as a string; other
    # strings (comm, literals) are not addresses, as in bpftrace.
    array = addr.type.kind == "buf" or addr.type.kind == "str" and isinstance(addr, (ir.KMember, ir.TpField))
    if addr.type.is_int:
        family = AF_INET
    elif array and addr.type.size in (4, 16):
        family = AF_INET if addr.type.size == 4 else AF_INET6
    else:
        chk.err(f"ntop() needs an integer or an array of 4 or 16 bytes, got {addr.type}", span)
        family = AF_INET
    if len(args) == 1:
        args.insert(0, ir.IntConst(family, type=T.U64, span=call.span))
    return _call(FUNCTIONS["ntop"], args, T.INET, call.span)


def emit_ntop(g, call):
    af_expr, addr = call.args
    af = g.tmp("af")
    g.line(f"__u64 {af} = {g.scalar(af_expr)};")
    if addr.type.is_int:
        src, n = g.tmp("ip4"), 4
        g.line(f"__u32 {src} = (__u32)({g.scalar(addr)});")
        src = "&" + src
    else:
        src, n = g.bytes(addr), addr.type.size
    dst = g.local_bytes(T.INET_SIZE)
    g.line(f"__builtin_memcpy({dst}, &{af}, 8);")
    g.line(f"__builtin_memcpy({dst} + 8, {src}, {n});")
    return dst


# `probe` in a tracepoint wildcard: the event that fired, by the id every
# tracepoint record starts with; the tracer fills the id -> name table as it
# attaches each event the glob matches on the device (plyc_tp_names).
TP_NAME_SIZE = 128    # runtime-c/plyc_tp.h's PLYC_TP_NAME_SIZE: room for a uprobe's path


def emit_tp_name(g, call):
    dst = g.local_bytes(TP_NAME_SIZE)
    g.line(f"plyc_tp_name(ctx, {dst});")
    return dst


TP_NAME = B.Func("_tp_name", (0, 0), None, emit_tp_name, "a tracepoint glob's event that fired, by name")


FUNCTIONS = {f.name: f for f in (
    B.Func("bswap", (1, 1), check_bswap, emit_bswap, "reverse an integer's bytes"),
    B.Func("kptr", (1, 1), check_kptr, B.emit_same, "mark a pointer as a kernel pointer"),
    B.Func("strncmp", (3, 3), check_strncmp, emit_strncmp, "compare the first n bytes of two strings"),
    B.Func("join", (1, 2), check_join, None, "print an array of strings, joined"),
    B.Func("ntop", (1, 2), check_ntop, emit_ntop, "an IPv4 or IPv6 address as text"),
)}
