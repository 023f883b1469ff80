"""bpftrace's own builtins that plyc's shared tables (plyc/builtins.py) do
not have: variables that are one BPF helper call, and functions that are
one intrinsic. Their typing rules are this front end's, so ply's language
does not grow them; each is a providers.Var or builtins.Func like the
shared ones, and the code generator emits them the same way."""
from __future__ import annotations

from dataclasses import replace

from ... import builtins as B
from ... import types as T
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...ir import variables as V
from ...providers import Var

# Variables that are one helper call (any probe type): the core's sources.
VARIABLES = {v.name: v for v in (
    Var("rand", T.U32, V.RAND, doc="a random number"),
    Var("cgroup", T.U64, V.CGROUP, doc="the task's cgroup v2 id"),
    Var("numaid", T.U32, V.NUMA, doc="the NUMA node running the probe"),
    Var("jiffies", T.U64, V.JIFFIES, doc="the kernel's jiffies (Linux 5.5)"),
    # a number: bpftrace has no durations (ply's `time` is one)
    Var("nsecs", T.S64, V.KTIME, doc="ns since boot (bpf_ktime_get_ns)"),
)}
# 0.27's pid and tid: the ids in the tracer's PID namespace
VARIABLES.update(pid=B.NS_PID, tid=B.NS_TID)

# pid(init), tid(init): the initial PID namespace's ids (ply's pid and kpid).
INIT_NS = {"pid": B.variable("pid"), "tid": B.variable("kpid")}

# curtask: the task_struct pointer, typed through BTF so `curtask->pid` reads
# by CO-RE (bpftrace 0.17 types it uint64 and casts it: that works too).
CURTASK = Var("curtask", T.U64, V.TASK, doc="the current task_struct")


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
    return _call(I.BSWAP, [x], T.Int(x.type.size, False), call.span)


# kptr(p): p, marked as a kernel pointer (plyc's pointers are kernel ones
# unless they come from a user pointer or uptr()).
def check_kptr(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"kptr() needs a pointer, got {x.type}", call.args[0].span)
    typ = replace(x.type, user=False)
    return _call(I.KPTR, [x], typ, call.span)


# strncmp(a, b, n): 0 when the first n bytes (up to a NUL) are equal, else 1
# (not C's sign: bpftrace 0.17's and 0.27's); a uint64, as 0.27 types it.
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
    return _call(I.STRNCMP, args + [ir.IntConst(n, type=T.U64)], T.U64, call.span)


# memcmp(a, b, n): 0.27's stdlib function: the first n bytes of two
# strings or arrays, the difference of the first bytes that differ (signed
# chars), else 0; an int32 as 0.27's. n may be known at run time only; no
# byte past the smaller value is compared (0.27 reads on).
def check_memcmp(chk, call):
    args = []
    for a in call.args[:2]:
        x = chk.expr(a)
        if x.type.kind not in ("str", "buf") or x.type.sized:
            chk.err(f"memcmp() compares strings or arrays, got {x.type}", a.span)
        args.append(x)
    n = chk.expr(call.args[2])
    if not n.type.is_int or n.type.is_pointer:
        chk.err(f"memcmp()'s count must be an integer, got {n.type}", call.args[2].span)
    return _call(I.MEMCMP, args + [n], T.S32, call.span)


# join(argv[, sep]): up to JOIN_ARGS strings of a NULL-terminated array,
# JOIN_SIZE bytes each (bpftrace 0.17's limits: 16 arguments of up to 1024
# bytes, not its 64-byte strings: execsnoop side by side with it prints a
# long `sh -c` argument whole), read into the event's record; the tracer
# joins them.
JOIN_ARGS, JOIN_SIZE = I.JOIN_ARGS, I.JOIN_SIZE


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
    strings = _call(I.JOIN_READ, [x], typ, call.span)
    return chk.event(call, ir.JOIN, [strings], parts=[sep, JOIN_SIZE], arg_types=[typ])


# ntop([af,] addr): an IP address as text, bpftrace's inet value (T.INET):
# the family, then the address bytes as they are in memory (network order
# in the kernel's structs). An integer is IPv4 (its low 32 bits, as
# bpftrace stores them); an array of 4 or 16 bytes is IPv4 or IPv6.
AF_INET, AF_INET6 = 2, 10


def check_ntop(chk, call):
    args = [chk.expr(a) for a in call.args[:-1]] + [chk.array_operand(call.args[-1])]
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
    return _call(I.NTOP, args, T.INET, call.span)


# socket_cookie(sk): the socket's cookie, bpf_get_socket_cookie (Linux 5.12
# in tracing programs), a uint64. As 0.27: a struct sock *, in a probe that
# runs as a tracing program (plyc's kfunc and kretfunc: fentry, fexit),
# where the helper takes the kernel's own pointer: a function's argument.
def check_socket_cookie(chk, call):
    probe = chk.probe
    if probe.provider.trampoline is None:
        chk.err("socket_cookie() can only be used in kfunc (fentry) and kretfunc (fexit) probes",
                call.name_span, "bpf_get_socket_cookie takes the struct sock * a traced function receives")
    x = chk.expr(call.args[0])
    if not x.type.is_pointer or (x.type.pointee or "").split() != ["struct", "sock"]:
        chk.err(f"socket_cookie() only supports 'struct sock *' as the argument ({x.type} provided)",
                call.args[0].span)
    arg = x.operand if isinstance(x, ir.Cast) else x
    if not (isinstance(arg, ir.Variable) and arg.var.name.startswith("arg")):
        chk.err("socket_cookie() takes the probed function's argument (args.sk), as the kernel passed it",
                call.args[0].span, "the helper needs the kernel's own pointer, which a read from memory is not")
    return _call(I.SOCKET_COOKIE, [x], T.U64, call.span)


# `probe` in a tracepoint wildcard: the event that fired, by the id every
# tracepoint record starts with; the tracer fills the id -> name table as it
# attaches each event the glob matches on the device (plyc_tp_names).
TP_NAME, TP_NAME_SIZE = I.TP_NAME, I.TP_NAME_SIZE


FUNCTIONS = {f.name: f for f in (
    B.Func("bswap", (1, 1), check_bswap, I.BSWAP, "reverse an integer's bytes"),
    B.Func("kptr", (1, 1), check_kptr, I.KPTR, "mark a pointer as a kernel pointer"),
    B.Func("strncmp", (3, 3), check_strncmp, I.STRNCMP, "compare the first n bytes of two strings"),
    B.Func("memcmp", (3, 3), check_memcmp, I.MEMCMP, "compare the first n bytes of two strings or arrays"),
    B.Func("join", (1, 2), check_join, None, "print an array of strings, joined"),
    B.Func("ntop", (1, 2), check_ntop, I.NTOP, "an IPv4 or IPv6 address as text"),
    B.Func("socket_cookie", (1, 1), check_socket_cookie, I.SOCKET_COOKIE, "a socket's cookie (kfunc, kretfunc)"),
)}
