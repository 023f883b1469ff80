"""A core pass: refuse what the generated C would leave undefined or not
compile, where the script's constants already say so: an integer constant
wider than 64 bits, a division or modulo by a constant zero, a constant
shift count outside 0 to 63, exit() with a constant status outside 0 to
255, a positional parameter beyond the tracer's. Every front end lists it
(plyc.ir.passes.CORE), so the three languages refuse the same things."""
from __future__ import annotations

from ..diag import Collector
from . import nodes as ir
from .fold import value

# The highest $N a script may use: the tracer keeps a number and a string
# (strsize bytes) for each of $1 to $N, whether the command line gives them or not.
MAX_POSITIONAL = 128


def _span(e, fallback):
    return e.span if e.span != ir.NOSPAN else fallback


def _expr(e, diag: Collector, where):
    if isinstance(e, ir.IntConst) and not -(1 << 63) <= e.value < 1 << 64:
        diag.error(f"integer constant {e.value} does not fit in 64 bits", _span(e, where))
    elif isinstance(e, ir.Binary) and not e.left.type.is_bytes:
        n = value(e.right)
        if n is None:
            return
        if e.op in ("/", "%") and n == 0:
            diag.error("division by zero" if e.op == "/" else "modulo by zero", _span(e.right, where))
        elif e.op in ("<<", ">>") and not 0 <= n < 64:
            diag.error(f"shift count {n} is out of range: it must be 0 to 63", _span(e.right, where))
    elif isinstance(e, ir.Param) and e.kind in (ir.ARG_NUM, ir.ARG_STR) and e.index > MAX_POSITIONAL:
        diag.error(f"${e.index}: a tracer takes at most {MAX_POSITIONAL} positional parameters",
                   _span(e, where))


def _stmt(s, diag: Collector, where):
    if isinstance(s, ir.EmitEvent) and s.event.kind == ir.EXIT and s.args:
        n = value(s.args[0])
        if n is not None and not 0 <= n <= 255:
            diag.error(f"exit status {n} is out of range: it must be 0 to 255", _span(s.args[0], where))


def check(program: ir.Program, diag: Collector):
    for probe in program.probes:
        todo = [(probe.body, probe.body.span)]
        while todo:     # not recursive: how deep a script nests is the front end's to limit
            node, where = todo.pop()
            where = _span(node, where)
            if isinstance(node, ir.Expr):
                _expr(node, diag, where)
            else:
                _stmt(node, diag, where)
            todo.extend((child, where) for child in reversed(list(ir.children(node))))
