"""Codegen context (plain data) and rendering of the three generated files:
NAME.bpf.c, NAME.h and NAME.c. Templates hold file structure only."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from .. import __version__
from .. import arch
from ..aggregations import lq_top
from ..diag import Diagnostic, PlycError
from ..ir import nodes as ir_nodes
from ..span import script_line
from ..ir.report import Report
from . import aggread, cgen, ctext, loops, printers
from .cescape import c_comment, c_int, c_string, code
from .resources import Field, Resources, layout
from .templates import UnescapedText, finalize  # noqa: F401  (the templates' finalize, as tests name it)
from .templates import render as render_template


# The kernel's limit on one value of a per-CPU array (PCPU_MIN_UNIT_SIZE).
SCRATCH_SLOT_MAX = 32768
# The runtime's kinds of a user symbol (printers.rt_kind): a loader that
# names one links the user symbolizer (runtime-c/symbols/usyms.c)
USER_SYMBOLS = re.compile(r"\bPLYC_K_U(SYM|STACK)\b")
# Each output style's operations (runtime-c/plyc_style.h), which the loader
# names: a tracer links only its own style's
OUTPUT_OPS = {"ply": "plyc_output_ply", "bpftrace": "plyc_output_bpftrace", "bpftrace017": "plyc_output_bpftrace"}


@dataclass
class Generated:
    bpf_c: str
    header: str
    loader_c: str


def file_names(version: str, script: str) -> dict:
    """The version and the script's file name, as every template prints them."""
    return dict(version_c=c_string(version), version_comment=c_comment(version),
                script_c=c_string(script), script_comment=c_comment(script))


def _records(res: Resources) -> list:
    recs = []
    for m in res.maps:
        if m.key_struct:
            recs.append(dict(cname=f"{m.cname}_key", fields=m.keys, size=m.key_size))
        if m.value_ctype.endswith("_val"):
            f = [Field("v", m.info.value_type)]
            recs.append(dict(cname=f"{m.cname}_val", fields=f, size=layout(f)))
        elif m.nbuckets:
            # b: the buckets; s: the sum of the values counted (--metrics' exact _sum)
            recs.append(dict(cname=f"{m.cname}_hist", fields=[dict(decl=code(f"__u64 b[{m.nbuckets}]"), name="b",
                                                                    offset=0),
                                                               dict(decl=code("__u64 s"), name="s",
                                                                    offset=8 * m.nbuckets)],
                             size=8 * m.nbuckets + 8))
        elif m.agg == "PLYC_A_TSERIES":
            # s: bpftrace's tseries() intervals, a slot each (plyc.bpf.h)
            recs.append(dict(cname=f"{m.cname}_ts", fields=[dict(
                decl=code(f"struct plyc_ts_slot s[{m.info.params[1]}]"), name="s", offset=0)],
                size=m.value_size))
    for e in res.events:
        fields = [dict(decl=code("__u32 id"), name="id", offset=0), dict(decl=code("__u32 pad"), name="pad", offset=4)]
        fields += sorted(e.fields, key=lambda f: f.offset)
        recs.append(dict(cname=e.cname, fields=fields, size=e.size))
    for r in recs:
        r["fields"] = [f if isinstance(f, dict) else dict(decl=code(f.decl()), name=f.name, offset=f.offset)
                       for f in r["fields"]]
        r["assert_c"] = [c_string(f"{r['cname']}.{f['name']}") for f in r["fields"]]
        r["size_c"] = c_string(f"{r['cname']} size")
    return recs


def scratch_slot_limit(res: Resources, p, size: int):
    """A per-CPU array's value is at most 32 KiB (the kernel's
    PCPU_MIN_UNIT_SIZE): a probe whose temporaries need more can't load."""
    if size > SCRATCH_SLOT_MAX:
        raise PlycError(Diagnostic(
            f"this probe needs {size} bytes of temporaries (strings, buffers, keys) at once, more than "
            f"the {SCRATCH_SLOT_MAX} a BPF per-CPU slot holds", p.probe.spec.span,
            note="use shorter strings (str(p, N), --strsize N), or fewer $variables holding them"), res.script)


def event_slot_limit(res: Resources) -> int:
    """The largest output record: without a ring buffer (before 5.8) it is
    built in a per-CPU slot (plyc.bpf.h: plyc_evslot, 16 bytes of header),
    so it must fit in 32 KiB on every kernel."""
    largest = max(res.events, key=lambda e: e.size, default=None)
    if largest is None:
        return 8
    if largest.size + 16 > SCRATCH_SLOT_MAX:
        raise PlycError(Diagnostic(
            f"this {largest.event.kind} sends a record of {largest.size} bytes, more than the "
            f"{SCRATCH_SLOT_MAX - 16} an output record can have (kernels without a BPF ring buffer "
            f"build it in a per-CPU slot)", largest.event.span,
            note="print fewer or shorter strings and buffers (str(p, N), --strsize N)"), res.script)
    return ctext.words(largest.size)


# The tracer's -p PID (plyc_params.pid_filter, 0 without it) as a predicate
# on a program's events (Program.pid_filter, Provider.pid_filtered). The
# PID is the user's, from the tracer's PID namespace: compared with the
# task's id there (the initial namespace's where the tracer runs in it).
PID_FILTER = (
    "if (plyc_params.pid_filter && (__u32)(plyc_ns_pid_tgid() >> 32) != (__u32)plyc_params.pid_filter)",
    "\treturn 0;",
)


def bpf_context(program: ir_nodes.Program, res: Resources, lines: list) -> dict:
    probes = []
    # Each probe with temporaries too large for the BPF stack has a slot of
    # its own in the per-CPU array plyc_scratch (plyc/ir/opt/temps.py).
    scratch = []
    for p in res.probes:
        # A kprobe and its fentry/fexit twin (one of which loads) share one
        # body, so its scratch slot and struct too.
        gen = cgen.generate(p.probe, res, p.fentry, lines)
        struct, slot = f"{p.prog}_scratch", len(scratch)
        if gen.uses_scratch:
            scratch_slot_limit(res, p, gen.scratch_size())
            scratch.append(dict(struct=struct, member=p.prog, decls=[code(d) for d in gen.scratch_decls()],
                                line=p.line, spec=c_comment(p.spec)))
        body = gen.finish(struct, slot)
        callbacks = [dict(cb, map=c_comment(cb["map"]), fields=[code(f) for f in cb["fields"]],
                          body=[code(line) for line in cb["body"]])
                     for cb in gen.callback_functions(struct)]
        twin = dict(prog=p.twin, section=p.fentry["section"], section_c=c_string(p.fentry["section"]),
                    func=p.fentry["func"]) if p.fentry else None
        probes.append(dict(prog=p.prog, section_c=c_string(p.section), line=p.line, spec=c_comment(p.spec),
                           ctx_decl=code(p.probe.provider.ctx_decl), body=[code(text) for text, _ in body],
                           # a pinned iterator runs after the tracer ended, when it is read
                           stoppable=not p.probe.provider.runs_once and not p.probe.target.extra.get("pin"), twin=twin,
                           prologue=[code(x) for x in (p.probe.provider.prologue_for(p.probe.target)
                                                       if p.probe.provider.prologue_for else p.probe.provider.prologue)]
                           + ([code(x) for x in PID_FILTER] if program.pid_filter and p.probe.provider.pid_filtered else []),
                           body_name=p.body, callbacks=callbacks))
    maps = [dict(name=c_comment(m.name), cname=m.cname, bpf_type=m.bpf_type, max_entries=m.max_entries,
                 key_ctype=code(m.key_ctype), value_ctype=code(m.value_ctype))
            for m in res.maps]
    zero = max([m.value_size for m in res.maps] + [8])
    # A script that prints nothing gets the smallest ring buffer there is.
    buffer_size = res.buffer_size if res.events else 4096
    return dict(**file_names(__version__, res.script), name=res.name, buffer_size=buffer_size,
                event_max=event_slot_limit(res), event_slots=max([p.probe.index + 1 for p in res.probes] + [1]),
                nstats=1 + len(res.maps), zero_words=(zero + 7) // 8, uses_stack=res.uses_stack,
                stack_entries=res.stack_entries,
                stack_limits=sorted({n for p in res.probes for n in p.probe.stack_limits}), maps=maps, probes=probes, scratch=scratch,
                loop_caps=len(res.loop_caps),
                bpf_defines=sorted(({p.probe.provider.bpf_define for p in res.probes} - {""})
                                   | {d for p in res.probes for d in p.probe.bpf_defines}
                                   | {"PLYC_TP_GLOB_FIELDS" for p in res.probes
                                      if p.probe.target.glob and p.probe.tp_fields}
                                   | ({"PLYC_AGG_READ"} if aggread.needs(res) else set())),
                license=c_string(program.license),
                c_functions=[code(f"{ret} {name}({', '.join(args) or 'void'})") for name, ret, args in program.c_functions],
                kernel_types=[code(t) for t in program.ktypes.definitions(arch.get(program.arch).header_types)]
                if program.ktypes and (program.ktypes.uses or program.ktypes.ksyms) else [])


def linemap(bpf_c: str, script: str) -> list:
    """For each line of the BPF C, the script line it came from (0: none)."""
    # A statement's comment, indented (a probe's, at the margin, is not one).
    marker = re.compile(r"\t+/\* " + re.escape(c_comment(script)) + r":(\d+)(?::| |\*)")
    out, current = [], 0
    for text in bpf_c.splitlines():
        m = marker.match(text)
        if m:
            current = int(m.group(1))
        elif text.startswith("}"):
            current = 0
        out.append(current)
    return out


def report_context(res: Resources, report: Report) -> dict:
    """The periodic report's tables (runtime-c/plyc_report.h)."""
    names = [m.name for m in res.maps]
    sections = [dict(map=names.index(s.map), style=f"PLYC_REPORT_{s.style.upper()}",
                     header=c_string(s.header),
                     key_labels=[c_string(k) for k in s.key_labels],
                     keyless_row=c_string(s.keyless_row) if s.keyless_row else "NULL")
                for s in report.sections]
    return dict(sections=sections, interval=report.interval, count=report.count, top=report.top,
                cumulative=int(report.cumulative), duration=float(report.duration))


def probe_where(res: Resources, p, origin=None) -> tuple:
    """How the tracer names a probe: script:line and the spec as written,
    or what a front end that generated the script says it came from."""
    where = origin(p.line, p.spec) if origin else None
    span = p.probe.spec.span
    if not where and span.origin is not None:       # a probe of an imported file
        where = (f"{span.origin.tracer_name}:{span.line}", p.spec)
    return where or (f"{res.script}:{p.line}", p.spec)


def label_names(names: list) -> list:
    """Prometheus label names for a map's keys (runtime-c/metrics/metrics.c): the
    script's name of each key where it is a valid label name, unique, not
    reserved (`le`, `__*`, the `kI` of other keys); else kI."""
    out = []
    for i, n in enumerate(names):
        ok = (n and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) and not n.startswith("__")
              and n != "le" and not re.fullmatch(r"k\d+", n) and names.count(n) == 1)
        out.append(n if ok else f"k{i}")
    return out


def probe_data(p) -> tuple:
    """The probe's provider data: its C struct and designated initializers."""
    prov = p.probe.provider
    return prov.c_data(p.probe.target, p) if prov.c_data else (None, [])


def numeric_args(bpf_c: str, nargs: int, wide=()) -> list:
    """1 for each $N the programs read as a number (cgen's sc_Param is the
    one writer of plyc_params.arg_num), which the tracer parses strictly;
    2 for one that may be beyond INT64_MAX (wide: Program.args_wide)."""
    used = {int(i) for i in re.findall(r"plyc_params\.arg_num\[(\d+)\]", bpf_c)}
    return [(2 if i + 1 in wide else 1) if i in used else 0 for i in range(nargs)] if used else []


def loader_context(res: Resources, bpf_c: str, report: Optional[Report] = None, origin=None,
                   wide=()) -> dict:
    maps = []
    for m in res.maps:
        vt = m.info.value_type
        names = m.info.key_names or []
        if len(names) != len(m.keys):
            names = [None] * len(m.keys)
        maps.append(dict(
            key_names=code(", ".join(c_string(n) for n in label_names(names))),
            name_c=c_string(m.name), cname=m.cname, agg=m.agg, key_size=m.key_size, value_size=m.value_size,
            percpu=int("PERCPU" in m.bpf_type), grow=int(m.grow), nbuckets=m.nbuckets,
            # min, the last bucket's lower bound (the tracer's lq_max), step
            lq=[code(c_int(v)) for v in ((m.info.params[0], lq_top(m.info.params), m.info.params[2])
                                         if m.agg == "PLYC_A_LQUANTIZE" else (0, 0, 0))],
            ts=m.info.params if m.agg == "PLYC_A_TSERIES" else (0, 0, 0),
            key_fields=[dict(type=code(printers.type_init(f.type, pad, in_hex)), offset=f.offset)
                        for f, pad, in_hex in zip(m.keys, m.info.key_widths or [0] * len(m.keys),
                                               m.info.key_hex or [False] * len(m.keys))],
            value=code(printers.type_init(vt if vt.kind != "dataloc" else replace(vt, kind="int"),
                                          m.info.value_width, m.info.value_hex))))
    probes = [dict(prog=p.prog, line=p.line, provider=p.probe.provider.c_provider,
                   where_c=c_string(where), spec_c=c_string(spec),
                   data_struct=struct, data=[(name, code(value)) for name, value in fields])
              for p in res.probes for where, spec in [probe_where(res, p, origin)]
              for struct, fields in [probe_data(p)]]
    events = [dict(id=e.event.id, cname=e.cname, kind=c_comment(e.event.kind), line=script_line(e.event.span),
                   body=[code(line) for line in printers.event_body(e, res)]) for e in res.events]
    lm = linemap(bpf_c, res.script)
    rows = [code(" ".join(f"{n}," for n in lm[i:i + 16])) for i in range(0, len(lm), 16)] or [code("0,")]
    slots = [dict(unit=s.unit, field_c=c_string(s.field), size=s.size, is_int=int(s.is_int), bytes=int(s.bytes),
                  signed=int(s.signed)) for s in res.tp_slots]
    needs = [dict(n, since_c=c_string(n["since"])) for n in loops.needs(res) + aggread.needs(res)]
    return dict(**file_names(__version__, res.script), name=res.name, maps=maps, probes=probes,
                slots=slots, events=events, nargs=res.nargs, linemap=rows,
                numeric_args=code(", ".join(map(str, numeric_args(bpf_c, res.nargs, wide)))),
                dconsts=[dict(kind=f"PLYC_DC_{kind.upper()}", name=c_string(name),
                              where=c_string(f"{res.script}:{line}"),
                              binary=c_string(binary) if binary else "NULL")
                         for kind, name, binary, line in res.device_consts],
                report=report_context(res, report) if report else None, needs=needs,
                loop_lines=res.loop_caps,
                loop_lines_c=code(", ".join(str(int(n)) for n in res.loop_caps)), no_exit_maps=int(not res.print_maps_on_exit),
                no_cpp_demangle=int(not res.cpp_demangle),
                str_trailer=c_string(res.str_trailer.encode()),
                default_pid=report.default_pid if report else 0)


def render(program: ir_nodes.Program, res: Resources, origin=None, style: str = "ply",
           source: str = "") -> Generated:
    """source: the script's text, whose lines the BPF C's comments quote."""
    bpf_c = render_template("prog.bpf.c.j2", **bpf_context(program, res, source.splitlines()))
    guard = re.sub(r"\W", "_", res.name).upper()
    header = render_template(
        "shared.h.j2", **file_names(__version__, res.script), guard=guard, records=_records(res),
        nargs_dim=max(1, res.nargs), nopts_dim=max(1, len(program.options)),
        ndconst_dim=max(1, len(res.device_consts)), nslots_dim=max(1, len(res.tp_slots)), strsize=res.strsize,
        nprobes=max(1, len(res.probes)))
    loader = dict(loader_context(res, bpf_c, program.report, origin, program.args_wide),
        style=f"PLYC_STYLE_{style.upper()}",
        output_ops=OUTPUT_OPS[style],
        opts=[dict(name=c_string(name), desc=c_string(desc), kind=f"PLYC_OPT_{kind.upper()}", dflt=c_string(dflt))
              for name, kind, dflt, desc in program.options],
        time_formats=[c_string(f) for f in program.time_formats],
        enums=[[(code(f"(int64_t){c_int(int(v))}"), c_string(n)) for v, n in names] for names in program.enums],
        args_optional=int(program.args_optional),
        no_target_warning=c_string(program.no_target_warning.encode()) if program.no_target_warning else "NULL",
        arg_bounds=[dict(index=n, lo=lo, hi=hi, line=line, col=col, what=c_string(what))
                    for n, lo, hi, line, col, what in program.arg_bounds],
        missing_probes=code("PLYC_MISSING_" + program.missing_probes.upper()))
    loader_c = render_template("loader.c.j2", **loader, user_symbols=False)
    if USER_SYMBOLS.search(loader_c):
        # every value the runtime prints has its type in the loader: one
        # of a user symbol's links usyms.c (and the demangler), else left out
        loader_c = render_template("loader.c.j2", **dict(loader, user_symbols=True))
    return Generated(bpf_c, header, loader_c)
