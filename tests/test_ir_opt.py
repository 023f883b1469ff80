"""The optimising passes (plyc/ir/opt/), each on IR the front ends make
from a script: what it rewrites, and what it must leave alone."""
import re

from plyc import driver
from plyc.ir import fold
from plyc.ir import nodes as ir
from plyc.ir.dump import dump
from plyc.ir.opt import constfold, early_return, hoist_keys, lookups, optimize

LATENCY_BT = """tracepoint:syscalls:sys_enter_read { @start[tid] = nsecs; }
tracepoint:syscalls:sys_exit_read /@start[tid]/
{
	@ = hist(nsecs - @start[tid]);
	delete(@start[tid]);
}
"""


def lowered(source: str, name: str = "t.bt") -> ir.Program:
    return driver.lower(source, name, driver.Options(env={}))


def probe_text(prog: ir.Program, index: int) -> list:
    """The dump's lines of one probe's body, stripped of their @line."""
    text = dump(prog).split(f"probe {index} ")[1].split("\nprobe ")[0]
    return [re.sub(r"\s+@\d+$", "", line) for line in text.splitlines()[1:] if not line.startswith("  local")]


def nodes(prog: ir.Program, kind) -> list:
    return [n for p in prog.probes for n in ir.walk(p.body) if isinstance(n, kind)]


# --- constant folding ---------------------------------------------------------

def test_one_evaluator_with_each_languages_rules():
    """plyc/ir/fold.py computes every constant: the generated C's wrap to
    64 bits in the expression's sign; the front ends' counts are exact and
    fold only their operators; no rules fold a shift by 64 or more."""
    from plyc.frontends.bpftrace.trees import const_value as bt
    from plyc.frontends.ply.lower import const_value as ply
    assert fold.binary("*", 1 << 62, 4, fold.C_SIGNED) == 0
    assert fold.binary("-", 0, 1, fold.C_UNSIGNED) == (1 << 64) - 1
    assert fold.binary("-", 0, 1, fold.C_SIGNED) == -1
    assert fold.binary("*", 1 << 62, 4, fold.COUNTS) == 1 << 64
    assert fold.binary("<<", 1, 64, fold.C_UNSIGNED) is None and fold.binary("<<", 1, 63, fold.C_UNSIGNED) == 1 << 63
    assert fold.binary("&", 6, 3, fold.COUNTS) is None and fold.binary("/", 6, 3, fold.C_SIGNED) is None
    assert fold.unary("~", 0, fold.COUNTS) is None
    # the front ends' trees: bpftrace's by 0.27's own literal folder
    # (bpftrace/literals.py: `~` never negative, no value past 64 bits)
    from plyc.frontends.bpftrace import ast as B
    from plyc.frontends.ply import ast as P
    big = B.Binary("*", B.Int(1 << 62, "x"), B.Int(4, "4"))
    assert bt(B.Binary("|", B.Binary("<<", B.Int(1, "1"), B.Int(3, "3")), B.Unary("~", B.Int(0, "0")))) == (1 << 64) - 1
    assert bt(big) is None and bt(B.Binary("<<", B.Int(1, "1"), B.Int(64, "64"))) is None
    assert ply(P.Binary("-", P.Num(2), P.Unary("-", P.Num(3)))) == 5
    assert ply(P.Binary("&", P.Num(2), P.Num(3))) is None


def test_constfold_makes_constants_of_constant_expressions():
    prog = lowered('BEGIN { @[1 + 2 * 3] = count(); $x = -(4 << 2); printf("%d\\n", $x + pid); }', "t.ply")
    constfold.run(prog)
    agg, = nodes(prog, ir.Aggregate)
    assert isinstance(agg.keys[0], ir.IntConst) and agg.keys[0].value == 7
    setl, = nodes(prog, ir.SetLocal)
    assert isinstance(setl.value, ir.IntConst) and setl.value.value == -16
    # what reads memory is no constant
    ev, = nodes(prog, ir.EmitEvent)
    assert isinstance(ev.args[0], ir.Binary)


def test_constfold_keeps_the_type_and_wraps_as_c():
    prog = lowered("BEGIN { @[(1 - 2) * 4] = count(); }")
    agg, = nodes(prog, ir.Aggregate)
    typ = agg.keys[0].type
    constfold.run(prog)
    assert isinstance(agg.keys[0], ir.IntConst)
    assert agg.keys[0].value == -4 and agg.keys[0].type == typ
    assert not nodes(prog, ir.Binary)


# --- early return -------------------------------------------------------------

def test_early_return_for_a_predicate():
    prog = lowered("kprobe:vfs_read /pid == 1/ { @ = count(); }")
    early_return.run(prog)
    body = prog.probes[0].body.stmts
    assert isinstance(body[0], ir.If) and isinstance(body[0].then, ir.Return)
    assert body[0].cond.op == "!="          # the comparison negated, not wrapped in !
    assert isinstance(body[1], ir.Aggregate)


def test_early_return_leaves_an_if_with_else_and_one_not_last():
    src = "kprobe:vfs_read { if (pid == 1) { @a = count(); } else { @b = count(); } }\n" \
          "kprobe:vfs_write { if (pid == 1) { @c = count(); } @d = count(); }"
    prog = lowered(src)
    before = dump(prog)
    early_return.run(prog)
    assert dump(prog) == before


def test_early_return_twice_changes_nothing_more():
    prog = lowered("kprobe:vfs_read /pid/ { if (tid) { @ = count(); } }")
    early_return.run(prog)
    once = dump(prog)
    assert probe_text(prog, 0) == ["  if (!nspid:u32):s64", "    return", "  if (!nstid:u32):s64", "    return",
                                   "  @[] <- count()"]
    early_return.run(prog)
    assert dump(prog) == once


# --- map lookups --------------------------------------------------------------

def test_one_lookup_for_the_predicate_and_the_body():
    prog = optimize(lowered(LATENCY_BT))
    assert probe_text(prog, 1) == [
        "  let key_1 = key @start[nstid:u32]",
        "  let lookup1 = lookup @start[key_1]",
        "  if (!*lookup1:s64):s64",
        "    return",
        "  @[] <- hist((nsecs:s64 - *lookup1:s64):s64)",
        "  delete @start[key_1]",
    ]
    assert not nodes(prog, ir.MapRead)


def test_a_store_between_two_reads_looks_up_again():
    prog = lowered("kprobe:vfs_read { $a = @m[tid]; @m[tid] = 5; $b = @m[tid]; @m[tid] = $a + $b; }")
    lookups.run(prog)
    assert [s.name for s in nodes(prog, ir.LookupLet)] == ["lookup1", "lookup2"]
    reads = [s.value.name for s in nodes(prog, ir.SetLocal)]
    assert reads == ["lookup1", "lookup2"]


def test_a_delete_ends_the_binding():
    prog = lowered("kprobe:vfs_read { $a = @m[tid]; delete(@m[tid]); $b = @m[tid]; @m[1] = $a + $b; }")
    lookups.run(prog)
    assert len(nodes(prog, ir.LookupLet)) == 2


def test_other_maps_and_keys_keep_the_binding():
    prog = lowered("kprobe:vfs_read { $a = @m[tid]; @n[tid] = 1; $b = @m[tid]; $c = @m[pid]; @m[1] = $a + $b + $c; }")
    lookups.run(prog)
    lets = nodes(prog, ir.LookupLet)
    assert len(lets) == 2              # @m[tid] once, @m[pid] once
    assert [s.value.name for s in nodes(prog, ir.SetLocal)] == ["lookup1", "lookup1", "lookup2"]


def test_setting_a_local_in_the_key_ends_the_binding():
    prog = lowered("kprobe:vfs_read { $k = 1; $a = @m[$k]; $k = 2; $b = @m[$k]; @m[0] = $a + $b; }")
    lookups.run(prog)
    assert len(nodes(prog, ir.LookupLet)) == 2


def test_a_branch_binds_for_itself_only():
    src = "kprobe:vfs_read { $a = 0; if (pid) { $a = @m[tid]; } $b = @m[tid]; @m[0] = $b + $a; }"
    prog = lowered(src)
    lookups.run(prog)
    body = prog.probes[0].body.stmts
    assert isinstance(body[1], ir.If)
    assert isinstance(body[1].then.stmts[0], ir.LookupLet)
    assert isinstance(body[2], ir.LookupLet) and body[2].name == "lookup2"


def test_a_store_in_a_branch_ends_the_binding_after_it():
    src = "kprobe:vfs_read { $a = @m[tid]; if (pid) { @m[tid] = 1; } $b = @m[tid]; @m[0] = $b + $a; }"
    prog = lowered(src)
    lookups.run(prog)
    assert len(nodes(prog, ir.LookupLet)) == 2


def test_a_loop_that_stores_gets_no_binding_from_before_it():
    src = "kprobe:vfs_read { $a = @m[tid]; while ($a < 10) { $a = @m[tid] + 1; @m[tid] = $a; } }"
    prog = lowered(src)
    lookups.run(prog)
    loop, = nodes(prog, ir.While)
    inner = [n for n in ir.walk(loop.body) if isinstance(n, ir.LookupLet)]
    assert len(inner) == 1               # looked up again in each iteration


def test_a_loop_that_leaves_the_map_alone_reads_the_binding():
    src = "kprobe:vfs_read { $a = @m[tid]; $i = 0; while ($i < @m[tid]) { $i = $i + 1; } @m[0] = $a + $i; }"
    prog = lowered(src)
    lookups.run(prog)
    loop, = nodes(prog, ir.While)
    assert isinstance(loop.cond.right, ir.LookupValue)
    assert len(nodes(prog, ir.LookupLet)) == 1


def test_a_for_each_body_binds_its_own():
    src = "kprobe:vfs_read { @m[tid] = 1; $a = @m[tid]; for ($kv : @m) { @n[$kv.0] = @m[tid]; } @n[0] = $a; }"
    prog = lowered(src)
    lookups.run(prog)
    loop, = nodes(prog, ir.ForMap)
    inner = [n for n in ir.walk(loop.body) if isinstance(n, ir.LookupLet)]
    assert len(inner) == 1


def test_aggregations_and_changing_keys_are_left_alone():
    prog = lowered('kprobe:vfs_read { @m[str(arg1)] = 1; $a = @m[str(arg1)]; @n[0] = $a; }')
    lookups.run(prog)
    assert not nodes(prog, ir.LookupLet)
    assert nodes(prog, ir.MapRead)


def test_has_key_reads_the_binding_too():
    prog = optimize(lowered("kprobe:vfs_write { @m[tid] = 1; }\n"
                               "kprobe:vfs_read /has_key(@m, tid)/ { @n[0] = @m[tid]; }"))
    assert len(nodes(prog, ir.LookupLet)) == 1
    assert nodes(prog, ir.LookupFound) and nodes(prog, ir.LookupValue)


# --- key hoisting ------------------------------------------------------------

def keylets(prog: ir.Program) -> list:
    return nodes(prog, ir.KeyLet)


def test_a_key_used_once_stays_in_place():
    prog = lowered("kprobe:vfs_read { @m[tid] = 1; @n[pid, comm] = 2; }")
    hoist_keys.run(prog)
    assert not keylets(prog)
    assert not nodes(prog, ir.KeyRef)


def test_a_key_used_twice_is_built_once():
    prog = lowered("kprobe:vfs_read { @m[pid, comm] = 1; delete(@m[pid, comm]); }")
    hoist_keys.run(prog)
    assert probe_text(prog, 0) == ["  let key_1 = key @m[nspid:u32, comm:char[16]]", "  @m[key_1] = 1:s64",
                                   "  delete @m[key_1]"]


def test_maps_keyed_by_one_integer_type_share_a_key():
    prog = lowered("kprobe:vfs_read { @a[tid] = 1; @b[tid] = 2; @c = 3; @d = 4; }")
    hoist_keys.run(prog)
    assert [(k.map, len(k.keys)) for k in keylets(prog)] == [("@a", 1), ("@c", 0)]


def test_setting_a_local_in_a_key_builds_it_again():
    prog = lowered("kprobe:vfs_read { $k = 1; @m[$k] = 1; @m[$k] = 2; $k = 2; @m[$k] = 3; @m[$k] = 4; }")
    hoist_keys.run(prog)
    assert len(keylets(prog)) == 2


def test_a_key_in_a_branch_serves_that_branch_only():
    prog = lowered("kprobe:vfs_read { if (pid) { @m[tid] = 1; @m[tid] = 2; } else { @m[tid] = 3; } }")
    hoist_keys.run(prog)
    let, = keylets(prog)
    branch = prog.probes[0].body.stmts[0]
    assert branch.then.stmts[0] is let
    assert not isinstance(branch.other.stmts[0].keys[0], ir.KeyRef)


def test_a_nested_block_shares_its_keys_with_what_follows():
    prog = lowered("kprobe:vfs_read { @m[tid] = 1; @m[tid] = 2; @m[tid] = 3; }")
    body = prog.probes[0].body
    body.stmts = [ir.Block(body.stmts[:2]), body.stmts[2]]
    hoist_keys.run(prog)
    let, = keylets(prog)
    assert body.stmts[0].stmts[0] is let
    assert all(isinstance(s.keys[0], ir.KeyRef) for s in nodes(prog, ir.MapStore))


def test_a_for_each_body_builds_its_own_keys():
    src = "kprobe:vfs_read { @m[tid] = 1; for ($kv : @m) { @n[tid] = 1; } @n[tid] = 2; }"
    prog = lowered(src)
    hoist_keys.run(prog)
    loop, = nodes(prog, ir.ForMap)
    assert not [n for n in ir.walk(loop.body) if isinstance(n, ir.KeyRef)]


def test_a_loop_setting_a_key_local_gets_no_key_from_before():
    src = "kprobe:vfs_read { $i = 0; @m[$i] = 1; while ($i < 3) { @m[$i] = 2; $i = $i + 1; } @m[$i] = 3; }"
    prog = lowered(src)
    hoist_keys.run(prog)
    loop, = nodes(prog, ir.While)
    assert not [n for n in ir.walk(loop) if isinstance(n, ir.KeyRef)]


def test_the_passes_twice_change_nothing_more():
    prog = optimize(lowered(LATENCY_BT))
    once = dump(prog)
    assert dump(optimize(prog)) == once


def test_latency_exit_program_looks_start_up_once():
    """The issue's example: the exit program's C has one lookup of start."""
    compiled = driver.compile_source(LATENCY_BT, "latency.bt", driver.Options(env={}), name="latency")
    c = compiled.generated.bpf_c
    exit_prog = c.split("int sys_exit_read(")[1].split("\n}\n")[0]
    assert exit_prog.count("bpf_map_lookup_elem(&start,") == 1
    # the predicate's failure returns before anything else
    assert re.search(r"lookup_elem\(&start, &key\d+\);\n\tif \(!\(lookup1 \? lookup1->v : 0\)\) \{\n\t\treturn 0;",
                     exit_prog)
