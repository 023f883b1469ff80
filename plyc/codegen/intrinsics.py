"""The C of every intrinsic (plyc/ir/intrinsics.py): EMIT maps each to
its emitter, called by the BPF code generator (cgen.FuncGen, `g`) with the
typed ir.Call; it returns a C expression or the name of a char array it
filled. The C helpers they call live in runtime-c/bpf/plyc.bpf.h.
An emitter makes its char array (g.local_bytes) before or after reading
its arguments as its record's `temp` says, and reads them as its `args`
say: plyc/ir/opt/temps.py placed the array by those."""
from __future__ import annotations

from .. import types as T
from ..ir import intrinsics as I
from ..ir import nodes as ir
from . import loops


def emit_str(g, call):
    arg, typ = call.args[0], call.type
    if isinstance(arg, ir.Param) and arg.kind in (ir.ARG_STR, ir.OPT_STR):
        dst = g.local_bytes(typ.size)      # zeroed: the copy writes the text's bytes only
        src = f"arg_str[{arg.index - 1}]" if arg.kind == ir.ARG_STR else f"opt_str[{arg.index}]"
        # past the text's end (str($1 + 100) of a short word): its last byte, a NUL
        skip = f"(sizeof(plyc_params.{src}) > {arg.offset} ? {arg.offset} : sizeof(plyc_params.{src}) - 1)"
        at, left = (f"plyc_params.{src} + {skip}", f"sizeof(plyc_params.{src}) - {skip}") if arg.offset else \
            (f"plyc_params.{src}", f"sizeof(plyc_params.{src})")
        g.line(f"plyc_copy_param_str({dst}, sizeof({dst}), {at}, {left});")
        return dst
    at = arg.type
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


def emit_mem(g, call):
    dst = g.local_bytes(call.type.size)
    fn = "plyc_read_user" if call.args[0].type.user else "plyc_read_any"
    g.line(f"{fn}({dst}, sizeof({dst}), {g.pointer(call.args[0])});")
    return dst


def emit_dyn(g, call):
    dst = g.local_bytes(call.type.size)
    g.read_string_into(dst, call.type.size, call.args[0])
    return dst


def emit_same(g, call):
    """An intrinsic that only changes its argument's type (how it prints)."""
    return g.scalar(call.args[0])


def emit_strcmp(g, call):
    (a, asize), (b, bsize) = (g.string_sized(x) for x in call.args)
    return g.cast("__s64", f"plyc_strcmp({a}, {asize}, {b}, {bsize})")


def emit_bswap(g, call):
    size = call.type.size
    value = g.scalar(call.args[0])
    if size == 1:
        return f"((__u8)({value}))"
    return f"((__u{size * 8})__builtin_bswap{size * 8}((__u{size * 8})({value})))"


def emit_strncmp(g, call):
    a, b = (g.bytes(x) for x in call.args[:2])
    n = call.args[2].value
    sa, sb = min(n, call.args[0].type.size), min(n, call.args[1].type.size)
    return f"(__u64)(plyc_strcmp({a}, {sa}, {b}, {sb}) != 0)"


def emit_join_read(g, call):
    arg = call.args[0]
    dst = g.local_bytes(I.JOIN_ARGS * I.JOIN_SIZE)
    base, more = g.tmp("argv"), g.tmp("more")
    read = "plyc_read_user" if arg.type.user else "plyc_read_any"
    read_str = "bpf_probe_read_user_str" if arg.type.user else "plyc_read_str"
    g.line(f"const char *const *{base} = (const char *const *)(unsigned long)({g.scalar(arg)});")
    g.line(f"int {more} = 1;")
    for i in range(I.JOIN_ARGS):
        p = g.tmp("p")
        g.line(f"if ({more}) {{")
        g.line(f"\tconst char *{p} = 0;")
        g.line(f"\t{read}(&{p}, sizeof({p}), {base} + {i});")
        g.line(f"\tif ({p})")
        g.line(f"\t\t{read_str}({dst} + {i * I.JOIN_SIZE}, {I.JOIN_SIZE}, {p});")
        g.line("\telse")
        g.line(f"\t\t{more} = 0;")
        g.line("}")
    return dst


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


def emit_tp_name(g, call):
    dst = g.local_bytes(I.TP_NAME_SIZE)
    g.line(f"plyc_tp_name(ctx, {dst});")
    return dst


def emit_division(g, call: ir.Call) -> str:
    a, b = (g.scalar(x) for x in call.args)
    ct = call.type.scalar_ctype()
    t = g.tmp("div")
    if call.type.signed:
        op = f"plyc_sdiv({a}, {t})" if call.func is I.DIV else f"plyc_smod({a}, {t})"
    else:
        op = f"{g.operand(ct, a)} {call.func.name} {t}"
    # A statement expression: the divisor read once, where the operation is.
    return f"({ct})({{ {ct} {t} = {g.operand(ct, b)}; {t} ? {op} : 1; }})"


def emit_sarg(g, call):
    n = call.args[0].value
    user = int(g.probe.provider.user)
    return g.cast("__u64", f"plyc_stack_word((struct pt_regs *)ctx, {n}, {user})")


def emit_offsetof(g, call):
    ctype, path = call.args[0].value.decode(), call.args[1].value.decode()
    return f"((__u64)bpf_core_field_offset({ctype}, {path}))"


def emit_macaddr(g, call):
    arg = call.args[0]
    name = g.tmp("mac")
    g.line(f"__u64 {name} = 0;")
    if arg.type.is_int:
        read = "plyc_read_user" if arg.type.user else "plyc_read_any"
        g.line(f"{read}(&{name}, 6, {g.pointer(arg)});")
    else:
        g.line(f"__builtin_memcpy(&{name}, {g.bytes(arg)}, 6);")
    return g.cast("__u64", name)


def emit_len(g, call):
    m = g.res.map(call.args[0].value.decode())
    return f"((__s64)bpf_for_each_map_elem(&{m.cname}, plyc_count_entry, (void *)0, 0))"


def emit_member(g, call: ir.Call) -> str:
    """An integer or pointer member: its bytes read into a variable of its size."""
    typ = call.type
    name = g.tmp("r")
    fn = "plyc_read_user" if call.args[0].type.user else "plyc_read_any"
    g.line(f"{typ.ctype()} {name} = 0;")
    g.line(f"{fn}(&{name}, sizeof({name}), {g.pointer(call.args[0])});")
    return g.cast(typ.scalar_ctype(), name)


def _stack_map(limit: int) -> str:
    return "&plyc_stacks" if limit in (0, I.STACK_DEPTH) else f"&plyc_stacks_{limit}"


def emit_stack(g, call):
    limit = call.args[0].value
    if call.type.user:
        return f"plyc_ustackid(ctx, {_stack_map(limit)})"
    return f"plyc_stackid_in(ctx, {_stack_map(limit)}, 0)"


def emit_usym(g, call):
    addr, pid = g.tmp("addr"), g.tmp("pid")
    g.line(f"__u64 {addr} = {g.scalar(call.args[0])};")
    # the process whose /proc/PID/maps the tracer reads: in its PID namespace
    g.line(f"__u64 {pid} = plyc_ns_pid_tgid() >> 32;")
    dst = g.local_bytes(T.USYM_SIZE)
    g.line(f"__builtin_memcpy({dst}, &{addr}, 8);")
    g.line(f"__builtin_memcpy({dst} + 8, &{pid}, 8);")
    return dst


def emit_signal(g, call):
    g.line(f"bpf_send_signal((__u32)({g.scalar(call.args[0])}));")
    return "0"


def emit_signal_thread(g, call):
    g.line(f"bpf_send_signal_thread((__u32)({g.scalar(call.args[0])}));")
    return "0"


def emit_memcmp(g, call):
    a, b = (g.bytes(x) for x in call.args[:2])
    size = min(call.args[0].type.size, call.args[1].type.size)
    return f"plyc_memcmp({a}, {b}, {size}, (__u64)({g.scalar(call.args[2])}))"


def emit_override(g, call):
    g.line(f"bpf_override_return((struct pt_regs *)ctx, (__u64)({g.scalar(call.args[0])}));")
    return "0"


def emit_write_user(g, call):
    """bpf_probe_write_user of the source's first n bytes: a length of
    0 or past the source writes nothing and is false (the helper takes
    1 to the source's size, which the verifier must see bounded)."""
    dst, src, n = call.args
    size = src.type.size
    to, data = g.scalar(dst), g.bytes(src)      # their lines before the branch
    ok, less = g.tmp("ok"), g.tmp("less")
    # n - 1 against the size, one unsigned compare (0 wraps past it), the
    # helper given less + 1: the verifier bounds a length by < and +
    # (before 6.x it learns nothing from n != 0); the barrier keeps clang
    # from comparing a copy.
    g.line(f"__u64 {less} = (__u64)({g.scalar(n)}) - 1;")
    g.line(f"int {ok} = 0;")
    g.line(f"barrier_var({less});")
    g.line(f"if ({less} < {size})")
    g.line(f"\t{ok} = bpf_probe_write_user((void *)(unsigned long)({to}), {data}, (__u32){less} + 1) == 0;")
    g.line(f"(void){ok};        /* a call as a statement drops its value */")
    return ok


def emit_buf(g, call):
    src = call.args[0]
    cap = call.type.size - T.BUF_LEN_SIZE
    dst = g.local_bytes(call.type.size)
    n = g.tmp("n")
    if len(call.args) > 1 and isinstance(call.args[1], ir.IntConst):
        g.line(f"__u32 {n} = {min(call.args[1].value, cap)};")
    elif len(call.args) > 1:
        # A length past the buffer (or negative) is the whole buffer, as in bpftrace.
        want = g.tmp("want")
        g.line(f"__u64 {want} = (__u64)({g.scalar(call.args[1])});")
        g.line(f"__u32 {n} = {want} < {cap} ? (__u32){want} : {cap};")
    else:
        g.line(f"__u32 {n} = {cap};")
    g.line(f"__builtin_memcpy({dst}, &{n}, {T.BUF_LEN_SIZE});")
    if src.type.is_int:
        read = "plyc_read_user" if src.type.user else "plyc_read_any"
        # Only the bytes asked for (the rest stays zero): a verifier-bounded length.
        g.line(f"if ({n} > {cap})")
        g.line(f"\t{n} = {cap};")
        g.line(f"{read}({dst} + {T.BUF_LEN_SIZE}, {n}, (const void *)(unsigned long)({g.scalar(src)}));")
    else:
        g.line(f"__builtin_memcpy({dst} + {T.BUF_LEN_SIZE}, {g.bytes(src)}, {min(cap, src.type.size)});")
    return dst


def emit_path(g, call):
    dst = g.local_bytes(call.type.size)
    if g.probe.sleepable:
        emit_iter_path(g, call.args[0], dst)
        return dst
    if g.fentry and not g.fentry["wrapped"]:
        # Only the fentry/fexit side calls it: the tracer refuses the kprobe side.
        g.line("if (fentry)")
        g.line(f"\tbpf_d_path((struct path *)(unsigned long)({g.scalar(call.args[0])}), {dst}, "
               f"sizeof({dst}));")
    return dst


def emit_iter_path(g, x, dst):
    """An iterator's `ctx->file->f_path`: walked by direct loads, which
    give the verifier the kernel's pointers bpf_d_path takes (a CO-RE
    copy gives a number), each tested for NULL (a context's object may be
    absent)."""
    steps = []
    while isinstance(x, ir.KMember):
        steps.append(x)
        x = x.obj
    ptr = g.tmp("p")
    g.line(f"void *{ptr} = ctx;")
    for st in reversed(steps[1:]):
        nxt = g.tmp("p")
        g.line(f"void *{nxt} = {ptr} ? (({st.obj.type.pointee} *){ptr})->{st.field} : (void *)0;")
        ptr = nxt
    last = steps[0]
    arg = f"&(({last.obj.type.pointee} *){ptr})->{last.field}" if not last.type.is_pointer \
        else f"(({last.obj.type.pointee} *){ptr})->{last.field}"
    if last.type.is_pointer:
        nxt = g.tmp("p")
        g.line(f"void *{nxt} = {ptr} ? {arg} : (void *)0;")
        ptr, arg = nxt, f"(struct path *){nxt}"
    g.line(f"if ({ptr})")
    g.line(f"\tbpf_d_path({arg}, {dst}, sizeof({dst}));")


def emit_strlen(g, call):
    src, size = g.string_sized(call.args[0])
    return f"plyc_strnlen({src}, {size})"


def emit_strcontains(g, call):
    (h, hsize), (n, nsize) = (g.string_sized(x) for x in call.args)
    return f"((__u64)plyc_strcontains({h}, {hsize}, {n}, {nsize}))"


def emit_strstr(g, call):
    (h, hsize), (n, nsize) = (g.string_sized(x) for x in call.args)
    return g.cast("__s64", f"plyc_strstr({h}, {hsize}, {n}, {nsize})")


def emit_str_concat(g, call):
    (a, asize), (b, bsize) = (g.string_sized(x) for x in call.args)
    dst = g.local_bytes(call.type.size)
    g.line(f"plyc_str_concat({dst}, sizeof({dst}), {a}, {asize}, {b}, {bsize});")
    return dst


def emit_str_cut(g, call):
    src = g.bytes(call.args[0])
    n = g.scalar(call.args[1])
    dst = g.local_bytes(call.type.size)
    g.line(f"plyc_str_cut({dst}, sizeof({dst}), {src}, (__u64)({n}));")
    return dst


def emit_byte_at(g, call):
    # the index compared unsigned: a negative one is past the end too
    arr, idx, name = g.bytes(call.args[0]), g.scalar(call.args[1]), g.tmp("i")
    size = call.args[0].type.size
    ct = "__s8" if call.type.signed else "__u8"
    g.line(f"__u64 {name} = (__u64)({idx});")
    return f"((__s64)({name} < {size} ? ({ct}){arr}[{name}] : 0))"


def emit_buf_equal(g, call):
    a, b = call.args
    return (f"((__u64)plyc_buf_equal({g.bytes(a)}, {a.type.size}, {g.bytes(b)}, {b.type.size}, "
            f"{T.BUF_LEN_SIZE}))")


def emit_socket_cookie(g, call):
    # the argument as the program received it: the verifier's struct sock pointer
    return f"((__u64)bpf_get_socket_cookie((void *)(unsigned long)({g.scalar(call.args[0])})))"


def emit_clock(g, call):
    clock = call.args[0].value.decode()
    now = f"{I.CLOCKS[clock][0]}()"
    return f"({now} + plyc_params.tai_offset)" if clock == "sw_tai" else now


def emit_addr(g, call):
    """&$x: the local's place on the BPF stack (taking it keeps the local
    there, so a read through the pointer sees its value); a narrow integer
    kept in a wider local is at the local's low end, last on big-endian."""
    local = call.args[0]
    if local.type.is_bytes:
        place = g.local_ref[local.name]
    else:
        place = f"PLYC_LOW_BYTES(&{loops.local_c(local.name)}, {local.type.size})"
    return f"((__u64)(unsigned long){place})"


def emit_usermode(g, call):
    # x86_64's privilege level: the low bits of cs are 3 in user mode. A
    # perf event's context starts with the same pt_regs.
    return "((__u64)((((struct pt_regs *)ctx)->cs & 3) == 3))"


def emit_comm_of(g, call):
    # bpftrace 0.27's: the kfunc's task (a reference, released), else N/A.
    # The kfunc is no weak symbol: on a kernel without it (before 6.2)
    # libbpf stops the load, and the tracer says why (load/loader.c).
    pid = g.scalar(call.args[0])        # first: its record says AFTER (temps.py)
    dst = g.local_bytes(call.type.size)
    g.line("{")
    g.line(f"\tstruct task_struct *task = bpf_task_from_pid((__s32)({pid}));")
    g.line("\tif (task) {")
    g.line(f"\t\tif (bpf_core_read_str({dst}, sizeof({dst}), &task->comm) < 0)")
    g.line(f"\t\t\t{dst}[0] = 0;")
    g.line("\t\tbpf_task_release(task);")
    g.line("\t} else {")
    g.line(f'\t\tplyc_copy_str({dst}, sizeof({dst}), "N/A", 4);')
    g.line("\t}")
    g.line("}")
    return dst


def emit_percpu_kaddr(g, call):
    # the extern ksym's name: a kernel variable's (kernel_types.py declares it)
    name = call.args[0].value.decode()
    if len(call.args) == 1:
        return f"((__u64)bpf_this_cpu_ptr(&{name}))"
    # bpf_per_cpu_ptr() may give NULL (a CPU past the last): checked, as the
    # verifier allows no arithmetic (a member's offset) on it before; the
    # barrier keeps the compiler from folding the check away
    cpu, p, addr = g.scalar(call.args[1]), g.tmp("pcpu"), g.tmp("pcpu")
    g.line(f"__u64 {addr} = 0;")
    g.line(f"const void *{p} = bpf_per_cpu_ptr(&{name}, (__u32)({cpu}));")
    g.line(f"if ({p}) {{")
    g.line(f"\tbarrier_var({p});")
    g.line(f"\t{addr} = (__u64){p};")
    g.line("}")
    return addr


def emit_c_call(g, call):
    """A call of a function of an imported C file (usercode.py), declared
    in the program with its own types (render.py): integers converted to
    its parameters' types as C converts them (the front end cast them
    first), pointers passed as the addresses they are. Its value is kept
    in a local at once, so that a call made for its effect is made where
    the statement is."""
    name = call.args[0].value.decode()
    args = [f"(void *)(unsigned long)({g.scalar(a)})" if a.type.is_pointer else g.scalar(a)
            for a in call.args[1:]]
    text = f"{name}({', '.join(args)})"
    if call.type.kind == "void":
        g.line(f"{text};")
        return g.const(0)
    ctype = call.type.scalar_ctype()
    v = g.tmp("cf")
    g.line(f"{ctype} {v} = ({ctype})({'(unsigned long)' if call.type.is_pointer else ''}{text});")
    g.typed[v] = ctype
    return v


EMIT = {
    I.STR: emit_str,
    I.MEM: emit_mem,
    I.DYN: emit_dyn,
    I.UPTR: emit_same,
    I.KSYM: emit_same,
    I.STRCMP: emit_strcmp,
    I.BSWAP: emit_bswap,
    I.KPTR: emit_same,
    I.STRNCMP: emit_strncmp,
    I.JOIN_READ: emit_join_read,
    I.NTOP: emit_ntop,
    I.TP_NAME: emit_tp_name,
    I.DIV: emit_division,
    I.MOD: emit_division,
    I.SARG: emit_sarg,
    I.OFFSETOF: emit_offsetof,
    I.MACADDR: emit_macaddr,
    I.STRFTIME: emit_same,
    I.LEN: emit_len,
    I.MEMBER: emit_member,
    I.USTACK: emit_stack,
    I.KSTACK: emit_stack,
    I.USYM: emit_usym,
    I.SIGNAL: emit_signal,
    I.SIGNAL_THREAD: emit_signal_thread,
    I.MEMCMP: emit_memcmp,
    I.OVERRIDE: emit_override,
    I.WRITE_USER: emit_write_user,
    I.BUF: emit_buf,
    I.PATH: emit_path,
    I.STRLEN: emit_strlen,
    I.STRCONTAINS: emit_strcontains,
    I.STRSTR: emit_strstr,
    I.STR_CONCAT: emit_str_concat,
    I.STR_CUT: emit_str_cut,
    I.CLOCK: emit_clock,
    I.USERMODE: emit_usermode,
    I.ADDR: emit_addr,
    I.STRERROR: emit_same,
    I.SIGNAL_NAME: emit_same,
    I.SYSCALL_NAME: emit_same,
    I.COMM_OF: emit_comm_of,
    I.CGROUP_PATH: emit_same,
    I.PERCPU_KADDR: emit_percpu_kaddr,
    I.BYTE_AT: emit_byte_at,
    I.BUF_EQUAL: emit_buf_equal,
    I.SOCKET_COOKIE: emit_socket_cookie,
    I.C_CALL: emit_c_call,
}


def emit(g, call: ir.Call):
    return EMIT[call.func](g, call)
