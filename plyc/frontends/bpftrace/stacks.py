"""bpftrace's stacks and user symbols: `ustack`, `ustack([mode][, n])`,
`kstack([mode][, n])` (bare `kstack` is plyc's `stack`), `usym(addr)`, and
`func` in a uretprobe (the function it returns into, a usym).

A stack is its id in a BPF stack map (types.Stack): the mode and frame
limit are in its type, so `ustack(perf)` and `ustack` are different keys,
as in bpftrace. A limited stack (`ustack(3)`) comes from a map of that
depth of its own (the probe's stack_limits), so stacks alike in their first
n frames are one key. A user stack carries the pid beside its id, and a
usym value the pid beside the address: the tracer names user addresses
from that process's mappings when it prints them (runtime-c/symbols/usyms.c)."""
from __future__ import annotations

from ... import builtins as B
from ... import types as T
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...ir import variables as V
from ...providers import Var
from . import ast as A

# bpftrace's names of the stack modes; "bpftrace" is the core's default, "".
MODES = ("bpftrace",) + tuple(m for m in T.STACK_MODES if m)
DEPTH = I.STACK_DEPTH


def _stack_probe(chk, what: str, span):
    probe = chk.probe
    # BEGIN's and END's are the tracer's own, where the kernel ran them (its
    # BPF_PROG_TEST_RUN call, or the uprobe on it before 5.10): bpftrace 0.27
    # prints its own likewise
    if not probe.provider.has_stack and not probe.provider.runs_once:
        chk.err(f"{probe.provider.name} probes have no stack for {what}", span)
    probe.uses_stack = True
    return probe


def _stack_args(chk, call) -> tuple:
    """(mode, limit) of kstack(...)/ustack(...): `(mode)`, `(n)`, `(mode, n)`."""
    args, mode, limit = list(call.args), chk.st.config.stack_mode, 0
    if args and isinstance(args[0], A.Ident) and args[0].name in MODES:
        mode = args.pop(0).name
    elif len(args) == 2 or args and isinstance(args[0], A.Ident):
        chk.err(f"{call.name}()'s mode is one of {', '.join(MODES)}", args[0].span)
        args.pop(0)
    if args:
        limit = chk.const_int(args[0], f"{call.name}()'s frame count must be a constant")
        if not 1 <= limit <= DEPTH:
            chk.err(f"{call.name}() keeps 1 to {DEPTH} frames, not {limit}", args[0].span)
    return mode, (0 if limit == DEPTH else limit)


def check_stack(chk, call):
    user = call.name == "ustack"
    mode, limit = _stack_args(chk, call)
    probe = _stack_probe(chk, f"{call.name}()", call.span)
    if limit:
        probe.stack_limits.add(limit)
    return ir.Call(I.USTACK if user else I.KSTACK, [ir.IntConst(limit, type=T.U32)],
                   type=T.Stack(user, "" if mode == "bpftrace" else mode, limit), span=call.span)


def ustack(chk, span) -> ir.Expr:
    """The bare `ustack`: the whole user stack in bpftrace's mode."""
    return check_stack(chk, A.Call("ustack", [], span=span, name_span=span))


def kstack(chk, span) -> ir.Expr:
    """The bare `kstack` in BEGIN or END: kstack() (plyc's `stack` is for
    probes the kernel runs)."""
    return check_stack(chk, A.Call("kstack", [], span=span, name_span=span))


def check_usym(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"usym() needs an address, got {x.type}", call.args[0].span)
    return ir.Call(I.USYM, [x], type=T.USYM, span=call.span)


# The user instruction pointer: in a uretprobe, where the function returned to.
IP = Var("_ip", T.U64, V.IP, doc="the instruction pointer")


def uretprobe_func(chk, span) -> ir.Expr:
    """`func` in a uretprobe: the symbol of the address it returns into, as
    bpftrace 0.17 gives it (its caller, not the probed function)."""
    ip = ir.Variable(IP, type=IP.type, span=span)
    return ir.Call(I.USYM, [ip], type=T.USYM, span=span)


def uprobe_func(chk, span) -> ir.Expr:
    """`func` in a uprobe wildcard: the symbol of the address that fired
    (the function's entry), named as bpftrace 0.17 names it, from the
    process's mappings while it lives; an exact-name uprobe sharing the
    body too, so that func has one type there."""
    return uretprobe_func(chk, span)


FUNCTIONS = {f.name: f for f in (
    B.Func("ustack", (0, 2), check_stack, I.USTACK, "the user stack"),
    B.Func("kstack", (0, 2), check_stack, I.KSTACK, "the kernel stack"),
    B.Func("usym", (1, 1), check_usym, I.USYM, "a user address's symbol"),
)}
