"""A kernel struct or union held by value used as a value (`print(curtask->se)`,
`@m = $task->se.load`, `*$task->mm`, `$n = $d->d_name`): a record of its
members, each a CO-RE read of its own, as bpftrace 0.27 prints it
`{ .weight = 1048576, .inv_weight = 4194304 }`: an anonymous struct or
union's members in their holder's place (`{ .hash = 1, .len = 2, .hash_len =
..., .name = 0x... }` of struct qstr), a union's every member, nested structs
as records, arrays as lists (`[1,2]`), bit-fields as integers (a CO-RE
bit-field read), enums by their enumerators' names and `bool`s as
true/false. Only where the struct is the value: on the way to a member
(`curtask->se.load.weight`) it stays a place to read through (lower.py's
field_base)."""
from __future__ import annotations

from dataclasses import replace

from ... import arch as ARCH
from ... import btf as B
from ... import types as T
from ...ir import nodes as ir
from ...ir import variables as V
from ...providers import Var

# Members a struct value may hold, nested ones and array elements counted
# (each a CO-RE read of its own: a task_struct by value is about 700;
# past about 2,000 in a probe BPF's jumps no longer reach across it).
MAX_MEMBERS = 1536


def value(typer, x: ir.Expr, span) -> ir.Expr:
    """x, an expression of a kernel struct type, as a record; x a pointer
    to one: the struct it points to (`*p`); x a kernel array, a list. A probe's struct values hold
    at most MAX_MEMBERS members together (one BPF program)."""
    count = [0]
    x = _read_base_once(typer, x, span)
    if x.type.kind == "buf":        # a kernel array: a list
        count[0] = 1
        what = f"{x.type.pointee}[{x.type.size // max(1, typer.kernel(lambda k: k.element_type(x.type), span).size)}]"
        rec = _value(typer, x, x.type.btf, span, count, what)
    else:
        rec = _record(typer, x, span, count, x.type.pointee)
    reads = typer.kvalue_reads
    key = id(typer.probe)
    reads[key] = reads.get(key, 0) + count[0]
    if reads[key] > MAX_MEMBERS:
        typer.err(f"the kernel structs this probe holds by value have more than {MAX_MEMBERS} members "
                  "together, nested ones and array elements counted: plyc's limit for one BPF program", span,
                  "read the members you need (->x)")
    return rec


def _read_base_once(typer, x: ir.Expr, span) -> ir.Expr:
    """x with the pointer its members are read through (`curtask->real_parent`
    of `curtask->real_parent->se.load`) read once, into a local of its own,
    before the statement: each member's CO-RE read starts from it, so they
    are members of one object even if the pointer changes meanwhile, and
    the pointer chain is not walked again for each."""
    if x.type.is_pointer:
        return _hoist(typer, x, span)
    if isinstance(x, (ir.KMember, ir.Index)):
        obj = _read_base_once(typer, x.obj, span)
        return x if obj is x.obj else replace(x, obj=obj)
    return x


# What a hoisted pointer may be made of: reads with no effect, the same
# before the statement as in it.
_PURE = (ir.KMember, ir.Index, ir.Cast, ir.Variable, ir.Local, ir.IntConst, ir.Param)


def _hoist(typer, p: ir.Expr, span) -> ir.Expr:
    if isinstance(p, (ir.Local, ir.IntConst)) or \
            not all(isinstance(n, _PURE) for n in ir.walk(p)):
        return p
    key = ("kbase", span.line, span.col, span.origin.name if span.origin is not None else "")
    name = typer.temps.setdefault(key, f"kbase{len(typer.temps)}@{span.line}:{span.col}")
    typer.probe.locals[name] = p.type
    typer.defined.add(name)
    typer.before.append(ir.SetLocal(name, p, span=span))
    return ir.Local(name, type=p.type, span=span)


def member(typer, obj: ir.Expr, name: str, typ: T.Type) -> ir.KMember:
    """obj->name / obj.name of a kernel type (typ: its type, from
    typer.kernel_member): a bit-field read as one; an enum typed to print
    by its names and a bool as true/false, as bpftrace 0.27 prints them."""
    owner = _owner(typer, obj.type)
    bitfield = bool(owner) and typer.ktypes.is_bitfield(owner, name)
    if owner and typ.kind == "int" and not typ.is_pointer:
        typ = _scalar(typer, owner, name, typ)
    return ir.KMember(obj, name, bitfield, type=typ)


def _owner(typer, t: T.Type) -> int:
    """The BTF id of the struct or union t is, or points to (0: none)."""
    if t.btf:
        return t.btf
    if t.is_pointer and t.pointee.split()[0] in ("struct", "union"):
        tid = typer.ktypes.lookup(tuple(t.pointee.split()[:2]))
        return typer.ktypes.btf.strip(tid) if tid else 0
    return 0


def _scalar(typer, owner: int, name: str, typ: T.Type) -> T.Type:
    b = typer.ktypes.btf
    path = b.find_member(owner, name)
    return denoted(typer, path[-1].type, typ) if path else typ


def denoted(typer, tid: int, typ: T.Type, width: int = 0) -> T.Type:
    """typ, the integer of BTF type tid, as an enum (of the enum's width, or
    width's) or a bool where it is one."""
    b = typer.ktypes.btf
    t = b[b.strip(tid)]
    if t.kind in (B.ENUM, B.ENUM64) and t.size in (1, 2, 4, 8):
        tables = typer.st.enum_tables
        key = ("btf", t.id)
        if key not in tables:
            tables[key] = len(tables)
        return T.Type("int", width or t.size, t.signed, "enum", enum_index=tables[key])
    if t.kind == B.INT and t.is_bool:
        return T.Int(t.size, False, "bool")
    return typ


def enum_cast(typer, words: tuple, typ: T.Type, width: int) -> T.Type:
    """The type of (enum e)x of a kernel enum e (typ: the cast's integer
    of e's size): an enum value of width bytes."""
    tid = typer.ktypes.lookup(tuple(w for w in words if w not in ("const", "volatile")))
    # unsigned whatever the enum's BTF says: 0.27 prints (enum e)-1 as 2^64 - 1
    return replace(denoted(typer, tid, typ, width), signed=False) if tid else typ


def tp_enum(typer, ctype: str, typ: T.Type) -> T.Type:
    """A tracepoint field's type typ, an enum value where its format's C
    type is a kernel enum (`enum skb_drop_reason reason`): printed by its
    enumerator's name as 0.27 prints it, of the field's size and sign."""
    words = tuple(w for w in ctype.split() if w not in ("const", "volatile"))
    if not typ.is_int or typ.denotes or len(words) != 2 or words[0] != "enum":
        return typ
    try:
        tid = typer.ktypes.lookup(words)
    except B.BTFError:
        return typ      # no BTF to name it by (a cross build): its number
    if not tid:
        return typ
    return replace(denoted(typer, tid, typ, typ.size), signed=typ.signed)


def enumerators(typer_st, key: tuple) -> list:
    """[(value, name), ...] of an enum table's key (structs.enum_type's
    words, or ("btf", id) of a kernel enum)."""
    if key[0] == "btf":
        return typer_st.ktypes.btf.enumerators_of(key[1])
    return typer_st.cdefs.enumerators[key]


def _refuse(typer, span, what: str, why: str):
    typer.err(f"a {what} as a value is not supported by plyc: {why}", span,
              "read the members you need (->x)")


def _count(typer, span, count: list, what: str):
    count[0] += 1
    if count[0] > MAX_MEMBERS:
        _refuse(typer, span, what, f"it has more than {MAX_MEMBERS} members, nested ones and "
                "array elements counted")


def _record(typer, x: ir.Expr, span, count: list, what: str) -> ir.TupleMake:
    """x's members as a record; errors name the value's type (what)."""
    b = typer.kernel(lambda k: k.btf, span)
    items, names = [], []
    _members(typer, x, b.strip(x.type.btf), span, count, what, items, names)
    typ = T.Tuple([i.type for i in items], names) if items else T.EmptyRecord()
    return ir.TupleMake(items, type=typ, span=span, struct=x.type.pointee or "")


def _members(typer, x: ir.Expr, tid: int, span, count: list, what: str, items: list, names: list):
    """The members of struct/union tid (x's, or an anonymous member of
    x's) appended to items and names: an anonymous one's in its place."""
    b = typer.ktypes.btf
    for m in b[tid].members:
        if not m.name:
            inner = b.strip(m.type)
            if b[inner].kind in (B.STRUCT, B.UNION):
                _members(typer, x, inner, span, count, what, items, names)
            continue
        _count(typer, span, count, what)
        typ = typer.kernel_member(x.type, m.name, x.type.is_pointer, span, bitfields=True)
        node = member(typer, x, m.name, typ)
        items.append(_value(typer, node, m.type, span, count, what))
        names.append(m.name)


def _value(typer, node: ir.Expr, tid: int, span, count: list, what: str) -> ir.Expr:
    """node (of BTF type tid) as a value: a struct a record, an array a list."""
    typ = node.type
    if typ.kind == "struct":
        return _record(typer, node, span, count, what)
    if typ.kind == "buf" and typ.btf:
        b = typer.ktypes.btf
        arr = b[b.strip(tid)]
        elems = []
        for i in range(arr.nelems):
            if i:
                _count(typer, span, count, what)
            et = typer.kernel(lambda k: k.element_type(typ), span)
            if et.kind == "str":
                _refuse(typer, span, what, f"an array of strings ({typ.pointee})")
            if et.kind == "int" and not et.is_pointer:
                et = denoted(typer, arr.type, et)
            elems.append(_value(typer, ir.Index(node, i, type=et, span=span), arr.type, span, count, what))
        return ir.TupleMake(elems, type=T.Array([e.type for e in elems]), span=span)
    if typ.kind not in ("int", "str"):
        _refuse(typer, span, what, f"a member of type {typ}")
    return node


# `ctx` in a perf-event probe (profile, interval, software, hardware): 0.27's
# struct bpf_perf_event_data *, whose reads the verifier rewrites into the
# sample's registers; the program copies them so (runtime-c's plyc_perf_ctx)
# and ctx is the copy's address, read through as any kernel pointer.
PERF_CTX = Var("ctx", T.U64, V.PERF_CTX, doc="the perf event's context (struct bpf_perf_event_data *)")


def not_yet_ctx(what: str) -> str:
    return f"{what} is not supported by plyc yet"


def context(chk, span) -> ir.Expr:
    """bpftrace's `ctx`: an iterator's context (its provider's, typed from
    BTF), a perf event's as 0.27 types it; refused elsewhere in 0.27's words."""
    probe = chk.probe
    prov = probe.provider
    if prov.var("ctx") is not None:
        return chk.variable("ctx", span)
    if prov.section(probe.target) == "perf_event":
        if chk.st.arch not in ("x86_64", "aarch64"):
            chk.err(not_yet_ctx(f"'ctx' in a perf-event probe for {chk.st.arch}"), span,
                    "built and run for x86_64 and aarch64")
        if not ARCH.is_native(chk.st.arch) and not chk.ktypes.path:
            # its registers' layout is the target's: the build machine's BTF has another
            chk.err(f"ctx in a perf-event probe built for {chk.st.arch} needs that kernel's BTF", span,
                    "plyc build --btf FILE (the target kernel's /sys/kernel/btf/vmlinux)")
        tid = chk.kernel(lambda k: k.lookup(("struct", "bpf_perf_event_data")), span)
        if not tid:
            chk.err("the kernel's BTF has no struct bpf_perf_event_data, the type of ctx", span)
        probe.bpf_defines.add("PLYC_PERF_CTX")
        return ir.Variable(PERF_CTX, type=chk.kernel(lambda k: k.pointer_to(tid), span), span=span)
    data = prov.var("data")
    if data is not None and data.type.pointee == "fields":
        chk.err("Use args instead of ctx in tracepoint", span)
    if prov.var("regs") is not None:
        chk.err(not_yet_ctx(f"'ctx' in {prov.name} probes"), span,
                "read the registers with reg(\"name\")")
    chk.err(f"The ctx builtin can not be used with '{prov.name.lower()}' probes", span)
