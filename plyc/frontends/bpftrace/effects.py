"""Where a value with effects may sit: `++`/`--` used as a value and block
expressions run before the statement using them (blocks.py). That is what
bpftrace does wherever the statement evaluates them unconditionally and
nothing the statement reads outside them is what they change; elsewhere
they are refused by name, each with the way to write it:
  - in the right of && or ||, a ternary's branches (run only sometimes;
    a while condition's run each time round: loops.py);
  - in the keys of a `++`, `--` or `x op= v` target (read once, written once);
  - in sizeof()/typeof()/offsetof() (typed, never run);
  - beside a read of a map or of a variable's address, outside them, of
    what they change (bpftrace reads left to right as it goes; plyc would
    read the changed value). A $variable read before them is read into a
    local of its own there (check()'s snapshots: lower.py's expr_Var), so
    `printf("%c %c", *$b, *++$b)` reads $b before the `++`, as bpftrace."""
from __future__ import annotations

from ...diag import Collector
from . import ast as A
from .trees import walk

CONDITIONAL = "runs only when the condition lets it"


def has_effect(node) -> bool:
    return any(_hoisted(n) for n in walk(node))


def _hoisted(n) -> bool:
    return isinstance(n, (A.IncDec, A.BlockExpr)) or finds(n) or deletes(n)


def finds(n) -> bool:
    """find(@m, k, $v): its lookup and $v's assignment run before the statement."""
    return isinstance(n, A.Call) and n.name == "find" and len(n.args) == 3 and isinstance(n.args[2], A.Var)


def deletes(n) -> bool:
    """delete(@m, k) inside an expression: the key is deleted (and whether
    it was there read) before the statement, as find()'s lookup (a
    delete() statement of its own is no such part: _statement's root)."""
    return isinstance(n, A.Call) and n.name == "delete" and bool(n.args) and isinstance(n.args[0], A.Map)


def _what(e) -> str:
    if isinstance(e, A.IncDec):
        return f"'{e.op}' used as a value"
    if deletes(e):
        return "delete()'s value"
    return "find()" if finds(e) else "a block expression"


def check(program: A.Program, diag: Collector) -> set:
    """The places refused (told to diag); the ids of the $variable reads
    to take before the statement's hoisted parts run."""
    snaps: set = set()
    for probe in program.probes:
        for root in (probe.predicate, probe.body):
            if root is None:
                continue
            for n in walk(root):
                _placement(n, diag)
                for exprs in _statement(n):
                    _order(exprs, diag, snaps)
        if probe.predicate is not None:
            _order([probe.predicate], diag, snaps)
        _typed_blocks(probe, diag)
    return snaps


def _first(node):
    return next(n for n in walk(node) if _hoisted(n))


def _refuse(node, where: str, diag: Collector, note: str = None):
    e = _first(node)
    diag.error(f"{_what(e)} {where}: not supported by plyc", e.span,
               note or "assign it to a $variable in a statement of its own first")


def _placement(n, diag: Collector):
    if isinstance(n, A.Binary) and n.op in ("&&", "||") and has_effect(n.right):
        _refuse(n.right, f"in the right of '{n.op}' ({CONDITIONAL})", diag)
    elif isinstance(n, A.Ternary) and (has_effect(n.then) or has_effect(n.other)):
        _refuse(n.then if has_effect(n.then) else n.other, f"in a branch of '?:' ({CONDITIONAL})", diag,
                "use an if statement")
    elif isinstance(n, A.Sizeof) and has_effect(n.arg) and _runs_in_sizeof(n.arg):
        _refuse(n.arg, "in sizeof() (typed, never run)", diag)
    elif isinstance(n, A.Offsetof) and has_effect(n.arg):
        _refuse(n.arg, "in offsetof() (typed, never run)", diag)
    elif isinstance(n, A.TypeName) and n.of is not None and has_effect(n.of):
        _refuse(n.of, "in typeof() (typed, never run)", diag)
    elif isinstance(n, A.IncDec) and isinstance(n.target, A.Map) and has_effect(n.target.keys or []):
        _refuse(n.target.keys, f"in the key of '{n.op}' (the key is read, then written)", diag)
    elif isinstance(n, A.Assign) and n.op != "=" and isinstance(n.target, A.Map) and has_effect(n.target.keys or []):
        _refuse(n.target.keys, f"in the key of '{n.op}' (the key is read, then written)", diag)


def _runs_in_sizeof(arg) -> bool:
    """Whether sizeof(arg) would change something: a block expression's
    statements are typed and dropped (0.27 types `sizeof({ $a = 1; $a })`),
    but a `++` or find() inside it changes a variable or map outside it."""
    return any(isinstance(n, A.IncDec) or finds(n) or deletes(n) for n in walk(arg))


def _typed_blocks(probe, diag: Collector):
    """sizeof({ ... }) types its block, whose assignments then never run:
    one to a map, or to a $variable the probe uses outside it, would still
    type that map or variable; refused (one of the block's own is fine)."""
    roots = [r for r in (probe.predicate, probe.body) if r is not None]
    for n in walk(roots):
        if not (isinstance(n, A.Sizeof) and isinstance(n.arg, A.BlockExpr)):
            continue
        inside = {id(x) for x in walk(n.arg)}
        outside = {_name(x) for x in walk(roots) if isinstance(x, (A.Var, A.Map)) and id(x) not in inside}
        for x in walk(n.arg):
            target = x.target if isinstance(x, A.Assign) else None
            if isinstance(target, A.Map) or (isinstance(target, A.Var) and _name(target) in outside):
                diag.error(f"{_name(target)} assigned in sizeof() (typed, never run): not supported by plyc",
                           target.span, "0.27 never runs it; plyc would still type what it assigns")
                return


def _statement(n) -> list:
    """The expressions a statement evaluates, in order: bpftrace 0.27 reads
    an assignment's value, then the target's keys (`@m[$i] = $i++` stores
    under the new $i), then writes."""
    if isinstance(n, A.Assign):
        if n.op != "=":
            return [[n.target, n.value]]
        keys = n.target.keys or [] if isinstance(n.target, A.Map) else []
        return [[n.value] + keys]
    if isinstance(n, A.Let) and n.value is not None:
        return [[n.value]]
    if isinstance(n, A.ExprStmt):
        return [[n.expr]]
    if isinstance(n, (A.If, A.While)):
        return [[n.cond]]
    if isinstance(n, A.Jump) and n.value is not None:
        return [[n.value]]
    if isinstance(n, A.For) and isinstance(n.iterable, A.Range):
        return [[n.iterable]]
    return []


def _name(n):
    return ("$" + n.name) if isinstance(n, A.Var) else n.name


def _writes(e) -> set:
    """The variables and maps a hoisted expression changes."""
    if isinstance(e, A.IncDec):
        return {_name(e.target)}
    if finds(e):
        return {_name(e.args[2])}
    if deletes(e):
        return {e.args[0].name}
    out = set()
    for n in walk(e.stmts):
        if isinstance(n, (A.Assign, A.IncDec)) and isinstance(n.target, (A.Var, A.Map)):
            out.add(_name(n.target))
        elif isinstance(n, A.Let):
            out.add(_name(n.var))
        elif isinstance(n, A.Call) and n.name in ("delete", "clear", "zero") and n.args and isinstance(n.args[0], A.Map):
            out.add(n.args[0].name)
    return out


def _read_later(node, reads: list, hoisted: list, addr: bool = False):
    """The names the statement itself reads (after the hoisted parts run),
    each with whether it is under '&' (its address, not its value), and the
    hoisted parts, each with its place in bpftrace's order of evaluation
    (left to right: the tree's fields are in that order)."""
    if isinstance(node, list):
        for x in node:
            _read_later(x, reads, hoisted, addr)
        return
    if not isinstance(node, A.Node):
        return
    if isinstance(node, A.IncDec) or finds(node) or deletes(node):
        hoisted.append((len(reads), node))
        return
    if isinstance(node, A.BlockExpr):
        hoisted.append((len(reads), node))
        _read_later(node.value, reads, hoisted, addr)
        return
    if isinstance(node, (A.Var, A.Map)):
        reads.append((node, addr))
    addr = addr or (isinstance(node, A.Unary) and node.op == "&")
    for name in node.__dataclass_fields__:
        value = getattr(node, name)
        if isinstance(value, (A.Node, list)):
            _read_later(value, reads, hoisted, addr)


def _order(exprs: list, diag: Collector, snaps: set):
    """A read before a hoisted part of what it changes would see the change:
    a $variable's value is taken first (snaps), others are refused."""
    if len(exprs) == 1 and isinstance(exprs[0], A.IncDec):
        target = exprs[0].target         # `x++;` itself: only its keys are values
        exprs = target.keys or [] if isinstance(target, A.Map) else []
    if not has_effect(exprs):
        return
    reads, hoisted = [], []
    _read_later(exprs, reads, hoisted)
    for at, e in hoisted:
        changed = _writes(e)
        for r, addr in reads[:at]:
            if _name(r) in changed and isinstance(r, A.Var) and not addr:
                snaps.add(id(r))
            elif _name(r) in changed:
                what = f"'{e.op}'" if isinstance(e, A.IncDec) else _what(e)
                diag.error(f"{_name(r)} is read before {what} that changes it in the same statement: not "
                           "supported by plyc (bpftrace reads the value before the change, plyc after it)", r.span,
                           "do the change in a statement of its own first")
                return
