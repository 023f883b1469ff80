"""The placement of temporaries (plyc/ir/opt/temps.py) on IR the front
ends make: what goes on the BPF stack and what to the per-CPU scratch
slot, and that the code generator prints what the pass decided."""
from plyc import driver
from plyc.codegen import render, resources
from plyc.ir import nodes as ir
from plyc.ir.opt import optimize, temps


def placed(source: str, index: int = 0, name: str = "t.bt") -> list:
    """(what, role, size, where) of each temporary of probe `index`, in order."""
    prog = optimize(driver.lower(source, name, driver.Options(env={})))
    return [(t.node if isinstance(t.node, str) else type(t.node).__name__, t.role, t.size,
             "scratch" if t.scratch else "stack") for t in prog.probes[index].temps]


def test_a_comm_key_fits_the_stack():
    assert placed("kprobe:f { @[comm] = count(); }") == [
        ("Variable", temps.VALUE, 16, "stack"), ("Aggregate", temps.KEY, 16, "stack")]


def test_a_string_past_stack_temp_max_goes_to_scratch():
    # str() reads straight into the key's field: the key is the one temporary
    assert placed("kprobe:f { @[str(arg0)] = count(); }") == [("Aggregate", temps.KEY, 1024, "scratch")]
    assert placed("kprobe:f { @[str(arg0, 32)] = count(); }") == [("Aggregate", temps.KEY, 32, "stack")]


def test_past_the_budget_the_rest_goes_to_scratch():
    # 8 + 8 for @m, then value 8 + comm 16 + (comm, pid) key 24 for each store
    src = "kprobe:f { @m[1] = 2; @a[comm, pid] = 1; @b[comm, pid] = 1; @c[comm, pid] = 1; " \
          "@d[comm, pid] = 1; }"
    got = placed(src)
    assert sum(temps.words(size) for *_, size, where in got if where == "stack") == temps.STACK_TEMP_BUDGET
    assert [w for *_, w in got] == ["stack"] * 11 + ["scratch"] * 3
    assert got[-1] == ("MapStore", temps.KEY, 20, "scratch")


def test_first_come_first_served():
    """A small temporary after one that missed the stack may still fit."""
    fill = "@m[1] = 2; @a[comm, pid] = 1; @b[comm, pid] = 1; @c[comm] = 1;"     # 152 bytes
    got = placed(f"kprobe:f {{ {fill} @d[comm] = 1; }}")
    assert got[-3:] == [("MapStore", temps.STORED, 8, "stack"), ("Variable", temps.VALUE, 16, "scratch"),
                        ("MapStore", temps.KEY, 16, "scratch")]


def test_config_on_stack_limit_moves_the_line():
    src = "kprobe:f { @[comm] = count(); }"
    assert {w for *_, w in placed("config = { on_stack_limit = 8 }\n" + src)} == {"scratch"}
    assert {w for *_, w in placed("config = { on_stack_limit = 16 }\n" + src)} == {"stack"}
    big = "kprobe:f { @[str(arg0, 64)] = count(); }"
    assert placed(big)[0][3] == "scratch"
    assert placed("config = { on_stack_limit = 64 }\n" + big)[0][3] == "stack"


def test_a_for_loop_puts_string_locals_in_scratch():
    """Its callback reaches them there; scalars stay on the stack."""
    loop = placed("kprobe:f { @m[1] = 2; for ($kv : @m) { $s = comm; @x[$s] = count(); } }")
    assert loop[0] == ("s", temps.LOCAL, 16, "scratch")
    assert ("Aggregate", temps.KEY, 16, "stack") in loop
    plain = placed("kprobe:f { $s = comm; @x[$s] = count(); }")
    assert plain[0] == ("s", temps.LOCAL, 16, "stack")


def test_a_for_loops_context_takes_from_the_budget():
    # 152 bytes of temporaries; the keyless @n's value (8) fits, unless a
    # loop's context struct took its room first
    fill = "@m[1] = 2; @a[comm, pid] = 1; @b[comm, pid] = 1; @c[comm] = 1;"
    without = placed(f"kprobe:f {{ {fill} @n = 1; }}")
    with_loop = placed(f"kprobe:f {{ {fill} for ($kv : @m) {{ }} @n = 1; }}")
    assert without[-2] == ("MapStore", temps.STORED, 8, "stack")
    assert with_loop[-2] == ("MapStore", temps.STORED, 8, "scratch")


def test_string_constants_compared_need_no_array():
    assert placed('kprobe:f { if (comm == "bash") { @[tid] = count(); } }') == [
        ("Variable", temps.VALUE, 16, "stack"), ("Aggregate", temps.KEY, 4, "stack")]
    # in a key, the constant is copied from a literal too
    assert placed('kprobe:f { @[comm, "abc"] = count(); }') == [
        ("Variable", temps.VALUE, 16, "stack"), ("Aggregate", temps.KEY, 24, "stack")]


def test_intrinsic_results():
    got = placed("kprobe:f { join((uint8 **)arg0); }")
    assert got == [("Call", temps.VALUE, 16 * 1024, "scratch")]
    got = placed("kprobe:f { @[ntop(2, arg0)] = count(); }")
    assert got == [("Call", temps.VALUE, 24, "stack"), ("Aggregate", temps.KEY, 24, "stack")]
    # a kernel integer read by CO-RE lands in a word of its own
    got = placed("kprobe:f { @[((struct task_struct *)curtask)->pid] = count(); }")
    assert got == [("KMember", temps.VALUE, 8, "stack"), ("Aggregate", temps.KEY, 4, "stack")]


def test_the_pass_twice_decides_the_same():
    prog = optimize(driver.lower("kprobe:f { @[comm, str(arg0)] = count(); @x[comm] = 1; }", "t.bt",
                                 driver.Options(env={})))
    before = [(t.node, t.role, t.size, t.scratch) for t in prog.probes[0].temps]
    temps.run(prog)
    assert [(t.node, t.role, t.size, t.scratch) for t in prog.probes[0].temps] == before


def generated(prog: ir.Program) -> str:
    res = resources.build(prog, "t", "t.bt", driver.build_limits(prog, driver.Options(env={})))
    return render.render(prog, res, None, prog.style, "").bpf_c


def test_the_code_generator_prints_the_decision():
    """cgen decides nothing: a temporary the pass moves to scratch is there in the C."""
    prog = optimize(driver.lower("kprobe:f { @[comm] = count(); }", "t.bt", driver.Options(env={})))
    c = generated(prog)
    assert "scratch->" not in c and "char t1[16]" in c
    prog.probes[0].temps[0].scratch = True
    c = generated(prog)
    assert "scratch->t1" in c and "char t1[16]" in c.split("_scratch {")[1].split("};")[0]


def test_a_temporary_the_pass_did_not_place_is_an_error():
    prog = optimize(driver.lower("kprobe:f { @[comm] = count(); }", "t.bt", driver.Options(env={})))
    prog.probes[0].temps.pop()
    try:
        generated(prog)
    except AssertionError as err:
        assert "did not place" in str(err)
    else:
        raise AssertionError("cgen made a temporary the pass had not placed")


def test_each_intrinsics_record_says_how_its_emitter_makes_and_reads():
    """The pass places an intrinsic's array by its record (temp, args): an
    emitter that makes one, or reads strings, says so there. (A mismatch
    also stops cgen at the first script that uses it.)"""
    import inspect
    from plyc.codegen import intrinsics as CI
    from plyc.ir import intrinsics as I
    for func, emitter in CI.EMIT.items():
        src = inspect.getsource(emitter)
        assert ("g.local_bytes(" in src) == bool(func.temp), func.name
        if "string_sized(" in src:
            assert func.args == I.STRINGS, func.name
        elif "g.bytes(" in src and func not in (I.STR, I.BUF):
            assert func.args == I.VALUES, func.name
        elif "call.args" in src and not any(r in src for r in ("g.scalar(", "g.pointer(", "read_string_into(")):
            assert func.args == I.NONE, func.name     # constants it prints
