"""Tracepoint fields from a kernel's BTF, for a build machine that lacks the
event (a cross build with `--btf FILE` for a device with other drivers):
`struct trace_event_raw_EVENT` is the record the kernel writes, the
format file's fields in order (`ent` its common_* fields, `__data_loc_NAME`
a `__data_loc` field NAME). Only names, sizes and types are taken: the
tracer still reads each offset from the device's format file at start-up.
An event of a class (DEFINE_EVENT) has its class's struct, whose name BTF
does not link to the event: not found here."""
from __future__ import annotations

from . import btf as B
from .tracefs import Field, TracefsError, field_type

RAW = "trace_event_raw_"
DATA_LOC = "__data_loc_"


def _fields_of(b: B.BTF, group: str, tid: int, prefix: str, base: int, out: dict) -> None:
    for m in b[tid].members:
        t = b[b.strip(m.type)]
        off = base + m.bit_offset // 8
        if m.bitfield_size or not m.name:
            continue
        if m.name == "ent" and t.kind == B.STRUCT and t.name == "trace_entry":
            _fields_of(b, group, t.id, "common_", off, out)
            continue
        name = prefix + m.name
        size = b.size(m.type)
        if t.kind == B.ARRAY and not t.nelems:
            continue                        # __data[]: where the dynamic arrays are
        if name.startswith(DATA_LOC):
            # which element type BTF does not say (a u32 here): read as text
            name = name[len(DATA_LOC):]
            ctype, decl = "__data_loc char[]", name
        elif t.kind == B.ARRAY:
            ctype, decl = b.type_name(t.type), f"{name}[{t.nelems}]"
        else:
            ctype, decl = b.type_name(m.type), name
        signed = t.kind in (B.INT, B.ENUM, B.ENUM64) and t.signed
        out[name] = Field(name, ctype, off, size, signed, field_type(group, ctype, decl, size, signed))


def event_fields(btf: B.BTF, path: str, group: str, event: str) -> dict:
    """The fields of group:event from `struct trace_event_raw_EVENT` of btf
    (read from path, for messages)."""
    tid = btf.find(B.STRUCT, RAW + event)
    if tid is None:
        raise TracefsError(f"no tracepoint {group}:{event} on the build machine, nor a struct "
                           f"{RAW}{event} in {path} (an event of a class has its class's struct, "
                           "which plyc does not find)")
    out: dict = {}
    _fields_of(btf, group, tid, "", 0, out)
    return out
