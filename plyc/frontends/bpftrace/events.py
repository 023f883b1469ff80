"""bpftrace's functions that act rather than compute: cat() and system()
(events the tracer acts on), buf() (bytes with their length, printed by
%r), path() (bpf_d_path, fentry only), and the helpers with side effects
signal(), override() and write_user().

system(), signal(), override() and write_user() are bpftrace's "unsafe" functions: a
script may use them only when the tracer is built with `plyc build
--unsafe` (bpftrace asks for --unsafe when it runs; a plyc tracer runs no
compiler, so the permission is given when it is built: `refuse_unsafe`)."""
from __future__ import annotations

import signal as _signal
from dataclasses import replace

from ... import builtins as B
from ... import types as T
from ...diag import Collector
from ...ir import intrinsics as I
from ...ir import nodes as ir
from . import ast as A
from . import probes
from .trees import walk

UNSAFE = ("system", "signal", "signal_thread", "override", "write_user")


def refuse_unsafe(st, diag: Collector):
    """The unsafe functions, each an error unless the build said --unsafe."""
    if st.unsafe:
        return
    for probe in st.ast.probes:
        for n in walk([probe.predicate, probe.body]):
            if isinstance(n, A.Call) and n.name in UNSAFE:
                diag.error(f"{n.name}() is an unsafe function being used in safe mode", n.span,
                           "build the tracer with `plyc build --unsafe` to allow it")


# --- cat(fmt, ...) and system(fmt, ...): a formatted text the tracer acts on -----

def _formatted(chk, call, kind: str) -> ir.EmitEvent:
    """An event carrying a printf-style format's arguments, checked as printf's."""
    return B.check_formatted(chk, call, kind, call.name)


def check_cat(chk, call):
    return _formatted(chk, call, ir.CAT)


def check_system(chk, call):
    return _formatted(chk, call, ir.SYSTEM)


# --- unwatch(addr) ----------------------------------------------------------------

def check_unwatch(chk, call):
    """The tracer stops the watchpoints on that address when it reads the
    event (bpftrace's "async": accesses until then still run the probe)."""
    x = chk.expr(call.args[0])
    if not (x.type.is_int or x.type.is_pointer):
        chk.err(f"unwatch() takes an address, got {x.type}", call.args[0].span)
    return chk.event(call, ir.UNWATCH, [x], arg_types=[T.U64])


# --- signal(sig) ----------------------------------------------------------------

def signal_number(name: str):
    """A signal's number by bpftrace's spellings ("KILL", "SIGKILL"), or None."""
    name = name if name.startswith("SIG") else "SIG" + name
    try:
        return int(_signal.Signals[name])
    except KeyError:
        return None


def check_signal(chk, call):
    """signal(sig), signal_thread(sig): the task's process, or its thread
    alone (bpf_send_signal_thread)."""
    if chk.probe.provider.runs_once:
        chk.err(f'{call.name} can not be used with "{chk.probe.provider.name}" probes', call.span,
                "BEGIN and END run in the tracer itself")
    arg = call.args[0]
    lit = chk.literal_string(arg)
    if lit is not None:
        num = signal_number(lit.decode("utf-8", "replace"))
        if num is None:
            chk.err(f"{lit.decode('utf-8', 'replace')} is not a valid signal", call.span)
        x = ir.IntConst(num, type=T.U32, span=arg.span)
    else:
        x = chk.expr(arg)
        if not x.type.is_int:
            chk.err(f"{call.name}() takes a signal name or number, got {x.type}", arg.span)
        if isinstance(x, ir.IntConst) and not 1 <= x.value <= 64:
            chk.err(f"{x.value} is not a valid signal, allowed range: [1,64]", call.span)
    return ir.Call(I.SIGNAL_THREAD if call.name == "signal_thread" else I.SIGNAL, [x], type=T.VOID, span=call.span)


# --- override(rc) ----------------------------------------------------------------

def check_override(chk, call):
    allowed = probes.of(chk.probe.provider).override
    if not allowed or chk.probe.target.glob:
        chk.err("override can only be used with kprobes." if not allowed
                else "override() can't be used in a kprobe wildcard", call.span)
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"override() takes an integer return value, got {x.type}", call.args[0].span)
    # bpf_override_return changes the kprobe's registers: no fentry twin.
    chk.probe.uses_regs = True
    return ir.Call(I.OVERRIDE, [x], type=T.VOID, span=call.span)


# --- write_user(dst, src, n) ------------------------------------------------------

def check_write_user(chk, call):
    """write_user(dst, src, n) (0.27's stdlib): n bytes of a string or
    array the program holds to the user address dst, in the probed task
    (bpf_probe_write_user); true when written. A constant n is checked
    against the source's size here, one known at run time there (0 or
    past it: nothing written, false)."""
    if chk.probe.provider.runs_once:
        chk.err(f'write_user can not be used with "{chk.probe.provider.name}" probes', call.span,
                "BEGIN and END run in the tracer itself, not in a traced task")
    dst = chk.expr(call.args[0])
    if not dst.type.is_int:
        chk.err(f"write_user()'s destination is a user-space address (an integer or pointer), "
                f"got {dst.type}", call.args[0].span)
    src = chk.array_operand(call.args[1])
    if src.type.kind not in ("str", "buf") or src.type.sized:
        chk.err(f"write_user() writes a string or array the program holds, got {src.type}", call.args[1].span,
                "bpf_probe_write_user copies from the BPF program's own memory: "
                "read a pointer's bytes first (str(p, n), buf(p, n) into a variable)")
    n = chk.expr(call.args[2])
    if not n.type.is_int or n.type.is_pointer:
        chk.err(f"write_user()'s length must be an integer, got {n.type}", call.args[2].span)
    elif isinstance(n, ir.IntConst) and not 1 <= n.value <= src.type.size:
        chk.err(f"write_user()'s length {n.value} is not within its source's {src.type.size} bytes "
                f"(1 to {src.type.size})", call.args[2].span)
    return ir.Call(I.WRITE_USER, [dst, src, n], type=replace(T.U64, denotes="bool"), span=call.span)


# --- buf(p[, n]) ---------------------------------------------------------------------

def check_buf(chk, call):
    """buf(p, n) reads n bytes (at most the string size, bpftrace's
    BPFTRACE_STRLEN); buf(array) all of a kernel array."""
    x = chk.array_operand(call.args[0])
    array = x.type.kind in ("str", "buf") and not x.type.sized
    if not (x.type.is_int or array):
        chk.err(f"buf() reads from a pointer or an array, got {x.type}", call.args[0].span)
    args = [x]
    if len(call.args) == 1:
        if not array:
            chk.err("buf() of a pointer needs a length: buf(p, n)", call.span)
        capacity = x.type.size
    else:
        n = chk.expr(call.args[1])
        if not n.type.is_int:
            chk.err(f"buf()'s length must be an integer, got {n.type}", call.args[1].span)
        capacity = chk.st.max_strlen
        if isinstance(n, ir.IntConst):
            if n.value < 0:
                chk.err("buf()'s length can't be negative", call.args[1].span)
            capacity = min(n.value, chk.st.max_strlen)
        args.append(n)
    if array and x.type.kind == "buf":
        # a kernel byte array's own length; a string reads as bpftrace's
        # 64-byte strings do, zeros past its end
        capacity = min(capacity, x.type.size)
    return ir.Call(I.BUF, args, type=T.SizedBuf(max(capacity, 1)), span=call.span)


# --- path(p) ------------------------------------------------------------------------

PATH_SIZE = 256


PATH_MAX = 4096


def path_size(chk, call) -> int:
    """path(p, size) (current bpftrace): the string's size, a constant."""
    if len(call.args) < 2:
        return PATH_SIZE
    n = chk.expr(call.args[1])
    if not isinstance(n, ir.IntConst) or not 0 < n.value <= PATH_MAX:
        chk.err(f"path()'s size must be a constant from 1 to {PATH_MAX}", call.args[1].span)
    return n.value


def check_path(chk, call):
    probe = chk.probe
    iterator = probe.provider.var("ctx") is not None     # its context is an object's
    if iterator and isinstance(call.args[0], A.Field):
        x = chk.field_base(call.args[0])     # the struct path as a place, not a record of it
    else:
        x = chk.expr(call.args[0])
    size = path_size(chk, call)
    if iterator:
        return check_iter_path(chk, call, x, size)
    arg = x.operand if isinstance(x, ir.Cast) else x
    if not (isinstance(arg, ir.Variable) and arg.var.name.startswith("arg") and arg.var.name[3:].isdigit()
            and x.type.is_int):
        chk.err("path() takes a probe argument that is a struct path * (argN, or a cast of one)",
                call.args[0].span, "bpf_d_path needs the kernel's own pointer, as the function received it")
    if probe.provider.fentry is None or probe.target.glob:
        chk.err("path() can only be used in an exact-name kprobe or kretprobe, which plyc runs "
                "as fentry/fexit (bpf_d_path is for those programs alone)", call.span)
    plan = probe.provider.fentry(probe.target, chk.st.ktypes, chk.st.arch)
    if plan is None or plan["wrapped"]:
        chk.err(f"path() needs {probe.target.target} to run as fentry/fexit, and the build "
                "kernel's BTF has no such function (a syscall wrapper's arguments are the user's "
                "registers)", call.span)
    probe.needs_fentry = "path()"
    return ir.Call(I.PATH, [x], type=T.Str(size), span=call.span)


def iter_path_chain(x) -> list:
    """The members of `ctx->a->b->...->m` (m a struct path, or a pointer to
    one), each after a pointer; [] for any other expression."""
    fields = []
    while isinstance(x, ir.KMember) and x.obj.type.is_pointer:
        fields.append(x.field)
        x = x.obj
    return fields[::-1] if isinstance(x, ir.Variable) and x.var.name == "ctx" else []


def check_iter_path(chk, call, x, size):
    """path() in an iterator: bpf_d_path is allowed in sleepable iterators
    (Linux 5.12, task_file's and task_vma's files), of a pointer the
    program walks to from its context (the verifier's BTF pointers), so the
    argument is such a walk (codegen/intrinsics.py emit_path), and the
    program becomes sleepable (iter.s/)."""
    if x.type.pointee != "struct path" or not iter_path_chain(x):
        chk.err("path() in an iter probe takes a struct path reached from ctx by members "
                "(ctx->file->f_path)", call.args[0].span,
                "bpf_d_path needs the kernel's own pointer, which the program walks to from ctx")
    chk.probe.sleepable = True
    return ir.Call(I.PATH, [x], type=T.Str(size), span=call.span)


FUNCTIONS = {f.name: f for f in (
    B.Func("cat", (1, B.MANY), check_cat, None, "print a file's contents"),
    B.Func("system", (1, B.MANY), check_system, None, "run a command through /bin/sh (--unsafe)"),
    B.Func("unwatch", (1, 1), check_unwatch, None, "stop the watchpoints on an address"),
    B.Func("signal", (1, 1), check_signal, I.SIGNAL, "send a signal to the current task (--unsafe)"),
    B.Func("signal_thread", (1, 1), check_signal, I.SIGNAL_THREAD,
           "send a signal to the current thread alone (--unsafe)"),
    B.Func("override", (1, 1), check_override, I.OVERRIDE,
           "return early from the probed function with a value (--unsafe)"),
    B.Func("write_user", (3, 3), check_write_user, I.WRITE_USER,
           "write a string's or array's first n bytes to a user address (--unsafe)"),
    B.Func("buf", (1, 2), check_buf, I.BUF, "bytes from a pointer or array, printed with %r"),
    B.Func("path", (1, 2), check_path, I.PATH, "a struct path's full path (fentry, iter), in size bytes"),
)}
