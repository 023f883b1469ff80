"""The C of the IR's loops (ir.While, ir.ForMap, ir.Break, ir.Continue),
for cgen.FuncGen.

A While is a C `for` bounded by a counter (ir.LOOP_CAP): the verifier
(Linux 5.3+) follows a loop only when it sees it end, and a counter makes
every loop end, whatever its condition reads. A loop stopped by the cap
is counted (plyc_loopcap), and the tracer warns at exit, naming its line.

A ForMap's body runs in a callback of bpf_for_each_map_elem (Linux 5.13),
a C function of its own: it reaches the probe's state through a context
struct on the probe's stack. The struct carries the probe's context
pointer, its scratch slot and a copy of each scalar $local the body uses,
copied in
before the call and back after it (and by the callback at each of its
exits), so the body reads and sets them as the probe's own code does.
String and buffer locals of such a probe live in its scratch slot, which
both functions address. Break and continue in the callback return 1 and
0, as the helper reads them; a return in it returns 1 with the
context's `ret` set, and the caller returns in its turn."""
from __future__ import annotations

import re

from ..ir import nodes as ir
from ..ir.nodes import script_line
from . import aggread
from . import ctext as C
from .cescape import c_string

# Placeholders that cgen's finish() resolves once it knows whether the
# probe has a scratch slot and what its C type is.
SCRATCH_PASS = "\0scratch_pass "       # + the context struct's name: hand the slot over
SCRATCH_DECL = "\0scratch_decl"        # the callback's pointer to the slot


_ESCAPES = {".": "_d", "@": "_a", ":": "_c", "'": "_p", "_": "__"}


def local_c(name: str) -> str:
    """The C variable of a $local: `v_x`; a loop's hidden ones (kv@4:2.0,
    i.end: no script name has a dot) and a scope's second `$x` (x'2,
    bpftrace's scopes.py) `lv_kv_a4_c2_d0`, out of the script's way, each
    character other than a letter or digit escaped so that two names never
    meet (`i'2.end`, `i_2.end`)."""
    if name.isidentifier():
        return f"v_{name}"
    return "lv_" + re.sub(r"[^A-Za-z0-9]", lambda m: _ESCAPES.get(m.group(), f"_x{ord(m.group()):02x}"), name)


def stmt_While(g, s: ir.While):
    n = g.tmp("n")
    cap = len(g.res.loop_caps)         # its slot in plyc_loopcap: the tracer warns of a stop
    g.res.loop_caps.append(script_line(s.span))
    g.line(f"__u32 {n} = 0;")
    g.line("#pragma clang loop unroll(disable)")
    # The condition is tested once more after the cap's last body: a loop
    # that ends right there (exactly LOOP_CAP rounds) was not stopped.
    g.line(f"for (; {n} <= {ir.LOOP_CAP}; {n}++) {{")
    g.depth += 1
    g.loops.append(None)
    if s.step is not None:
        # Before each test but the first: `continue` reaches it too.
        g.line(f"if ({n}) {{")
        g.block(s.step)
        g.line("}")
    cond = C.bare(g.uncast(g.scalar(s.cond)))
    g.line(f"if (!({cond}))")
    g.line("\tbreak;")
    g.line(f"if ({n} == {ir.LOOP_CAP}) {{")
    g.line(f"\tplyc_count_loopcap({cap});")
    g.line("\tbreak;")
    g.line("}")
    g.stmt(s.body)
    g.loops.pop()
    g.depth -= 1
    g.line("}")


def stmt_Break(g, s: ir.Break):
    store = g.loops[-1]
    if store is None:
        g.line("break;")
    else:
        g.lines_of(store + ["return 1;"])


def stmt_Continue(g, s: ir.Continue):
    store = g.loops[-1]
    if store is None:
        g.line("continue;")
    else:
        g.lines_of(store + ["return 0;"])


def in_callback(g) -> bool:
    """Whether the code being written is a for loop's callback (its
    outermost loop carries the locals' store, a While's None)."""
    return bool(g.loops) and g.loops[0] is not None


def stmt_Return(g, s):
    """`return` (and bpftrace's exit()): the probe ends. In a callback,
    it stops the iteration (1) and flags the context, which the caller
    reads after bpf_for_each_map_elem to return in its turn."""
    if in_callback(g):
        g.lines_of(g.loops[0] + ["plyc_lc->ret = 1;", "return 1;"])
    else:
        g.ret()


def stmt_ForMap(g, s: ir.ForMap):
    m = g.res.map(s.map)
    # Named for the probe's program and the map, `PROG_for_MAP`, then `_2`, ...
    # past any C name already taken (maps', programs', other loops').
    prog = next(p.prog for p in g.res.probes if p.probe is g.probe)
    taken = g.callback_names | {x.cname for x in g.res.maps} | {p.prog for p in g.res.probes}
    base = name = f"{prog}_for_{m.cname}"
    k = 2
    while name in taken or f"{name}_ctx" in taken:
        name, k = f"{base}_{k}", k + 1
    g.callback_names.add(name)
    used = {n.name for n in ir.walk(s) if isinstance(n, (ir.Local, ir.SetLocal))} | \
        {name for n in ir.walk(s) if isinstance(n, ir.ForMap) for name in n.keys + [n.value]}
    scalars = [(local_c(n), t.scalar_ctype()) for n, t in sorted(g.probe.locals.items())
               if not t.is_bytes and n in used]
    # The probe's side, in a block of its own (the context's stack ends
    # with it): its state into the context, the call, its locals back.
    returns = any(isinstance(n, ir.Return) for n in ir.walk(s.body))   # the context's `ret`
    c = g.tmp("c")
    g.line("{")
    g.depth += 1
    g.line(f"struct {name}_ctx {c} = {{}};")
    g.line(f"{c}.ctx = ctx;")
    g.line(SCRATCH_PASS + c)
    g.lines_of([f"{c}.{v} = {v};" for v, _ in scalars])
    g.line(f"bpf_for_each_map_elem(&{m.cname}, {name}, &{c}, 0);")
    g.lines_of([f"{v} = {c}.{v};" for v, _ in scalars])
    if returns:
        g.line(f"if ({c}.ret) {{")
        g.depth += 1
        stmt_Return(g, s)
        g.depth -= 1
        g.line("}")
    g.depth -= 1
    g.line("}")

    # The callback: its own lines and loops.
    saved = g.lines, g._depth, g.loops
    g.lines, g._depth, g.loops = [], 1, []
    store = [f"plyc_lc->{v} = {v};" for v, _ in scalars]
    g.line(f"struct {name}_ctx *plyc_lc = plyc_cx;")
    g.line(f"{g.probe.provider.ctx_decl} = plyc_lc->ctx;")
    g.line(SCRATCH_DECL)
    g.lines_of([f"{t} {v} = plyc_lc->{v};" for v, t in scalars])
    g.line("(void)ctx;")
    g.line("(void)plyc_map;")
    g.line(g.comment(s.span))
    entry_fields(g, m, s)
    g.loops.append(store)
    g.stmt(s.body)
    if not ends_in(s.body, (ir.Return, ir.Break, ir.Continue)):
        g.lines_of(store + ["return 0;"])
    body = g.lines
    g.lines, g._depth, g.loops = saved
    g.callbacks.append(dict(name=name, line=script_line(s.span), map=s.map, body=body,
                            fields=["void *ctx", "void *scratch"] + ["__u64 ret"] * returns +
                            [f"{t} {v}" for v, t in scalars]))


def ends_in(body: ir.Stmt, kinds: tuple) -> bool:
    """Whether a body's last statement is one of kinds: one that returns
    (return, exit(); a callback's own break and continue), after which the
    function's closing return would never run."""
    while isinstance(body, ir.Block) and body.stmts:
        body = body.stmts[-1]
    return isinstance(body, kinds)


def entry_fields(g, m, s: ir.ForMap):
    """The loop's locals set from the entry: key parts, then the value."""
    locs = g.probe.locals
    if m.scalar_key:
        g.line(f"{local_c(s.keys[0])} = *(const {m.key_ctype} *)plyc_key;")
    else:
        for f, name in zip(m.keys, s.keys):
            if locs[name].is_bytes:
                a = C.alignment(f.offset)
                src = C.offset_ptr("plyc_key", f.offset, a, const=True)
                g.lines_of(C.mem_calls("memcpy", g.local_ref[name], src, min(f.type.size, locs[name].size), a))
            else:
                g.line(f"{local_c(name)} = ((const {m.key_ctype} *)plyc_key)->{f.name};")
    if m.info.is_agg:       # the key's value over every CPU, as bpftrace's
        g.line(f"{local_c(s.value)} = {aggread.value(g, m, 'plyc_key', 'plyc_map')};")
    elif locs[s.value].is_bytes:
        g.lines_of(C.mem_calls("memcpy", g.local_ref[s.value],
                               f"__builtin_assume_aligned(((const {m.value_ctype} *)plyc_value)->v, 8)",
                               locs[s.value].size))
    else:
        g.line(f"{local_c(s.value)} = ((const {m.value_ctype} *)plyc_value)->v;")


# The helper a ForMap calls: BPF_FUNC_for_each_map_elem's number, name, release.
FOR_EACH_HELPER = (164, "bpf_for_each_map_elem", "5.13")
# bpftrace's nsecs(CLOCK) (intrinsic _clock): the newer clocks' helpers.
CLOCK_HELPERS = {"boot": (125, "bpf_ktime_get_boot_ns", "5.8"), "tai": (208, "bpf_ktime_get_tai_ns", "6.1"),
                 "sw_tai": (125, "bpf_ktime_get_boot_ns", "5.8")}


def needs(res) -> list:
    """Each for loop's helper (and nsecs(boot|tai)'s), for the tracer to ask the kernel before the
    load (runtime-c/load/needs.c): the tracer's table of them."""
    out = []
    for p in res.probes:
        for n in ir.walk(p.probe.body):
            # bpftrace's len(@m) counts with the same helper (frontends/bpftrace/values.py)
            counted = isinstance(n, ir.Call) and n.func.name == "len"
            if isinstance(n, ir.ForMap) or counted:
                helper, hname, since = FOR_EACH_HELPER
                what = f"len({n.args[0].value.decode()})" if counted else f"a for loop over {n.map}"
                out.append(dict(prog=p.prog, helper=helper, helper_name=hname, since=since,
                                line=script_line(n.span), what=c_string(what)))
            clock = n.args[0].value.decode() if isinstance(n, ir.Call) and n.func.name == "_clock" else None
            # bpftrace's tseries() reads sw_tai too (codegen/aggregations.py)
            if isinstance(n, ir.Aggregate) and n.agg.name == "tseries":
                clock = "sw_tai"
            if clock in CLOCK_HELPERS:
                helper, hname, since = CLOCK_HELPERS[clock]
                what = "tseries()" if isinstance(n, ir.Aggregate) else f"nsecs({clock})"
                out.append(dict(prog=p.prog, helper=helper, helper_name=hname, since=since,
                                line=script_line(n.span), what=c_string(what)))
    return out
