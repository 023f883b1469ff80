"""The kernel's fixed limits that a script's Resources can be held to before
any C is compiled, so that a tracer that builds also loads and attaches
(docs/language.md, "Kernel limits"):
- maps per BPF program: the verifier's MAX_USED_MAPS (64), counting every
  map a program's code names as codegen emits it: the script's maps, plyc's
  own (ring buffer, statistics, scratch, stacks, ...) and the global data
  sections (.rodata, .bss), each of which libbpf makes a map;
- BPF programs on one tracepoint: BPF_TRACE_MAX_PROGS (64, every tracer's
  together), kernel/trace/bpf_trace.c;
- fentry/fexit programs on one kernel function: BPF_MAX_TRAMP_LINKS (38 on
  x86_64 and arm64), include/linux/bpf.h. A kprobe past it keeps its kprobe
  (no fentry twin, fit()); a kfunc, which has no other way in, is refused.
Instructions and the 512-byte stack are the compiler's and the verifier's
to find (docs/language.md)."""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..diag import Diagnostic, PlycError
from ..ir import nodes as ir
from .resources import ProbeRes, Resources

MAX_USED_MAPS = 64            # include/linux/bpf_verifier.h
BPF_TRACE_MAX_PROGS = 64      # kernel/trace/bpf_trace.c
BPF_MAX_TRAMP_LINKS = 38      # include/linux/bpf.h (s390x: 27, not a plyc target)


def _has(probe: ir.Probe, kind) -> bool:
    return any(isinstance(n, kind) for n in ir.walk(probe.body))


# plyc's own maps, and the data sections libbpf makes maps of, with when a
# program's code names them (runtime-c/bpf/plyc.bpf.h, templates/prog.bpf.c.j2).
# Where the generated code may or may not name one, it is counted: the count
# is never below what the kernel finds (tests/test_limits.py holds it to the
# compiled objects' relocations).
RUNTIME_MAPS: list = [
    (".rodata", lambda p: True),               # plyc_params, plyc_has_ringbuf
    (".bss", lambda p: True),                  # plyc_stopped, plyc_zero
    ("plyc_stats", lambda p: True),            # lost events, full maps
    ("plyc_events", lambda p: _has(p, ir.EmitEvent)),
    ("plyc_evbuf", lambda p: _has(p, ir.EmitEvent)),
    ("plyc_scratch", lambda p: any(t.scratch for t in p.temps or [])),
    ("plyc_stacks", lambda p: p.uses_stack),
    ("plyc_loopcap", lambda p: _has(p, ir.While)),
    ("plyc_tp_names", lambda p: "PLYC_TP_NAMES" in p.bpf_defines),
    ("plyc_tp_offs", lambda p: p.target.glob and bool(p.tp_fields)),
    # libbpf's usdt.bpf.h: its spec and address maps, and LINUX_HAS_BPF_COOKIE (.kconfig)
    ("__bpf_usdt_specs", lambda p: p.provider.bpf_define == "PLYC_USDT"),
    ("__bpf_usdt_ip_to_spec_id", lambda p: p.provider.bpf_define == "PLYC_USDT"),
    (".kconfig", lambda p: p.provider.bpf_define == "PLYC_USDT"),
]


def script_maps(probe: ir.Probe) -> list:
    """The script's maps the probe's code names, in order of first use:
    [(name, span of that use)]."""
    seen: dict = {}
    for n in ir.walk(probe.body):
        name = getattr(n, "map", None)
        if isinstance(n, ir.Call) and n.func.name == "len":
            name = n.args[0].value.decode()
        if isinstance(name, str) and name not in seen:
            seen[name] = n.span
    return list(seen.items())


def program_maps(p: ProbeRes) -> tuple:
    """(the script's maps [(name, span)], plyc's [names]) that probe p's
    BPF program names; its fentry twin shares its body, so the same."""
    probe = p.probe
    own = [name for name, used in RUNTIME_MAPS if used(probe)]
    own += [f"plyc_stacks_{n}" for n in sorted(probe.stack_limits) if n not in (0, 127)]
    return script_maps(probe), own


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _where(p: ProbeRes) -> str:
    return f"{p.spec} (line {p.line})"


def check_maps(res: Resources) -> list:
    out = []
    for p in res.probes:
        mine, own = program_maps(p)
        total = len(mine) + len(own)
        if total <= MAX_USED_MAPS:
            continue
        room = MAX_USED_MAPS - len(own)
        name, span = mine[room]
        out.append(Diagnostic(
            f"probe {_where(p)} uses {total} BPF maps, more than the {MAX_USED_MAPS} the kernel lets one "
            f"BPF program use (MAX_USED_MAPS); {name}, here, is its {ordinal(room + 1)} of the script's maps, "
            f"and plyc's own code needs {len(own)} ({', '.join(own)})", span or p.probe.spec.span,
            note=f"split the probe into several on the same event, each using at most {room} of the "
                 "script's maps"))
    return out


def check_attach_points(res: Resources) -> list:
    """BPF_TRACE_MAX_PROGS: every probe on one tracepoint is a program of its
    own in the tracepoint's array, and the 65th attach fails (E2BIG)."""
    out, counts = [], {}
    for p in res.probes:
        events = p.probe.provider.shared_events
        if events is None:
            continue
        for event in events(p.probe.target):
            counts[event] = counts.get(event, 0) + 1
            if counts[event] == BPF_TRACE_MAX_PROGS + 1:
                group, name = event.split("/", 1)
                out.append(Diagnostic(
                    f"probe {_where(p)} is the {ordinal(BPF_TRACE_MAX_PROGS + 1)} on tracepoint {group}:{name}; the "
                    f"kernel runs at most {BPF_TRACE_MAX_PROGS} BPF programs on one tracepoint "
                    "(BPF_TRACE_MAX_PROGS, every tracer's together)", p.probe.spec.span,
                    note="put the bodies of probes on the same tracepoint together in fewer probes"))
                break
    return out


def _trampoline(p: ProbeRes) -> Optional[str]:
    """The kernel function whose trampoline p's program joins, if any: a
    kfunc's exact function, a kprobe's fentry twin's."""
    t = p.probe.target
    if t.provider.trampoline is not None:
        return t.provider.trampoline(t)
    if p.fentry:
        return f"vmlinux:{p.fentry['func']}"
    return None


def fit(res: Resources) -> list:
    """BPF_MAX_TRAMP_LINKS: the fentry/fexit programs of one kernel function
    share its trampoline. Probes that can only run so (kfunc, a kprobe
    calling path()) take their places first; a kprobe's twin past the limit
    is dropped, so that probe runs as a kprobe (no such limit). Returns the
    errors for what can't fit."""
    used: dict = {}
    out = []
    must = [p for p in res.probes if _trampoline(p) and (not p.fentry or p.probe.needs_fentry)]
    may = [p for p in res.probes if _trampoline(p) and p.fentry and not p.probe.needs_fentry]
    for p in must:
        func = _trampoline(p)
        used[func] = used.get(func, 0) + 1
        if used[func] == BPF_MAX_TRAMP_LINKS + 1:
            out.append(Diagnostic(
                f"probe {_where(p)} is the {ordinal(BPF_MAX_TRAMP_LINKS + 1)} fentry/fexit program on "
                f"{func.split(':', 1)[1]}; the kernel attaches at most {BPF_MAX_TRAMP_LINKS} to one "
                "function (BPF_MAX_TRAMP_LINKS, every tracer's together)", p.probe.spec.span,
                note="put the bodies of probes on the same function together in fewer probes"))
    for p in may:
        func = _trampoline(p)
        if used.get(func, 0) >= BPF_MAX_TRAMP_LINKS:
            p.fentry, p.twin, p.body = None, "", ""
            continue
        used[func] = used.get(func, 0) + 1
    return out


CHECKS: list[Callable[[Resources], list]] = [check_maps, check_attach_points, fit]


def check(res: Resources, filename: str, source: str) -> None:
    """Every limit, all errors at once (a located PlycError)."""
    diags = [d for c in CHECKS for d in c(res)]
    if diags:
        raise PlycError(diags, filename, source)



BPF_STACK = 512               # bytes of stack a BPF program has (MAX_BPF_STACK)
_STACK = re.compile(r"\.bpf\.c:(\d+):\d+: error: Looks like the BPF stack limit of 512 bytes is exceeded")
_FUNC = re.compile(r"^(?:static __always_inline int|int|static long) (\w+)\(")


def stack_error(message: str, bpf_c: str, res: Resources) -> list:
    """clang's "BPF stack limit of 512 bytes is exceeded" (it spills what
    its registers can't hold, which only it knows): a located error at each
    probe it is in, named, not a compiler message about generated C."""
    lines, out, seen = bpf_c.splitlines(), [], set()
    for m in _STACK.finditer(message):
        func = next((f.group(1) for text in reversed(lines[:int(m.group(1))]) for f in [_FUNC.match(text)] if f),
                    None)
        owners = [p for p in res.probes if func and func.startswith(tuple(n for n in (p.prog, p.body, p.twin) if n))]
        if not owners:
            continue
        p = max(owners, key=lambda p: len(p.prog))
        if p.prog in seen:
            continue
        seen.add(p.prog)
        out.append(Diagnostic(
            f"probe {_where(p)} needs more than the {BPF_STACK} bytes of stack a BPF program has: it holds "
            "more values at once ($variables, temporaries) than the BPF registers and stack take",
            p.probe.spec.span, note="hold fewer values at once (fewer $variables live together), or split "
                                    "the probe's work over several probes on the same event"))
    return out
