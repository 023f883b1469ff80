"""bpftrace's current (0.2x) standard library, where it is one value: strlen(),
strcontains(), nsecs(CLOCK), ppid, pcomm, leader_tid, leader_comm, usermode, strerror(), signal_name(). Each
is a typing rule called by
lower.py's Typer (`chk`), giving IR: a core intrinsic (plyc/ir/intrinsics.py)
or kernel members read through BTF. bpftrace 0.27 writes most of them as
macros of its stdlib (src/stdlib/*.bt); the values are the same, but for the
texts of strerror() and signal_name(): 0.27 copies them from tables of its own
in BPF, plyc's tracer prints the same words from its own (runtime-c/values/
errnos.c, signals.c)."""
from __future__ import annotations

import ipaddress
from dataclasses import replace

from ... import builtins as B
from ... import printf
from ... import types as T
from ...ir import intrinsics as I
from ...ir import nodes as ir
from . import ast as A
from . import builtins as BT
from . import probes
from .trees import const_value


def _string(chk, e, what: str):
    """A string argument; a pointer is read as a string (str(p)), as bpftrace's
    stdlib takes an int8 * too."""
    x = chk.expr(e)
    if x.type.is_int and x.type.is_pointer:
        return ir.Call(I.STR, [x], type=chk.read_str(chk.st.strsize), span=e.span)
    if x.type.kind != "str":
        chk.err(f"{what} needs a string, got {x.type}", e.span,
                "read a string from an address with str(p)" if x.type.is_int else None)
    return x


def check_strlen(chk, call: A.Call):
    """strlen(s): the bytes of s before its NUL (bpftrace: uint64)."""
    s = _string(chk, call.args[0], "strlen()")
    return ir.Call(I.STRLEN, [s], type=T.U64, span=call.span)


def check_strcontains(chk, call: A.Call):
    """strcontains(haystack, needle): true if needle is in haystack, a
    bool as 0.27's (printed true/false)."""
    args = [_string(chk, a, "strcontains()") for a in call.args]
    return ir.Call(I.STRCONTAINS, args, type=replace(T.U64, denotes="bool"), span=call.span)


def check_strstr(chk, call: A.Call):
    """strstr(haystack, needle): the needle's first index in the haystack,
    negative when it is not there (0.27's numbers: runtime-c's plyc_strstr)."""
    args = [_string(chk, a, "strstr()") for a in call.args]
    return ir.Call(I.STRSTR, args, type=T.S64, span=call.span)


# str_concat()'s string: 0.27's is 1024 bytes; both strings whole fit in
# fewer (their sizes less one NUL), which is what plyc keeps.
CONCAT_MAX = 1024


def check_str_concat(chk, call: A.Call):
    """str_concat(a, b): a then b, a new string."""
    a, b = (_string(chk, x, "str_concat()") for x in call.args)
    size = min(CONCAT_MAX, _text_size(a) + _text_size(b) + 1)
    return ir.Call(I.STR_CONCAT, [a, b], type=T.Str(size), span=call.span)


def _text_size(x) -> int:
    """The most bytes a string holds before its NUL (a literal: its text's)."""
    if isinstance(x, ir.BytesConst):
        return len(x.value.split(b"\0")[0])
    return max(x.type.size - 1, 0)


def check_ns_id(chk, call: A.Call):
    """pid([curr_ns|init]), tid([curr_ns|init]): as 0.27, `pid`, `tid` and
    curr_ns are the ids in the tracer's PID namespace, init the initial
    namespace's (bpf_get_current_pid_tgid; docs/bpftrace.md)."""
    if call.args:
        arg = call.args[0]
        if not (isinstance(arg, A.Ident) and arg.name in ("curr_ns", "init")):
            chk.err(f"{call.name}() takes curr_ns or init", arg.span,
                    "the PID namespace its ids are seen from")
        elif arg.name == "init":
            var = BT.INIT_NS[call.name]
            return ir.Variable(var, type=var.type, span=call.span)
    return _as_variable(chk, call)


def _as_variable(chk, call: A.Call):
    """comm(), nsecs(), usermode(), ppid(): 0.27's macros of the variables."""
    return chk.expr(A.Ident(call.name, span=call.span))


def check_comm(chk, call: A.Call):
    """comm, comm(): the current task's; comm(pid): that pid's task's, read
    as 0.27 does through the bpf_task_from_pid kfunc (Linux 6.2), N/A when
    no task has it."""
    if not call.args:
        return _as_variable(chk, call)
    pid = chk.expr(call.args[0])
    if not pid.type.is_int or pid.type.is_pointer:
        chk.err("Only integer supported for comm()'s pid", call.args[0].span)
    kind = chk.probe.provider.name
    if chk.probe.provider.runs_once:       # BEGIN, END: run as a raw tracepoint, which may not call it
        chk.err(f"Syntax comm(PID) is not supported in this probe type yet. Type: {kind}", call.span,
                "bpftrace 0.27 refuses it there too (the kernel allows the kfunc in other probes)")
    task = BT.curtask_type(chk, call.span)
    chk.kernel_member(task, "comm", True, call.span)     # the C reads task->comm (CO-RE)
    return ir.Call(I.COMM_OF, [pid], type=T.Str(16), span=call.span)


def _task_macro(chk, call: A.Call):
    """ppid, pcomm, leader_tid, leader_comm ([task]): 0.27's macros of a task's
    members (the current task's without an argument)."""
    if not call.args:
        return _as_variable(chk, call)
    task = chk.expr(call.args[0])
    return _task_members(chk, call.name, task, call.span)


def check_nsecs(chk, call: A.Call):
    """nsecs(monotonic|boot|tai|sw_tai): that clock's nanoseconds (nsecs
    alone is monotonic); sw_tai is TAI from the boot clock and an offset the
    tracer measures at start, as bpftrace's, for kernels before 6.1."""
    if not call.args:
        return _as_variable(chk, call)
    arg = call.args[0]
    name = arg.name if isinstance(arg, A.Ident) else None
    if name not in I.CLOCKS:
        chk.err("nsecs() takes a clock: monotonic, boot, tai or sw_tai", arg.span)
    clock = ir.BytesConst(name.encode(), type=T.Str(len(name) + 1), span=arg.span)
    return ir.Call(I.CLOCK, [clock], type=T.U64, span=call.span)


def _text_of(func, fmt: str):
    """strerror(e), signal_name(sig): the integer, which the tracer prints
    as 0.27's text for it (runtime-c/values/btvalues.c)."""
    def check(chk, call: A.Call):
        x = chk.expr(call.args[0])
        if not x.type.is_int or x.type.is_pointer:
            chk.err(f"{call.name}() needs an integer, got {x.type}", call.args[0].span)
        if x.type.size != 4:        # bpftrace's (int32) of the argument
            x = ir.Cast(x, type=T.Int(4, True), span=x.span)
        return ir.Call(func, [x], type=T.Int(4, True, fmt), span=call.span)
    return check


def _getopt_default(chk, e) -> tuple:
    """(kind, default as text) of getopt()'s second argument: a bool, an
    integer or a string literal (bpftrace's rule). An integer option is
    unsigned unless its default is negative, as 0.27 types the literal:
    --n=0xffffffffffffffff is 18446744073709551615 there."""
    if e is None or isinstance(e, A.Ident) and e.name in ("true", "false"):
        return "bool", "false" if e is None else e.name
    if isinstance(e, A.Str):
        return "str", e.value.split(b"\0")[0].decode("utf-8", "replace")
    value = const_value(e)
    if value is None:
        chk.err("Second argument to 'getopt' must be a string literal, integer literal, or a boolean literal.",
                e.span)
    return "int" if value < 0 else "uint", str(value)


def check_getopt(chk, call: A.Call):
    """getopt("name"[, default[, "what"]]): the tracer's option --name (a
    flag, --name=NUMBER or --name=TEXT by the default's type), set in its
    parameters before the load (runtime-c/load/options.c)."""
    name = chk.literal_string(call.args[0])
    if name is None:
        chk.err("First argument to 'getopt' must be a string literal.", call.args[0].span)
    name = name.decode("utf-8", "replace")
    if not name or not all(c.isalnum() or c in "_-" for c in name) or name.startswith("-"):
        chk.err(f"getopt()'s name must be letters, digits, '_' and '-', not {name!r}", call.args[0].span)
    kind, dflt = _getopt_default(chk, call.args[1] if len(call.args) > 1 else None)
    desc = b""
    if len(call.args) > 2:
        desc = chk.literal_string(call.args[2])
        if desc is None:
            chk.err("Function 'getopt' requires the third parameter to be a string", call.args[2].span)
    opt = (name, kind, dflt, desc.decode("utf-8", "replace"))
    known = chk.st.options.setdefault(name, (opt, len(chk.st.options)))
    if known[0][1:3] != opt[1:3]:
        chk.err(f"the option '{name}' needs to have the same default value in all places it is used. "
                f"Previous default value: {known[0][2]}", call.span)
    if known[0][3] != opt[3]:
        chk.err(f"the option '{name}' must have the same description in all places it's used", call.span,
                "wrap it in a macro")
    index = known[1]
    if kind == "str":
        param = ir.Param(ir.OPT_STR, index, type=chk.read_str(chk.st.strsize), span=call.span)
        return ir.Call(I.STR, [param], type=chk.read_str(chk.st.strsize), span=call.span)
    typ = {"bool": T.Int(1, False, "bool"), "int": T.S64, "uint": T.U64}[kind]
    return ir.Param(ir.OPT_NUM, index, type=typ, span=call.span)


def check_pton(chk, call: A.Call):
    """pton("10.0.0.1"), pton("::1"): the address's 4 or 16 bytes in network
    order, an array made when the script is compiled (bpftrace's rule: a
    string literal)."""
    text = chk.literal_string(call.args[0])
    if text is None:
        chk.err("pton() takes a string literal", call.args[0].span)
    # bpftrace takes an address with a '.' as IPv4 (so not "::ffff:1.2.3.4")
    kind = ipaddress.IPv4Address if b"." in text else ipaddress.IPv6Address
    try:
        addr = kind(text.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        chk.err(f"pton() expects a valid IPv4/IPv6 address, got {text.decode('utf-8', 'replace')}",
                call.args[0].span)
    data = addr.packed
    return ir.BytesConst(data, type=T.Buf(len(data)), span=call.span)


def check_is_err(chk, call: A.Call):
    """is_err(p): whether p is an ERR_PTR (the kernel's IS_ERR(): -4095 to
    -1 as a 64-bit value), a bool, as 0.27's stdlib defines it."""
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"is_err() needs a pointer or an integer, got {x.type}", call.args[0].span)
    word = ir.Cast(ir.Cast(x, type=T.S64, span=call.span), type=T.U64, span=call.span)
    lowest = ir.IntConst((1 << 64) - 4095, type=T.U64, span=call.span)
    return ir.Binary(">=", word, lowest, type=T.Int(1, False, "bool"), span=call.span)


def check_fail(chk, call: A.Call):
    """fail(fmt, ...): 0.27 stops compiling the script where fail() is, its
    message formatted (a check a macro makes of what it is given). plyc
    stops the build the same way; an argument known only at run time (a
    $N) is shown as written in the script."""
    fmt = call.args[0] if call.args else None
    if not isinstance(fmt, A.Str):
        chk.err("fail()'s first argument must be a format string literal", call.span)
        return ir.IntConst(0, type=T.S64, span=call.span)
    try:
        parts = printf.parse(fmt.value.decode("utf-8", "replace"))
    except printf.FormatError as e:
        chk.err(str(e), fmt.span)
        return ir.IntConst(0, type=T.S64, span=call.span)
    B.check_format_count(chk, [p for p in parts if not isinstance(p, str)], call.args[1:], call.span)
    args, text = iter(call.args[1:]), ""
    for part in parts:
        if isinstance(part, str):
            text += part
            continue
        a = next(args, None)
        v = const_value(a) if a is not None else None
        if isinstance(a, A.Str):
            text += a.value.decode("utf-8", "replace")
        elif v is not None:
            text += format(v, part.conv) if part.conv in "xXo" else str(v)
        else:
            text += f"${a.index}" if isinstance(a, A.Positional) else part.text
    chk.err(text, call.span)
    return ir.IntConst(0, type=T.S64, span=call.span)


FUNCTIONS = {
    "strlen": ((1, 1), check_strlen),
    "strstr": ((2, 2), check_strstr),
    "str_concat": ((2, 2), check_str_concat),
    "pid": ((0, 1), check_ns_id),
    "tid": ((0, 1), check_ns_id),
    "has_cpid": ((0, 0), _as_variable),
    "probetype": ((0, 0), _as_variable),
    "strcontains": ((2, 2), check_strcontains),
    "nsecs": ((0, 1), check_nsecs),
    "ppid": ((0, 1), _task_macro),
    "pcomm": ((0, 1), _task_macro),
    "leader_tid": ((0, 1), _task_macro),
    "leader_comm": ((0, 1), _task_macro),
    "usermode": ((0, 0), _as_variable),
    "comm": ((0, 1), check_comm),
    "strerror": ((1, 1), _text_of(I.STRERROR, "errno")),
    "signal_name": ((1, 1), _text_of(I.SIGNAL_NAME, "signal")),
    "syscall_name": ((1, 1), _text_of(I.SYSCALL_NAME, "syscall")),
    "getopt": ((1, 3), check_getopt),
    "pton": ((1, 1), check_pton),
    "fail": ((1, B.MANY), check_fail),
    "is_err": ((1, 1), check_is_err),
}
# 0.27's stdlib has every builtin variable as a macro of no argument too
# (`cpu()`, `elapsed()`): the variable, or its error where plyc has none
FUNCTIONS.update((name, ((0, 0), _as_variable)) for name in (
    "cgroup", "cpid", "cpu", "curtask", "elapsed", "func", "gid", "jiffies", "ncpus", "numaid",
    "probe", "rand", "retval", "uid", "username"))


def call(chk, e: A.Call):
    (lo, hi), check = FUNCTIONS[e.name]
    if not lo <= len(e.args) <= hi:
        chk.err(B.arity_error(e.name, (lo, hi), len(e.args)), e.span)
    return check(chk, e)


# The members each reads, as bpftrace's stdlib: ppid is the parent's pid
# (real_parent, not the tracing `parent`), pcomm its comm; leader_* the
# thread group leader's.
TASK_MACROS = {"ppid": ("real_parent", "pid"), "pcomm": ("real_parent", "comm"),
               "leader_tid": ("group_leader", "pid"), "leader_comm": ("group_leader", "comm")}


def _task_members(chk, name: str, task, span):
    if not task.type.is_pointer:
        chk.err(f"{name}() takes a task (struct task_struct *), got {task.type}", span)
    for member in TASK_MACROS[name]:
        task = ir.KMember(task, member, type=chk.kernel_member(task.type, member, True, span), span=span)
    return task


def usermode(chk, span):
    probe = chk.probe
    if chk.arch != "x86_64":
        chk.err(f"usermode is not supported on {chk.arch}", span, "bpftrace has it on x86_64 only")
    pname = probe.provider.name
    # BEGIN and END run in the tracer, a user process (bpftrace's, from a
    # uprobe on itself: usermode is 1 there too).
    if probe.provider.runs_once:
        return ir.IntConst(1, type=T.Int(1, False), span=span)
    # The probes whose context is the probed code's pt_regs (a perf event's
    # starts with them) read the privilege level there.
    if not probes.of(probe.provider).usermode:
        chk.err(f"usermode reads the registers of the probed code; {pname} probes have none", span,
                f"probes that have them: {', '.join(t.name for t in probes.PROBE_TYPES if t.usermode)}")
    if probe.provider.fentry is not None:
        probe.uses_regs = True      # no fentry twin: it has no pt_regs
    return ir.Call(I.USERMODE, [], type=T.Int(1, False), span=span)


def probetype(chk, span):
    """0.27's probe type name (probes.py's `probetype`: BEGIN and END are its
    "special" probes, kfunc and kretfunc its fentry and fexit)."""
    ptype = probes.of(chk.probe.provider)
    text = (ptype.probetype or ptype.name).encode()
    return ir.BytesConst(text, type=T.literal_str(text), span=span)


def has_cpid(chk, span):
    """has_cpid: whether the tracer runs a command (-c), as bpftrace's
    documentation says (0.27.1 computes `cpid == 0`, the opposite:
    docs/bpftrace.md); a bool."""
    chk.uses_target = True
    chk.st.asks_cpid = True
    cpid = ir.Param(ir.TARGET, type=T.U32, span=span)
    zero = ir.IntConst(0, type=T.U32, span=span)
    return ir.Binary("!=", cpid, zero, type=replace(T.S32, denotes="bool"), span=span)


def variable(chk, name: str, span):
    """ppid, pcomm, leader_tid, leader_comm, usermode, probetype and
    has_cpid as IR, or None for other names."""
    if name == "probetype":
        return probetype(chk, span)
    if name == "has_cpid":
        return has_cpid(chk, span)
    if name in TASK_MACROS:
        task = ir.Variable(BT.CURTASK, type=BT.curtask_type(chk, span), span=span)
        return _task_members(chk, name, task, span)
    if name == "usermode":
        return usermode(chk, span)
    return None


# errorf(fmt, ...) and warnf(fmt, ...): printf's checks, a line on stderr
# after the call's place and the level (plyc/codegen/printers.py).
EVENTS = {f.name: f for f in (
    B.Func("errorf", (1, B.MANY), lambda chk, call: B.check_formatted(chk, call, ir.ERRORF, "errorf"), None,
           "print an error line (the script's place, ERROR:) on stderr"),
    B.Func("warnf", (1, B.MANY), lambda chk, call: B.check_formatted(chk, call, ir.WARNF, "warnf"), None,
           "print a warning line (the script's place, WARNING:) on stderr"),
)}


# The builtins bpftrace 0.27 keeps in its core (its stdlib's macros read them
# so): `__builtin_comm` is `comm`. Its other names (`__builtin_pid`) it does
# not know, and neither does plyc.
BUILTIN_SPELLINGS = frozenset("comm config cpid cpu elapsed func ncpus probe probetype retval usermode".split())


def builtin_name(name: str) -> str:
    """The builtin a `__builtin_NAME` spelling names, else the name itself."""
    short = name[len("__builtin_"):] if name.startswith("__builtin_") else None
    return short if short in BUILTIN_SPELLINGS else name
