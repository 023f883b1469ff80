"""bpftrace's value functions and builtins that read memory, registers or
the device, or that the tracer prints as text: `*p`, kaddr(), uaddr(),
cgroupid(), ncpus, reg(), sargN, offsetof(), has_key(), username,
macaddr(), strftime(). Each is a typing rule called by lower.py's Typer
(`chk`), giving IR. bpftrace resolves kaddr, uaddr, cgroupid and ncpus when
it compiles, on the machine it traces; plyc's tracer resolves them on its
device at start-up (ir.DeviceConst, runtime-c/load/dconst.c). The text of
username, macaddr and strftime values is made by the tracer when it prints
them (runtime-c/values/btvalues.c)."""
from __future__ import annotations

from dataclasses import replace

from ... import arch as ARCH
from ... import builtins as B
from ... import types as T
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...ir import variables as V
from ...providers import Var
from . import ast as A
from . import kvalues, probes, structs


def _literal(chk, call: A.Call, what: str) -> str:
    arg = call.args[0]
    text = chk.literal_string(arg)
    if text is None:
        chk.err(f"{call.name}()'s {what} must be a string literal", arg.span)
    if not text:
        chk.err(f"{call.name}()'s {what} is empty", arg.span)
    return text.decode("utf-8", "replace")


# --- values the tracer finds on the device ----------------------------------------

def check_kaddr(chk, call: A.Call):
    """kaddr("sym"): the kernel symbol's address (/proc/kallsyms on the device)."""
    name = _literal(chk, call, "symbol")
    return ir.DeviceConst(ir.KADDR, name, type=T.U64, span=call.span)


def check_percpu_kaddr(chk, call: A.Call):
    """percpu_kaddr("sym"[, cpu]): the address of the kernel's per-CPU
    variable sym on this CPU (bpf_this_cpu_ptr) or on cpu (bpf_per_cpu_ptr:
    0 past the last CPU), a uint64 * as 0.27's; sym is a typed ksym libbpf
    finds in the device's BTF when the tracer loads (Linux 5.10)."""
    name = _literal(chk, call, "symbol")
    known = name.isascii() and name.isidentifier() and \
        chk.kernel(lambda k: k.percpu_var(name), call.args[0].span) is not None
    if not known:
        # bpftrace 0.27's words, at the call as there
        chk.err(f'Could not resolve variable "{name}" from BTF', call.span,
                f"percpu_kaddr() takes a per-CPU variable the kernel's BTF has; it has no {name}")
    args = [ir.BytesConst(name.encode(), type=T.Str(len(name) + 1), span=call.args[0].span)]
    if len(call.args) > 1:
        cpu = chk.expr(call.args[1])
        if not cpu.type.is_int or cpu.type.is_pointer:
            chk.err(f"percpu_kaddr()'s cpu must be an integer, got {cpu.type}", call.args[1].span)
        args.append(cpu)
    return ir.Call(I.PERCPU_KADDR, args, type=T.Ptr("u64"), span=call.span)


def check_cgroupid(chk, call: A.Call):
    """cgroupid("/sys/fs/cgroup/..."): the id of a cgroup v2 directory, the
    value `cgroup` has for tasks in it."""
    path = _literal(chk, call, "path")
    return ir.DeviceConst(ir.CGROUPID, path, type=T.U64, span=call.span)


def check_uaddr(chk, call: A.Call):
    """uaddr("sym"): the symbol's address in the probed process, from the
    uprobe's binary (its symbol table, read on the device). In a uprobe the
    program adds the load offset it sees (the probed address minus the
    probe's link-time address), so position-independent executables and
    libraries work too; a uretprobe sees no such address and needs a
    fixed-address executable. A pointer to 8 bytes (bpftrace sizes it by
    the symbol's size in the build machine's binary)."""
    name = _literal(chk, call, "symbol")
    probe = chk.probe
    pname, how = probe.provider.name, probes.of(probe.provider).uaddr
    if not how:
        chk.err(f"uaddr() finds a symbol in a uprobe's binary; {pname} probes have none", call.span)
    path = probe.target.extra["path"]
    typ = T.Ptr("u64", user=True)
    if how == "fixed":
        return ir.DeviceConst(ir.UADDR_FIXED, name, binary=path, type=typ, span=call.span)
    target, off = probe.target.target, probe.target.extra.get("offset", 0)
    if target.startswith("0x"):
        at = ir.IntConst(int(target, 16) + off, type=T.U64, span=call.span)
    else:
        at = ir.Binary("+", ir.DeviceConst(ir.UADDR, target.split("@")[0], binary=path, type=T.U64, span=call.span),
                       ir.IntConst(off, type=T.U64, span=call.span), type=T.U64, span=call.span)
    ip = probe.provider.var("caller")
    load = ir.Binary("-", ir.Variable(ip, type=T.U64, span=call.span), at, type=T.U64, span=call.span)
    return ir.Binary("+", ir.DeviceConst(ir.UADDR, name, binary=path, type=T.U64, span=call.span), load,
                     type=typ, span=call.span)


def ncpus(span):
    return ir.DeviceConst(ir.NCPUS, "", type=T.U64, span=span)


# --- memory ------------------------------------------------------------------------

def pointee_type(chk, ptr: T.Type, span) -> T.Type:
    """What `*p` reads for a pointer of type ptr: the pointed integer or
    pointer; for an integer that is no typed pointer, 8 bytes unsigned (as
    bpftrace does with kaddr()'s value)."""
    if ptr.pointee in (None, "void"):
        return T.U64
    if ptr.items:       # &$s of a string or tuple variable (pointers.address_of)
        return ptr.items[0]
    words = tuple(w for w in ptr.pointee.split() if w not in ("const", "volatile"))
    if words and words[-1] == "*":
        return T.Ptr(" ".join(words[:-1]), user=ptr.user)
    if words and words[0] in ("struct", "union") or ptr.btf:
        chk.err(f"can't dereference a {ptr} with '*': read its members with '->'", span)
    if words in B.INT_WORDS and B.INT_WORDS[words][0]:
        size, signed = B.INT_WORDS[words]
        return T.Int(size, signed)
    chk.err(f"can't dereference a {ptr}: cast it to a pointer to an integer first, "
            "e.g. *(int32 *)p", span)


def deref(chk, e: A.Unary):
    """`*p`: a read of the pointed type, in user memory for a user pointer."""
    x = chk.expr(e.operand)
    if not x.type.is_int:
        chk.err(f"can't dereference a value of type {x.type}", e.operand.span)
    return pointed(chk, x, e.span)


def pointed(chk, x: ir.Expr, span) -> ir.Expr:
    """What pointer x points to, as a value (`*p`, `p[i]`)."""
    rec = structs.record_of(chk, x.type)
    if rec is not None:
        return structs.value(chk, x, rec, span)     # the script's struct as a value
    words = tuple((x.type.pointee or "").split())
    if not x.type.btf and not x.type.user and words[:1] in (("struct",), ("union",)) and len(words) == 2:
        # a tracepoint's `struct cred *` field (`*args->cred`): the kernel's type, from BTF
        tid = chk.kernel(lambda k: k.lookup(words), span)
        if tid:
            x = ir.Cast(x, type=chk.kernel(lambda k: k.pointer_to(tid), span), span=span)
    if x.type.btf and x.type.pointee.split()[0] in ("struct", "union"):
        return kvalues.value(chk, x, span)           # a kernel struct as a value
    typ = pointee_type(chk, x.type, span)
    return ir.Deref(x, user=x.type.user, type=typ)


def is_struct_pointer(chk, t: T.Type) -> bool:
    """t points to a struct or union (its members read through it, `p[1].x`)."""
    return structs.record_of(chk, t) is not None or \
        bool(t.btf and t.pointee.split()[0] in ("struct", "union"))


# --- registers and the stack ------------------------------------------------------

def _needs_regs(chk, what: str, span):
    probe = chk.probe
    if probe.provider.var("regs") is None:
        chk.err(f"{what} reads the registers of a kprobe or uprobe; {probe.provider.name} probes "
                "have none", span)
    probe.uses_regs = True      # no fentry twin: it has no pt_regs


def check_reg(chk, call: A.Call):
    """reg("ip"): a register of the probed context by the kernel's name."""
    name = _literal(chk, call, "register name")
    _needs_regs(chk, "reg()", call.span)
    names = ARCH.get(chk.arch).regs
    if name not in names:
        chk.err(f"{chk.arch} has no register '{name}'", call.args[0].span, f"registers: {', '.join(names)}")
    return ir.Register(name, type=T.U64, span=call.span)


def sarg(chk, n: int, span):
    """sargN: the Nth word of the probed function's arguments on the stack
    (above the return address on x86_64, at the stack pointer on aarch64:
    PLYC_STACK_ARG), in user memory for uprobes."""
    _needs_regs(chk, f"sarg{n}", span)
    return ir.Call(I.SARG, [ir.IntConst(n, type=T.S64)], type=T.U64, span=span)


# --- types ----------------------------------------------------------------------------

def offsetof(chk, e: A.Offsetof):
    """offsetof(struct T, a.b): the member's offset on the device (CO-RE)."""
    if not isinstance(e.arg, A.TypeName) or e.arg.pointers or e.arg.array_len is not None:
        chk.err("offsetof() takes a struct type and a member: offsetof(struct T, member)", e.span)
    words = e.arg.words
    if words[0] not in ("struct", "union") or len(words) != 2:
        chk.err(f"offsetof() needs a struct or union type, got '{e.arg.base}'", e.arg.span)
    script = structs.offsetof(chk, tuple(words), e.fields, e.span)
    if script is not None:
        return script
    tid = chk.kernel(lambda k: k.lookup(words), e.arg.span)
    if tid is None:
        chk.err(f"the kernel has no type '{' '.join(words)}'", e.arg.span)
    owner = T.Type("struct", btf=tid, pointee=" ".join(words))
    for name in e.fields:
        found = chk.kernel(lambda k: k.member(owner.btf, name), e.span)
        if found is None:
            members = chk.kernel(lambda k: k.members_of(owner), e.span)
            chk.err(f"{owner.pointee} has no member '{name}'", e.span,
                    "its members include: " + ", ".join(members) if members else None)
        owner = found[1]
        if owner.kind != "struct" and name != e.fields[-1]:
            chk.err(f"'{name}' is not a struct or union: it has no member '{e.fields[e.fields.index(name) + 1]}'",
                    e.span)
    args = [ir.BytesConst(" ".join(words).encode(), type=T.Str(64)),
            ir.BytesConst(".".join(e.fields).encode(), type=T.Str(64))]
    return ir.Call(I.OFFSETOF, args, type=T.U64, span=e.span)


# --- values the tracer prints as text (runtime-c/values/btvalues.c) ------------------------

USERNAME = Var("username", T.Int(4, False, "username"), V.UID,
               doc="the task's uid, printed as its name in the device's /etc/passwd")


def check_macaddr(chk, call: A.Call):
    """macaddr(p): the 6 bytes at p (or of a 6-byte array), printed as a
    MAC address; kept in a u64's first six bytes."""
    arg = call.args[0]
    if isinstance(arg, A.Str):
        chk.err("macaddr() takes a pointer or an array of 6 bytes, not a string literal", arg.span)
    x = chk.array_operand(arg)
    if not (x.type.is_int or x.type.kind in ("buf", "str") and x.type.size == 6):
        chk.err(f"macaddr() needs a pointer or an array of 6 bytes, got {x.type}", arg.span)
    return ir.Call(I.MACADDR, [x], type=T.Int(8, False, "mac"), span=call.span)


def check_strftime(chk, call: A.Call):
    """strftime(fmt, ns): ns (bpf_ktime_get_ns()'s clock, as nsecs) printed
    by the tracer in strftime(3)'s fmt as local time, with bpftrace's %f
    (microseconds). The format is the program's time_formats[i], i its
    type's format_index (the runtime's plyc_type holds it in its width)."""
    fmt = _literal(chk, call, "format")
    x = chk.expr(call.args[1])
    if not x.type.is_int:
        chk.err(f"strftime() needs a time in nanoseconds, got {x.type}", call.args[1].span)
    formats = chk.st.time_formats
    if fmt not in formats:
        if len(formats) == 255:
            chk.err("a program can have at most 255 strftime() formats", call.args[0].span)
        formats.append(fmt)
    return ir.Call(I.STRFTIME, [x], type=T.Strftime(formats.index(fmt)), span=call.span)


def _text_index(chk, text: str, span) -> int:
    """text's place in the program's table of texts the tracer prints by
    (strftime() formats, cgroup_path() filters), added if new."""
    texts = chk.st.time_formats
    if text not in texts:
        if len(texts) == 255:
            chk.err("a program can have at most 255 strftime() formats and cgroup_path() filters", span)
        texts.append(text)
    return texts.index(text)


def check_cgroup_path(chk, call: A.Call):
    """cgroup_path(id[, "filter"]): the id, which the tracer prints as the
    paths of that cgroup in the mounted hierarchies whose names the filter
    (a glob, '*' when none) matches, as 0.27 finds them when it prints
    (runtime-c/values/cgroups.c). The filter is a literal: 0.27 crashes on
    another string, and on an empty one."""
    x = chk.expr(call.args[0])
    if not x.type.is_int or x.type.is_pointer:
        chk.err(f"cgroup_path() needs a cgroup id (an integer), got {x.type}", call.args[0].span)
    text = "*"
    if len(call.args) > 1:
        arg = call.args[1]
        lit = chk.literal_string(arg)
        if lit is None:
            chk.err("cgroup_path()'s filter must be a string literal", arg.span)
        if not lit:
            chk.err("cgroup_path()'s filter is empty: it picks no hierarchy", arg.span,
                    "'*' picks them all, as no filter does")
        text = lit.decode("utf-8", "replace")
    if x.type.size != 8 or x.type.signed:
        x = ir.Cast(x, type=T.U64, span=x.span)
    return ir.Call(I.CGROUP_PATH, [x], type=T.CgroupPath(_text_index(chk, text, call.span)), span=call.span)


# --- maps -------------------------------------------------------------------------------

def has_key(chk, call: A.Call):
    """has_key(@m, k): whether the map holds key k (current bpftrace), a
    bool (printed true/false, as 0.27 prints it)."""
    if len(call.args) != 2 or not isinstance(call.args[0], A.Map) or call.args[0].keys is not None:
        chk.err("has_key() takes a map and a key: has_key(@m, key)", call.span)
    key = call.args[1]
    ref = A.Map(call.args[0].name, key.items if isinstance(key, A.Tuple) and not key.names else [key], span=call.span)
    info, keys = chk.map_ref(ref, writing=False)
    return ir.MapHas(info.name, keys, type=replace(T.S64, denotes="bool"), span=call.span)


def check_len(chk, call: A.Call):
    """len(@m): how many keys the map holds (current bpftrace), counted by
    bpf_for_each_map_elem() (Linux 5.13)."""
    arg = call.args[0]
    if not isinstance(arg, A.Map) or arg.keys is not None:
        chk.err("len() takes a map: len(@m)", arg.span)
    info = chk.maps.get(arg.name)
    if info is None:
        chk.err(f"no map named {arg.name}", arg.span)
    if not info.key_types:
        chk.err(f"len() counts a map's keys; {arg.name} has none", arg.span)
    chk.probe.bpf_defines.add("PLYC_MAP_LEN")
    # The tracer checks for the helper at start-up (codegen/loops.py's needs:
    # 5.10's verifier would reject the callback's BTF without naming it).
    return ir.Call(I.LEN, [ir.BytesConst(arg.name.encode(), type=T.Str(64))], type=T.S64, span=call.span)


# The functions above, by name: (fewest, most arguments), typing rule.
FUNCTIONS = {
    "kaddr": ((1, 1), check_kaddr),
    "cgroupid": ((1, 1), check_cgroupid),
    "percpu_kaddr": ((1, 2), check_percpu_kaddr),
    "uaddr": ((1, 1), check_uaddr),
    "reg": ((1, 1), check_reg),
    "has_key": ((2, 2), has_key),
    "macaddr": ((1, 1), check_macaddr),
    "strftime": ((2, 2), check_strftime),
    "cgroup_path": ((1, 2), check_cgroup_path),
    "len": ((1, 1), check_len),
}


def call(chk, e: A.Call):
    (lo, hi), check = FUNCTIONS[e.name]
    if not lo <= len(e.args) <= hi:
        chk.err(f"{e.name}() takes {lo} argument{'s' if lo != 1 else ''}, got {len(e.args)}", e.span)
    return check(chk, e)


def variable(chk, name: str, span):
    """ncpus, username and sargN as IR, or None for other names."""
    if name == "ncpus":
        return ncpus(span)
    if name == "username":
        return ir.Variable(USERNAME, type=USERNAME.type, span=span)
    if name.startswith("sarg") and name[4:].isdigit():
        return sarg(chk, int(name[4:]), span)
    return None


def element_at(chk, arr: ir.Expr, idx: ir.Expr, span, index_span):
    """arr[idx] of a kernel array member (`curtask->sighand->action[$i]`), idx
    known at run time only, as bpftrace 0.27 reads it: at the array's
    address (its holder's pointer plus the member's CO-RE offset) plus idx
    elements, unchecked as 0.27's. A struct element: a pointer to it, the
    place its members are read through; other elements: the element."""
    path, node = [], arr
    while True:
        if not isinstance(node, ir.KMember):
            chk.err("an index of this array must be a constant integer", index_span,
                    "plyc indexes at run time an array member read through a pointer (p->a[$i])")
        path.insert(0, node.field)
        if node.obj.type.is_pointer:
            break
        node = node.obj
    ptr = node.obj
    if not idx.type.is_int or idx.type.is_pointer:
        chk.err(f"an index must be an integer, got {idx.type}", index_span)
    # a char array (a string): its chars
    elem = T.Int(1, True) if arr.type.kind == "str" else chk.kernel(lambda k: k.element_type(arr.type), span)
    if elem.kind not in ("int", "struct"):
        chk.err(f"an array of {elem} is indexed by plyc with a constant integer only", index_span)
    words = " ".join(ptr.type.pointee.split()[:2])
    off = ir.Call(I.OFFSETOF, [ir.BytesConst(words.encode(), type=T.Str(64)),
                               ir.BytesConst(".".join(path).encode(), type=T.Str(64))], type=T.U64, span=span)
    size = ir.IntConst(elem.size, type=T.S64, span=span)
    base = ir.Binary("+", ir.Cast(ptr, type=T.U64, span=span), off, type=T.U64, span=span)
    at = ir.Binary("+", base, ir.Binary("*", idx, size, type=T.Int(8, idx.type.signed), span=span),
                   type=T.U64, span=span)
    if elem.kind == "struct":
        return ir.Cast(at, type=chk.kernel(lambda k: k.pointer_to(elem.btf), span), span=span)
    return ir.Deref(at, user=False, type=elem, span=span)


def char_at(chk, s: ir.Expr, idx: ir.Expr, span, index_span):
    """s[idx] of a string value (`$a[$i]`), idx known at run time only: its
    char as an int8, 0 past the string's end, as bpftrace 0.27 reads it (a
    negative index too: 0.27 refuses a signed index's type, plyc's `$i = 1`
    is one)."""
    if not idx.type.is_int or idx.type.is_pointer:
        chk.err(f"an index must be an integer, got {idx.type}", index_span)
    return ir.Call(I.BYTE_AT, [s, idx], type=T.Int(1, True), span=span)


def buffers_compare(chk, op: str, a: ir.Expr, b: ir.Expr, span):
    """`a == b` and `a != b` of two buffers (buf()'s values): equal when
    they hold as many bytes and the same ones, a bool. bpftrace 0.27
    compares them as C strings from their length's first byte, so it finds
    buffers of one length equal whatever their bytes (docs/bpftrace.md,
    "Against bpftrace 0.27"); plyc compares the bytes."""
    if op not in ("==", "!=") or not (a.type.sized and b.type.sized):
        chk.err(f"operator '{op}' can't compare {a.type} with {b.type}", span,
                "buffers compare with == and != to buffers" if op in ("==", "!=") else None)
    equal = ir.Call(I.BUF_EQUAL, [a, b], type=T.S32, span=span)
    node = equal if op == "==" else ir.Binary("==", equal, ir.IntConst(0, type=T.S32, span=span),
                                              type=T.S32, span=span)
    node.type = replace(node.type, denotes="bool")
    return node
