"""Placement of temporaries: for each byte temporary the code generator
makes (a string, buffer or tuple value, a map's key or value record, a
$local array, a CO-RE read's word), whether it lives on the BPF stack or
in the probe's slot of the per-CPU array plyc_scratch.

The BPF stack is 512 bytes, and clang needs part of it for spills and
for the locals of inlined helpers, so a program keeps on its stack only
temporaries of at most STACK_TEMP_MAX bytes (comm, an integer key, a
(comm, pid) key; bpftrace's config `on_stack_limit` changes it),
STACK_TEMP_BUDGET bytes of them in all, first come first served in the
order the code evaluates them; everything else goes to scratch. A probe
with a for loop's callback keeps its $local arrays in scratch, which both
functions reach (docs/design.md: "Temporaries").

The walk below evaluates each statement and expression in the order
plyc/codegen/cgen.py prints them; Probe.temps lists the decisions in
that order (Temp), and the code generator takes one per temporary it
makes, checking its size."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ... import types as T
from .. import intrinsics as I
from .. import nodes as ir

STACK_TEMP_MAX = 32
STACK_TEMP_BUDGET = 160

# What a temporary holds (Temp.role).
LOCAL = "local"      # a $local's array (node: its name)
VALUE = "value"      # an expression's value (an array; a CO-RE read's __u64)
AS = "as"            # a tuple converted to a wider tuple type
KEY = "key"          # a map's key, built for the node that accesses the map
STORED = "stored"    # a MapStore's value record


@dataclass(eq=False)
class Temp:
    node: object         # the IR node it is for (a $local: its name)
    role: str
    size: int
    scratch: bool        # in the scratch slot, else on the stack


def words(size: int) -> int:
    """Stack bytes a temporary takes: every one is 8-aligned."""
    return (size + 7) // 8 * 8


def direct_read(e) -> bool:
    """A value read from memory straight into its destination (a record's
    field, a $local): it needs no temporary of its own."""
    return isinstance(e, ir.Call) and e.func in (I.STR, I.DYN, I.MEM) and e.args[0].type.kind != "str"


class Placer:
    """One probe's walk: its temporaries in order, and the stack they take."""

    def __init__(self, program: ir.Program, probe: ir.Probe, limit: int):
        self.program, self.probe, self.limit = program, probe, limit
        self.stack_used = 0
        self.temps: list = []

    def place(self, node, role: str, size: int, scratch: bool = False):
        if not scratch and size <= self.limit and self.stack_used + words(size) <= STACK_TEMP_BUDGET:
            self.stack_used += words(size)
        else:
            scratch = True
        self.temps.append(Temp(node, role, size, scratch))

    # --- statements ---------------------------------------------------------

    def probe_body(self):
        captured = any(isinstance(n, ir.ForMap) for n in ir.walk(self.probe.body))
        for name, typ in sorted(self.probe.locals.items()):
            if typ.is_bytes:
                self.place(name, LOCAL, typ.size, scratch=captured)
        self.stmt(self.probe.body)

    def stmt(self, s):
        getattr(self, "st_" + type(s).__name__, self.st_none)(s)

    def st_none(self, s):
        """Return, Break, Continue: no values."""

    def st_Block(self, s):
        for sub in s.stmts:
            self.stmt(sub)

    def st_If(self, s):
        self.scalar(s.cond)
        self.stmt(s.then)
        if s.other is not None:
            self.stmt(s.other)

    def st_While(self, s):
        if s.step is not None:
            self.stmt(s.step)
        self.scalar(s.cond)
        self.stmt(s.body)

    def st_ForMap(self, s):
        # The probe's side keeps a context struct on its stack while the
        # callback runs (codegen/loops.py): its pointers and the scalar
        # $locals the loop uses, and `ret` when its body returns.
        used = {n.name for n in ir.walk(s) if isinstance(n, (ir.Local, ir.SetLocal))} | \
            {name for n in ir.walk(s) if isinstance(n, ir.ForMap) for name in n.keys + [n.value]}
        scalars = [n for n, t in self.probe.locals.items() if not t.is_bytes and n in used]
        returns = any(isinstance(n, ir.Return) for n in ir.walk(s.body))
        self.stack_used += 16 + 8 * (len(scalars) + returns)
        self.stmt(s.body)

    def st_CallStmt(self, s):
        self.value(s.call)

    def st_LookupLet(self, s):
        self.key(s, s.map, s.keys)

    st_MapDelete = st_KeyLet = st_LookupLet

    def st_SetLocal(self, s):
        typ = self.probe.locals[s.name]
        if typ.is_bytes:
            self.copy_bytes(s.value, typ)
        else:
            self.scalar(s.value)

    def st_MapStore(self, s):
        info = self.program.maps[s.map]
        vt = T.record_type(info.value_type or T.S64)
        if vt.is_bytes:
            self.place(s, STORED, vt.size)
            self.copy_bytes(s.value, vt)
        else:
            self.scalar(s.value)
            self.place(s, STORED, vt.size)
        self.key(s, s.map, s.keys)

    def st_Aggregate(self, s):
        if s.agg.takes_x:
            self.scalar(s.args[0])
        self.key(s, s.map, s.keys)

    def st_EmitEvent(self, s):
        types = [T.record_type(t) for t in s.event.arg_types]
        self.fields(types, s.args)
        self.direct_reads(types, s.args)

    # --- records --------------------------------------------------------------

    def key(self, node, name: str, keys: list):
        """The key of map `name` that node builds (none for a KeyLet's KeyRef)."""
        if keys and isinstance(keys[0], ir.KeyRef):
            return
        types = [T.record_type(t) for t in self.program.maps[name].key_types or []]
        if not types:
            self.place(node, KEY, 4)
            return
        self.fields(types, keys)
        self.place(node, KEY, T.record_layout(types)[1])
        self.direct_reads(types, keys)

    def fields(self, types: list, exprs: list):
        """A record's field values, but those read straight into it."""
        for t, e in zip(types, exprs):
            if t.is_bytes and direct_read(e):
                continue
            if t.is_bytes:
                self.bytes_as(e, t)
            else:
                self.scalar(e)

    def direct_reads(self, types: list, exprs: list):
        """The addresses of the fields read straight into the record, once it is there."""
        for t, e in zip(types, exprs):
            if t.is_bytes and direct_read(e):
                self.scalar(e.args[0])

    def copy_bytes(self, e, typ):
        if direct_read(e):
            self.scalar(e.args[0])
        else:
            self.bytes_as(e, typ)

    def bytes_as(self, e, typ):
        if typ.kind != "tuple" or e.type == typ:
            self.bytes_ref(e)
        else:
            self.bytes(e)
            self.place(e, AS, typ.size)

    # --- expressions ------------------------------------------------------------

    def value(self, e):
        if e.type.is_bytes:
            self.bytes(e)
        else:
            self.scalar(e)

    def bytes_ref(self, e):
        """An array's value, where a string constant is a literal of its own."""
        if not isinstance(e, ir.BytesConst):
            self.bytes(e)

    def bytes(self, e):
        if isinstance(e, (ir.BytesConst, ir.Variable, ir.LookupValue)):
            self.place(e, VALUE, e.type.size)
        elif isinstance(e, ir.MapRead):
            self.key(e, e.map, e.keys)
            self.place(e, VALUE, e.type.size)
        elif isinstance(e, ir.TpField):
            self.place(e, VALUE, e.type.size)
        elif isinstance(e, ir.KMember):
            self.place(e, VALUE, e.type.size)
            self.lvalue(e)
        elif isinstance(e, ir.Call):
            self.call(e)
        elif isinstance(e, ir.TupleMake):
            self.place(e, VALUE, e.type.size)
            self.tuple_items(e)
        elif isinstance(e, ir.TupleGet):
            self.bytes(e.obj)
            self.place(e, VALUE, e.type.size)
        elif isinstance(e, ir.Deref):     # a string or tuple read through a pointer
            self.scalar(e.addr)
            self.place(e, VALUE, e.type.size)
        elif isinstance(e, ir.Ternary):
            self.scalar(e.cond)
            self.bytes_as(e.then, e.type)       # a narrower tuple converted (codegen's)
            self.bytes_as(e.other, e.type)
            self.place(e, VALUE, e.type.size)
        # a Local's array is its own (LOCAL)

    def tuple_items(self, e: ir.TupleMake):
        """A tuple's members; one that is a tuple made in place is written
        straight into its holder (codegen/tuples.py's put_member)."""
        for item, typ in zip(e.items, e.type.items):
            if isinstance(item, ir.TupleMake) and item.type == typ:
                self.tuple_items(item)
            elif typ.is_bytes and direct_read(item):
                self.scalar(item.args[0])
            elif typ.is_bytes:
                self.bytes_ref(item)
            else:
                self.scalar(item)

    def scalar(self, e):
        if isinstance(e, (ir.MapRead, ir.MapHas)):
            self.key(e, e.map, e.keys)
        elif isinstance(e, ir.Unary):
            self.scalar(e.operand)
        elif isinstance(e, ir.Binary):
            for x in (e.left, e.right):
                self.string(x) if e.left.type.kind == "str" else self.scalar(x)
        elif isinstance(e, ir.Ternary):
            for x in (e.cond, e.then, e.other):
                self.scalar(x)
        elif isinstance(e, ir.KMember) or (isinstance(e, ir.Index) and e.obj.type.btf):
            # a CO-RE read, into a word of its own
            self.lvalue(e)
            self.place(e, VALUE, 8)
        elif isinstance(e, ir.Index):
            self.bytes(e.obj)
        elif isinstance(e, ir.Cast) and e.operand.type.is_bytes:
            self.bytes_ref(e.operand)      # an array's bytes read as an integer
        elif isinstance(e, ir.Cast):
            self.scalar(e.operand)
        elif isinstance(e, (ir.UserRead, ir.Deref)):
            self.scalar(e.addr)
        elif isinstance(e, ir.Call):
            self.call(e)
        elif isinstance(e, ir.TupleGet):
            self.bytes(e.obj)

    def string(self, e):
        """A string compared: a constant as a literal of its own length."""
        if not isinstance(e, ir.BytesConst):
            self.bytes(e)

    def lvalue(self, e):
        """The pointers read on the way to a kernel object's member."""
        if not (isinstance(e, ir.Index) or e.obj.type.kind == "struct"):
            self.scalar(e.obj)
        elif isinstance(e.obj, (ir.KMember, ir.Index)):
            self.lvalue(e.obj)
        else:
            self.value(e.obj)    # a struct held by value ($n = $d->d_name): no pointer on the way

    def call(self, e: ir.Call):
        f, args = e.func, e.args
        if f is I.STR:
            self.str_call(e)
            return
        if f.temp == I.BEFORE:
            self.place(e, VALUE, e.type.size)
        if f is I.PATH and self.probe.sleepable:
            return      # an iterator's ctx->file->f_path: walked by pointers, no copy
        if f is I.BUF:
            # its length first (a constant one is printed), then the source
            for a in args[1:]:
                if not isinstance(a, ir.IntConst):
                    self.scalar(a)
            args = args[:1]
        if f is I.PERCPU_KADDR or f is I.C_CALL:
            args = args[1:]     # the variable's or function's name is no value: its C is the name
        for a in args if f.args != I.NONE else []:
            if f.args == I.STRINGS:
                self.string(a)
            elif a.type.is_int or f.args == I.SCALARS:
                self.scalar(a)
            else:
                self.bytes(a)
        if f.temp == I.AFTER:
            self.place(e, VALUE, e.type.size)

    def str_call(self, e: ir.Call):
        arg = e.args[0]
        if isinstance(arg, ir.Param) and arg.kind in (ir.ARG_STR, ir.OPT_STR):
            self.place(e, VALUE, e.type.size)     # copied from the tracer's parameters
        elif arg.type.kind != "str":
            self.place(e, VALUE, e.type.size)     # read from memory into it
            self.scalar(arg)
        elif arg.type.size == e.type.size:
            self.bytes(arg)                       # the string itself
        else:
            self.place(e, VALUE, e.type.size)     # resized into it
            self.bytes(arg)


def place(program: ir.Program, probe: ir.Probe, limit: Optional[int] = None) -> list:
    """The probe's temporaries in the order its code makes them (limit:
    the largest on the stack, STACK_TEMP_MAX unless the script says)."""
    if limit is None:
        limit = program.limits.get("stack_temp_max", STACK_TEMP_MAX)
    p = Placer(program, probe, limit)
    p.probe_body()
    return p.temps


def run(program: ir.Program) -> None:
    for probe in program.probes:
        probe.temps = place(program, probe)
