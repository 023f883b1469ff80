"""Tracepoint fields from a kernel's BTF, for a build machine that lacks the
event (a cross build with `--btf FILE` for a device with other drivers):
`struct trace_event_raw_EVENT` is the record the kernel writes, the
format file's fields in order (`ent` its common_* fields, `__data_loc_NAME`
a `__data_loc` field NAME). Only names, sizes and types are taken: the
tracer still reads each offset from the device's format file at start-up.
An event of a class (DEFINE_EVENT) has its class's struct, which BTF does
not link to the event: the class is the one whose `__bpf_trace_CLASS`
takes the argument types of the event's `btf_trace_EVENT` and has a
`trace_event_raw_CLASS` (as the rawtracepoint provider names arguments);
none or several such: not found."""
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
        out[name] = Field(name, ctype, off, size, signed, field_type(group, ctype, decl, size, signed), decl)


def _arg_types(b: B.BTF, proto: B.BType) -> tuple:
    return tuple(t for _, t in proto.members)


def _class_of(b: B.BTF, event: str):
    """The struct id of the class of an event defined by DEFINE_EVENT, or None."""
    tid = b.find(B.TYPEDEF, f"btf_trace_{event}")
    ptr = b[b[tid].type] if tid is not None else None
    if ptr is None or ptr.kind != B.PTR or b[ptr.type].kind != B.FUNC_PROTO:
        return None
    want = _arg_types(b, b[ptr.type])
    prefix = "__bpf_trace_"
    found = {b.find(B.STRUCT, RAW + t.name[len(prefix):]) for t in b.types[1:]
             if t.kind == B.FUNC and t.name.startswith(prefix) and _arg_types(b, b[t.type]) == want}
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def event_fields(btf: B.BTF, path: str, group: str, event: str) -> dict:
    """The fields of group:event from `struct trace_event_raw_EVENT` (or its
    class's) of btf (read from path, for messages)."""
    tid = btf.find(B.STRUCT, RAW + event)
    if tid is None:
        tid = _class_of(btf, event)
    if tid is None:
        raise TracefsError(f"no tracepoint {group}:{event} on the build machine, nor a struct "
                           f"{RAW}{event} in {path}, nor one of a class of events whose "
                           f"__bpf_trace_CLASS takes btf_trace_{event}'s arguments")
    out: dict = {}
    _fields_of(btf, group, tid, "", 0, out)
    return out
