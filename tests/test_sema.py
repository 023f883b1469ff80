"""The neutral semantic layer (plyc/sema) and the providers' structured
specs: the typing rules take the core's terms, print widths are the output
style's (not in a Type), and a provider takes the Fields a front end built
as it takes its own text."""
import pytest

from plyc import builtins as B
from plyc import driver, providers
from plyc import types as T
from plyc.codegen import printers
from plyc.diag import Collector, PlycError
from plyc.frontends.bpftrace import ast as BA
from plyc.frontends.bpftrace import specs as BS
from plyc.ir import nodes as ir
from plyc.sema import Bail, Sema, TypeRef


class Probe:
    strsize, ktypes, arch, maps, locals, units = 64, None, "x86_64", {}, {}, []


def rules() -> Sema:
    return Sema(Probe(), Collector(), final=True)


def span(col: int) -> ir.Span:
    return ir.Span(1, col, 1, col + 1)


def test_rules_type_core_terms():
    s = rules()
    pid = ir.Variable(B.variable("pid"), type=B.variable("pid").type)
    assert s.binary("+", pid, s.int_const(1), span(1), span(5)).type == T.Int(8, False)
    assert s.binary("==", ir.BytesConst(b"a", type=T.Str(8)), ir.BytesConst(b"b", type=T.Str(8)),
                    span(1), span(5)).type == T.S32
    assert s.cast(pid, TypeRef(("u8",)), span(1)).type == T.Int(1, False)
    assert s.unary("-", pid, span(1)).type == T.S64


def test_rule_errors_go_to_the_diagnostics_at_the_span_given():
    s = rules()
    with pytest.raises(Bail):
        s.binary("<", ir.BytesConst(b"a", type=T.Str(8)), s.int_const(1), span(3), span(9))
    (d,) = s.diag.diags
    assert (d.message, d.span.col, d.note) == ("operator '<' needs integers, got char[8]", 3, None)


def test_the_types_of_builtins_carry_no_print_width():
    """pid is a u32; ply's column of 5 is its output style's."""
    assert B.variable("pid").type == T.U32
    prog = driver.analyze(driver.parse("kprobe:vfs_read { @[pid, cpu, comm] = count(); }", "t.ply"),
                          "", "t.ply", driver.Options(env={}))
    m = prog.maps["@"]
    assert m.key_types[:2] == [T.U32, T.U32]
    assert m.key_widths == [5, 2, 0]


def test_bpftrace_prints_no_columns():
    prog = driver.analyze(driver.parse("kprobe:vfs_read { @[pid, cpu] = count(); }", "t.bt"),
                          "", "t.bt", driver.Options(env={}))
    assert not any(prog.maps["@"].key_widths or [])


def analyze(text: str, name: str) -> ir.Program:
    return driver.analyze(driver.parse(text, name), "", name, driver.Options(env={}))


def test_an_address_prints_in_hex_by_its_style_not_its_type():
    """ply's uprobe caller is a u64 (its hex is ply's output style); a map
    written a pointer and a number holds a number the tracer prints in hex."""
    prog = analyze("uprobe:/bin/sh:main { @[caller] = count(); }", "t.ply")
    assert prog.maps["@"].key_types == [T.U64]
    assert prog.maps["@"].key_hex == [True]
    assert printers.type_init(T.U64, 0, True).startswith("{ PLYC_K_HEX,")
    prog = analyze("kprobe:vfs_read { @p = arg0; @p = (struct file *)arg0; }", "t.bt")
    assert prog.maps["@p"].value_type == T.U64
    assert prog.maps["@p"].value_hex


def test_a_values_meaning_is_its_type():
    """A stack's mode and frames, strftime's format, a duration: kinds the
    typing rules compare (unify refuses two strftime formats)."""
    assert str(T.Stack(True, "perf", 3)) == "ustack(perf, 3)"
    assert printers.rt_width(T.Stack(False, "raw")) == 2 << 8
    assert T.unify(T.Strftime(0), T.Strftime(1)) is None
    assert T.unify(T.TIME, T.S64) == T.TIME
    assert T.arith("-", T.TIME, T.TIME).denotes == "time"
    prog = analyze("kprobe:vfs_read { @[nsecs] = count(); }", "t.bt")
    assert prog.maps["@"].key_types == [T.S64]     # bpftrace's nsecs is a number


@pytest.mark.parametrize("provider, parts, text", [
    ("kprobe", ["vfs_read+16"], "vfs_read+16"),
    ("kprobe", ["ext4", "ext4_file_open"], "ext4:ext4_file_open"),
    ("tracepoint", ["sched", "sched_switch"], "sched:sched_switch"),
    ("uprobe", ["/bin/bash", "readline"], "/bin/bash:readline"),
    ("usdt", ["/usr/bin/python3", "python", "function__entry"], "/usr/bin/python3:python:function__entry"),
    ("software", ["page-faults", "100"], "page-faults:100"),
    ("interval", ["s", "1"], "1s"),
    ("profile", ["hz", "99"], "99hz"),
    ("kfunc", ["vfs_read"], "vfs_read"),
])
def test_a_provider_takes_the_fields_a_front_end_built_as_its_own_text(provider, parts, text):
    written = BA.ProbeSpec(provider, parts, ":".join([provider] + parts))
    core, fields = BS.to_ir(written)
    prov = providers.lookup(provider)
    assert core.arg == text == prov.spell(fields)
    assert prov.fields(ir.Spec(provider, text)) == fields
    (_, a), = providers.resolve_specs([core], Collector(), [fields])
    (_, b), = providers.resolve_specs([ir.Spec(provider, text)], Collector())
    assert (a.target, a.glob, a.extra) == (b.target, b.glob, b.extra)


@pytest.mark.parametrize("script, message", [
    ("kprobe:0x10:foo { }", "'0x10:foo' is not a kernel symbol, glob, sym+offset or 0xADDR"),
    ("usdt:a::b { }", "'a::b' is not PATH:[provider:]name"),
    ("uprobe:/bin/sh:+ { }", "'' is not a symbol, sym+offset or 0xADDR"),
    ("tracepoint::x { }", "tracepoint ':x' is not group/event"),
])
def test_fields_a_provider_refuses_from_its_text_it_refuses_from_bpftrace(script, message):
    """The checks are on the fields, so a bpftrace spec meets the same ones."""
    with pytest.raises(PlycError) as err:
        driver.analyze(driver.parse(script, "t.bt"), script, "t.bt", driver.Options(env={}))
    assert err.value.diags[0].message == message
