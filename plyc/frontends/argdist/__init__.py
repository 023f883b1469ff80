"""bcc argdist's specifiers as a plyc front end: its command line (parsed by
`plyc argdist`, plyc/commands/argdist.py) -> core IR (lower_args).

The specifiers lower straight to the core IR (plyc/frontends/argdist/lower.py),
with the core's periodic report (plyc/ir/report.py) asked for: the tracer
prints argdist's tables every interval instead of dumping its maps at exit.
Errors, whether found in a specifier or by the core's passes, are shown under
the specifier the user typed: `-H #2:14: error: ...`, the specifier, a caret
(an IR span's line is the specifier's number, its columns are offsets in it)."""
from __future__ import annotations

import math
import re
from typing import Optional

from ... import bounds
from ...diag import Diagnostic, PlycError
from ...ir import passes
from ...ir.nodes import Span
from ...ir.report import Report
from ...sema import looks
from .ctypes import CTypeError, header_problem, shown_name
from .lower import Context, Lowered, SpecErrors, lower
from .spec import SpecError, parse


def check_bounds(args):
    """Every size and count option in its range (plyc/bounds.py)."""
    for option, name, limits in (("-z", "string_size", bounds.STRSIZE), ("-i", "interval", bounds.INTERVAL),
                                 ("-n", "count", bounds.COUNT), ("-T", "top", bounds.COUNT),
                                 ("-p", "pid", bounds.PID), ("-t", "tid", bounds.PID)):
        value = getattr(args, name, None)
        problem = bounds.check(option, value, limits) if value is not None else None
        if problem:
            raise SpecError(problem)
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise SpecError(f"-d must be a positive number of seconds, not {args.duration}")
    for name in args.include or ():
        problem = header_problem(name)
        if problem:
            raise SpecError(f"-I {shown_name(name)}: {problem}")


def lower_args(args) -> tuple:
    specs, errors = [], []
    for option, dest, kind in (("-C", "countspecifier", "freq"), ("-H", "histspecifier", "hist")):
        for n, raw in enumerate(getattr(args, dest) or [], 1):
            try:
                specs.append(parse(raw, kind, option, n))
            except SpecError as err:
                errors.append(err)
    if errors:
        raise errors[0] if len(errors) == 1 else SpecErrors(errors)
    if not specs:
        raise SpecError("at least one specifier is required (-C or -H)")
    check_bounds(args)
    ctx = Context(getattr(args, "target", "x86_64"), getattr(args, "sysroot", None), args.btf,
                  tuple(args.include or ()), getattr(args, "kernel_headers", None),
                  bool(getattr(args, "verbose", False)), " ".join(s.raw for s in specs))
    if ctx.kernel_headers:
        try:
            ctx.tree()
        except CTypeError as err:
            raise SpecError(str(err), note=err.note) from None
    lowered = lower(specs, strsize=args.string_size, tid=args.tid, ctx=ctx)
    try:
        missing = ctx.missing_includes()
    except CTypeError as err:
        raise SpecError(str(err), note=err.note) from None
    lowered.warnings = [f"-I {h}: no such header (nothing in the specifiers needed it: kernel types come "
                        "from BTF)" for h in missing]
    report = Report(args.interval, tuple(lowered.sections), count=args.count or 0,
                    duration=float(args.duration or 0), top=args.top or 0, cumulative=args.cumulative,
                    default_pid=args.pid or 0)
    lowered.program.report = report
    lowered.program.style = "ply"     # the report prints argdist's tables; anything else, as ply
    try:
        passes.run(passes.CORE, lowered.program)
    except PlycError as err:
        raise SpecErrors([spec_error(d, lowered) for d in err.diags]) from None
    looks.attach(lowered.program)      # anything printed as ply prints it (pid's column)
    return lowered, report


# --- errors, shown under the specifier -------------------------------------------------

def render_at(spec, start: Optional[int], end: Optional[int], message: str, note: Optional[str] = None) -> str:
    """`plyc argdist: -H #2:14: error: message`, the specifier, a caret
    under [start, end)."""
    if spec is None:
        text = f"plyc argdist: error: {message}"
        return text + (f"\nnote: {note}" if note else "")
    raw = spec.raw
    if start is None or start < 0:
        start, end = 0, len(raw)
    start = min(start, len(raw))
    end = max(start + 1, min(end if end is not None else start + 1, len(raw)))
    line = raw.count("\n", 0, start) + 1
    lines = raw.split("\n")
    line_start = raw.rfind("\n", 0, start) + 1
    col = start - line_start + 1
    end_col = min(end, line_start + len(lines[line - 1])) - line_start + 1
    d = Diagnostic(message, Span(line, col, line, max(end_col, col + 1)), note=note)
    text = d.render_lines(spec.name, lines)
    # One-line specifiers need no line number: "-H #2:14:", not "-H #2:1:14:".
    if len(lines) == 1:
        text = text.replace(f"{spec.name}:1:{col}:", f"{spec.name}:{col}:", 1)
    return "plyc argdist: " + text


def render_spec_error(err: SpecError) -> str:
    errs = err.errors if isinstance(err, SpecErrors) else [err]
    return "\n".join(render_at(e.spec, e.start, e.end, e.message, e.note) for e in errs)


def probe_origin(lowered: Lowered):
    """The specifier a probe came from (its span's line), as the tracer
    names it in its messages: ("-C #1", the specifier as typed)."""
    def origin(line: int, spec: str) -> Optional[tuple]:
        found = lowered.spec_at(line)
        return (found.name, found.raw) if found is not None else None
    return origin


def spec_error(d: Diagnostic, lowered: Lowered) -> SpecError:
    """A diagnostic of the core's, on the specifier its span points into."""
    spec = lowered.spec_at(d.span.line) if d.span is not None else None
    if spec is None:
        return SpecError(d.message, note=d.note)
    end = d.span.end_col - 1 if d.span.end_line == d.span.line else len(spec.raw)
    return SpecError(d.message, spec, d.span.col - 1, end, d.note)


def render_plyc_error(err: PlycError, lowered: Lowered) -> str:
    return "\n".join(render_spec_error(spec_error(d, lowered)) for d in err.diags)


def locate_lines(message: str, lowered: Optional[Lowered]) -> str:
    """`argdist:LINE:` (a compiler message about the C of a statement) as
    the specifier that statement came from."""
    if lowered is None:
        return message

    def spec_of(m):
        spec = lowered.spec_at(int(m.group(1)))
        return f"{spec.name}:" if spec is not None else m.group(0)
    return re.sub(r"argdist:(\d+):", spec_of, message)
