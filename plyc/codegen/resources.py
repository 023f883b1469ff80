"""Resources: what the tracer needs to run the BPF object anywhere, the one
contract between the IR, BPF code generation and the loader: maps with
their record layouts, output events, run-time parameters, and the probes
to attach."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .. import arch as A
from .. import types as T
# the default sizes: in bounds.py, beside their ranges, for the command line
from ..bounds import DEFAULT_BUFFER, DEFAULT_HIST_ENTRIES, DEFAULT_MAP_ENTRIES, DEFAULT_STACK_ENTRIES  # noqa: F401
from ..ir import nodes as ir
from ..span import script_line
from . import aggread
from . import names as N

STACK_DEPTH = 127


@dataclass
class Field:
    """A member of a C record shared by the BPF program and the loader."""
    name: str
    type: T.Type
    offset: int = 0

    def decl(self) -> str:
        t = self.type
        if t.kind == "str":
            return f"char {self.name}[{t.size}]"
        if t.kind in ("buf", "inet", "usym", "tuple"):
            return f"__u8 {self.name}[{t.size}]"
        if t.kind == "stack":
            return f"__s64 {self.name}"
        return f"{t.ctype()} {self.name}"

    @property
    def align(self) -> int:
        return 1 if self.type.is_bytes else self.type.size

    @property
    def size(self) -> int:
        return self.type.size


def layout(fields: list, start: int = 0) -> int:
    """Assign C's natural offsets (the same on every target) and return the
    record's size; the shared header asserts them with _Static_assert."""
    # Event records start after their `__u32 id, pad` header (align 4).
    offsets, size = T.record_layout([f.type for f in fields], start)
    for f, off in zip(fields, offsets):
        f.offset = off
    return size


record_type = T.record_type


@dataclass
class MapRes:
    info: ir.Map
    cname: str
    keys: list
    key_size: int
    value_ctype: str                 # C type of one BPF value
    value_size: int
    bpf_type: str
    max_entries: int
    agg: str                         # PLYC_A_*
    nbuckets: int = 0
    grow: bool = False               # may be allocated as keys come (grows(), below)

    @property
    def shared(self) -> bool:
        """An aggregation whose one value all CPUs add to atomically
        (storage(), below), not one value per CPU."""
        return self.agg != "PLYC_A_NONE" and "PERCPU" not in self.bpf_type

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def key_struct(self) -> bool:
        """Keys are a struct, but one integer is its own C type (the layout
        is the same: one field at offset 0)."""
        return bool(self.keys) and not self.scalar_key

    @property
    def scalar_key(self) -> bool:
        return len(self.keys) == 1 and not self.keys[0].type.is_bytes

    @property
    def key_ctype(self) -> str:
        if self.scalar_key:
            return self.keys[0].decl().rsplit(" ", 1)[0]
        return f"struct {self.cname}_key" if self.keys else "__u32"


@dataclass
class EventRes:
    event: ir.Event
    cname: str
    fields: list
    size: int
    map: Optional[MapRes] = None


# Integer fields of the first slots are read by one context load that the
# tracer rewrites before load (PLYC_TP_SLOTS in runtime-c/plyc_tp.h: the
# slot is numbered in a load offset); any further ones by a helper call.
TP_DIRECT_SLOTS = 0x4000


@dataclass
class TpSlot:
    """A tracepoint field whose offset the loader reads from the device."""
    slot: int
    unit: int
    tracepoint: str
    field: str
    size: int
    line: int
    is_int: int = 0                  # integers adapt to the device's size; others must match
    bytes: int = 0                   # integers: the declared C type's size ...
    signed: int = 0                  # ... and sign


@dataclass
class ProbeRes:
    probe: ir.Probe
    prog: str                        # BPF function name
    section: str
    line: int
    spec: str
    glob: bool
    fentry: Optional[dict] = None    # run as fentry/fexit where the device allows (plan)
    twin: str = ""                   # the fentry/fexit twin's BPF function name
    body: str = ""                   # the body the two share (static __always_inline)


@dataclass
class Resources:
    name: str
    script: str
    maps: list
    events: list
    probes: list
    tp_slots: list
    nargs: int
    uses_stack: bool
    buffer_size: int
    stack_entries: int
    strsize: int
    loop_caps: list = field(default_factory=list)   # script line of each While, by its index (codegen/loops.py)
    stack_temp_max: int = 32         # the largest temporary on the BPF stack (ir/opt/temps.py)
    print_maps_on_exit: bool = True
    cpp_demangle: bool = True        # user symbols' C++ names demangled (bpftrace's cpp_demangle)
    str_trailer: str = ".."          # after a cut string (a str type's cut: bpftrace's str_trunc_trailer)
    # (kind, name, binary, script line) of each value the tracer finds on
    # the device at start-up (ir.DeviceConst): plyc_params.dconst[i]
    device_consts: list = field(default_factory=list)

    def dconst(self, e: ir.DeviceConst) -> int:
        return next(i for i, d in enumerate(self.device_consts) if d[:3] == (e.kind, e.name, e.binary))

    def map(self, name: str) -> MapRes:
        return next(m for m in self.maps if m.name == name)

    def event(self, ev: ir.Event) -> EventRes:
        return next(e for e in self.events if e.event is ev)

    def slot(self, unit: int, fieldname: str) -> TpSlot:
        return next(s for s in self.tp_slots if s.unit == unit and s.field == fieldname)


def storage(keyed: bool, nbuckets: int, arch: str) -> str:
    """The map type of an aggregation, chosen by cost (docs/design.md,
    "Aggregation storage", has the measurements):
    - key-less: a one-slot per-CPU array, whose lookup the verifier inlines
      and which allocates nothing per key; CPUs never share a cache line;
    - keyed histograms: one value per key that every CPU adds to with
      atomic adds, in a plain hash. A per-CPU hash of 528-byte values
      locks 1024 x 528 bytes per possible CPU (37 MB on 64 CPUs). Alone on
      a CPU the atomic add costs what a plain one does; CPUs adding to one
      key at once share its cache line (+5-10% on two);
    - the other keyed ones per CPU: 8-16 byte values cost little per CPU,
      and min/max can't be an atomic add (cmpxchg needs 5.12).
    32-bit ARM's JIT had no atomic instructions in 5.10 or 6.1 (it gained
    them later; without, the kernel interprets the program or, with the JIT
    always on, refuses it): per CPU there."""
    if not keyed:
        return "BPF_MAP_TYPE_PERCPU_ARRAY"
    if nbuckets and A.get(arch).ptr == 8:
        return "BPF_MAP_TYPE_HASH"
    return "BPF_MAP_TYPE_PERCPU_HASH"


def _map_res(info: ir.Map, cname: str, opts, arch: str = "x86_64") -> MapRes:
    keys = [Field(f"k{i}", record_type(t)) for i, t in enumerate(info.key_types or [])]
    key_size = layout(keys) if keys else 4
    agg = info.agg if info.is_agg else None
    if agg:
        lay = agg.layout(cname, info)
        ctype, size, nbuckets = lay.ctype, lay.size, lay.nbuckets
    else:
        f = Field("v", record_type(info.value_type or T.S64))
        size, nbuckets = layout([f]), 0
        ctype = f"struct {cname}_val"
    if info.is_agg:
        bpf_type = storage(bool(keys), nbuckets, arch)
        if not keys:
            entries = 1
        elif nbuckets or agg.name == "tseries":
            # a tseries value is 24 bytes an interval, per CPU: sized as a histogram's
            entries = opts.get("hist_entries", DEFAULT_HIST_ENTRIES)
        else:
            entries = opts.get("map_entries", DEFAULT_MAP_ENTRIES)
    else:
        entries = opts.get("map_entries", DEFAULT_MAP_ENTRIES)
        bpf_type = "BPF_MAP_TYPE_HASH"
    if keys and info.max_entries:       # declared by the script: its size, LRU if it says
        entries = info.max_entries
        if info.lru:
            bpf_type = bpf_type.replace("BPF_MAP_TYPE_", "BPF_MAP_TYPE_LRU_")
    return MapRes(info, cname, keys, key_size, ctype, size, bpf_type, entries,
                  agg.kind if agg else "PLYC_A_NONE", nbuckets)


def build(program: ir.Program, name: str, script: str, opts: Optional[dict] = None) -> Resources:
    opts = opts or {}
    ns = N.Namespace()
    cnames = N.map_names(list(program.maps), ns)
    maps = [_map_res(info, cnames[info.name], opts, program.arch) for info in program.maps.values()]
    by_name = {m.name: m for m in maps}
    for m in maps:
        m.grow = grows(m, program.probes)
    events = []
    for ev in program.events:
        fields = [Field(f"a{i}", record_type(t)) for i, t in enumerate(ev.arg_types)]
        # Widest first: no padding, so more records fit in the ring buffer.
        size = layout(sorted(fields, key=lambda f: -f.align), start=8)
        events.append(EventRes(ev, f"plyc_ev{ev.id}", fields, size, by_name.get(ev.map)))
    probes, slots = [], []
    for probe in program.probes:
        t = probe.target
        fentry = None
        # A for loop's callback can't be told which twin runs it (codegen/loops.py).
        if t.provider.fentry and not probe.uses_regs and opts.get("fentry", True) \
                and not any(isinstance(n, ir.ForMap) for n in ir.walk(probe.body)):
            fentry = t.provider.fentry(t, program.ktypes, program.arch)
        prog = ns.claim(*N.prog_candidates(t.provider, probe.spec.arg or ""))
        twin = ns.claim(*N.twin_candidates(fentry["section"], prog, t.provider.name)) if fentry else ""
        body = ns.claim_c(f"{prog}_body") if fentry else ""
        section = t.provider.section(t)
        if probe.sleepable:   # iter/X -> iter.s/X (bpf_d_path in an iterator)
            section = section.replace("/", ".s/", 1)
        probes.append(ProbeRes(probe, prog, section, script_line(probe.spec.span),
                               f"{probe.spec.provider}:{probe.spec.arg}" if probe.spec.arg
                               else probe.spec.provider, t.glob, fentry, twin, body))
        for fname, fld in probe.tp_fields.items():
            is_int = fld.type.kind in ("int", "dataloc")
            slots.append(TpSlot(len(slots), probe.index, t.target, fname, fld.size, script_line(probe.spec.span),
                                int(is_int), fld.type.size if is_int else 0,
                                int(is_int and fld.type.signed)))
    return Resources(name, script, maps, events, probes, slots, program.nargs, program.uses_stack,
                     opts.get("buffer_size", DEFAULT_BUFFER),
                     opts.get("stack_entries", DEFAULT_STACK_ENTRIES), program.strsize,
                     stack_temp_max=opts.get("stack_temp_max", 32),
                     print_maps_on_exit=opts.get("print_maps_on_exit", True),
                     cpp_demangle=opts.get("cpp_demangle", True),
                     str_trailer=opts.get("str_trailer", ".."),
                     device_consts=device_consts(program))


def grows(m: MapRes, probes: list) -> bool:
    """Whether the tracer may allocate the map's keys as they come (where
    the kernel can: runtime-c/load/mapmem.c): a keyed aggregation of one
    value that all CPUs share (a per-CPU value comes from the kernel's
    per-CPU pool, which a burst of new keys empties in any context), not
    LRU, that only probes running in a task's context with interrupts on
    touch. Elsewhere a probe may add two new keys before the kernel's
    allocator, refilled when interrupts come back on, has one more."""
    if not (m.shared and m.keys) or "LRU" in m.bpf_type:
        return False
    for probe in probes:
        if any(getattr(n, "map", None) == m.name for n in ir.walk(probe.body)):
            ok = probe.target.provider.task_context
            if not (ok and ok(probe.target)):
                return False
    return True


def device_consts(program: ir.Program) -> list:
    """Each distinct value the tracer finds on the device, in order of first use."""
    out = []
    for probe in program.probes:
        for n in ir.walk(probe.body):
            if aggread.reads(program.maps, n):     # its CPUs counted by the tracer
                n = ir.DeviceConst(ir.NCPUS, span=n.span)
            if isinstance(n, ir.DeviceConst) and (n.kind, n.name, n.binary) not in [d[:3] for d in out]:
                out.append((n.kind, n.name, n.binary, script_line(n.span)))
    return out


def describe(res: Resources) -> str:
    """The `plyc emit --stage resources` text: stable, for humans and goldens."""
    out = [f"tracer {res.name} from {res.script}"]
    for m in res.maps:
        keys = ", ".join(f"{f.type}@{f.offset}" for f in m.keys) or "-"
        out.append(f"map {m.name} ({m.cname}): {m.bpf_type} entries={m.max_entries} "
                   f"key=[{keys}] size={m.key_size} value={m.value_ctype} size={m.value_size} "
                   f"agg={m.agg}" + (f" buckets={m.nbuckets}" if m.nbuckets else "")
                   + (" grows" if m.grow else ""))
    for e in res.events:
        args = ", ".join(f"{f.type}@{f.offset}" for f in e.fields) or "-"
        out.append(f"event {e.event.id} {e.event.kind}: [{args}] size={e.size}"
                   + (f" map={e.map.name}" if e.map else ""))
    for p in res.probes:
        prov = p.probe.target.provider
        data = prov.c_data(p.probe.target, p)[1] if prov.c_data else []
        out.append(f"probe {p.prog} line {p.line}: {p.spec} -> {prov.name} section={p.section}"
                   + "".join(f" {k}={v}" for k, v in data))
    for s in res.tp_slots:
        out.append(f"param tp_off[{s.slot}]: {s.tracepoint} field {s.field} size={s.size}")
    for i, (kind, name, binary, _) in enumerate(res.device_consts):
        out.append(f"param dconst[{i}]: {kind}" + (f" {name}" if name else "") + (f" in {binary}" if binary else ""))
    out.append(f"args={res.nargs} stack={'yes' if res.uses_stack else 'no'} "
               f"ringbuf={res.buffer_size} strsize={res.strsize}")
    return "\n".join(out) + "\n"
