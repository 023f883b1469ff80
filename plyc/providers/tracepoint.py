"""tracepoint:group/event — static kernel tracepoints. `data->field` is read
at an offset the tracer takes from the device's format file at start-up."""
from __future__ import annotations

import re

from .. import tp_btf, tracefs
from .. import types as T
from ..diag import error
from ..ir import variables as V
from .base import Fields, Provider, Target, Var, c_str, is_glob, spec_error



def fields(spec) -> Fields:
    """`group/event` or `group:event`."""
    group, sep, event = spec.arg.partition("/")
    if not sep:
        group, sep, event = spec.arg.partition(":")
    if not sep:
        raise spec_error(spec, f"tracepoint '{spec.arg}' is not group/event",
                         "e.g. tracepoint:sched/sched_switch")
    return Fields(group=group, function=event)


def make(spec, f: Fields) -> Target:
    arg, group, event = spec.arg, f.group, f.function
    if not group or not event:
        raise spec_error(spec, f"tracepoint '{arg}' is not group/event",
                         "e.g. tracepoint:sched/sched_switch")
    if is_glob(group):
        raise spec_error(spec, "a tracepoint group can't be a glob; only the event can")
    # Names as tracefs has them (which also keeps `..` out of the format path).
    if not re.fullmatch(r"\w+", group) or not re.fullmatch(r"[\w*?\[\]!^-]+", event):
        raise spec_error(spec, f"tracepoint '{arg}' is not group/event",
                         "e.g. tracepoint:sched/sched_switch")
    return Target(PROVIDER, spec, f"{group}/{event}", glob=is_glob(event))


def c_data(t: Target, p):
    names = "PLYC_TP_NAMES" in p.probe.bpf_defines     # `probe` in a glob (bpftrace's)
    glob_fields = t.glob and bool(p.probe.tp_fields)
    return "plyc_tracepoint_data", [("target", c_str(t.target)), ("names", str(int(names))),
                                    ("glob_fields", str(int(glob_fields)))]


def events(t: Target) -> list:
    """The events a target attaches to, as the build machine lists them for
    a glob (none known: the glob itself): each runs at most
    BPF_TRACE_MAX_PROGS programs (codegen/limits.py)."""
    if not t.glob:
        return [t.target]
    group, pattern = t.target.split("/", 1)
    try:
        return [f"{group}/{e}" for e in tracefs.matching_events(group, pattern)] or [t.target]
    except tracefs.TracefsError:
        return [t.target]


def glob_member(target: Target, name: str, span):
    """A field of every event a glob matches on the build machine, of one
    type in all; the device's tracer finds it in each event it attaches
    (its offset may differ: sys_enter_execve's filename is at 16,
    sys_enter_execveat's at 24)."""
    group, pattern = target.target.split("/", 1)
    try:
        events = tracefs.matching_events(group, pattern)
        found = [(event, tracefs.event_fields(group, event)) for event in events]
    except tracefs.TracefsError as err:
        raise error(str(err), target.spec.span) from None
    if not found:
        raise error(f"no tracepoint on the build machine matches {group}:{pattern}", target.spec.span)
    first = None
    for event, fields in found:
        if name not in fields:
            raise error(f"tracepoint {group}:{event}, which {group}:{pattern} matches, has no field "
                        f"'{name}'", span)
        if first is None:
            first = (event, fields[name])
        elif fields[name].type != first[1].type:
            raise error(f"field '{name}' is {first[1].ctype} in {group}:{first[0]} and "
                        f"{fields[name].ctype} in {group}:{event}", span)
    return first[1]


def member(target: Target, name: str, span, ktypes=None):
    """Type of data->name on the build machine; the offset comes from the
    device. With `--btf FILE` (ktypes.path), an event the build machine
    lacks is typed from FILE's struct trace_event_raw_EVENT (tp_btf.py)."""
    if target.glob:
        return glob_member(target, name, span)
    group, event = target.target.split("/", 1)
    try:
        fields = tracefs.event_fields(group, event)
    except tracefs.TracefsError as err:
        if ktypes is None or ktypes.path is None:
            raise error(str(err), target.spec.span) from None
        try:
            fields = tp_btf.event_fields(ktypes.btf, ktypes.path, group, event)
        except tracefs.TracefsError as err2:
            raise error(str(err2), target.spec.span) from None
    if name not in fields:
        known = ", ".join(f for f in fields if not f.startswith("common_"))
        raise error(f"tracepoint {group}:{event} has no field '{name}'", span,
                    f"its fields are: {known}" if known else None)
    return fields[name]


PROVIDER = Provider(
    name="tracepoint", pid_filtered=True,
    aliases=("t",),
    fields=fields,
    make=make,
    spell=lambda f: f"{f.group}:{f.function}",
    section=lambda t: "tracepoint",
    ctx_decl="void *ctx",
    variables=(Var("data", T.Type("ctx", 8, pointee="fields"), V.CTX,
                   doc="the event's fields: data->field"),),
    member=member,
    c_provider="plyc_provider_tracepoint",
    example="sched/sched_switch",
    c_data=c_data,
    name_last=True,
    names_matches=True,
    shared_events=events,
    # a system call's entry and exit run in its task, interrupts on
    task_context=lambda t: t.target.split("/", 1)[0] in ("syscalls", "raw_syscalls"),
    doc="static kernel tracepoints",
)
