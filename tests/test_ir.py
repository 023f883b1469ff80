"""The core IR on its own: a program built by hand (as a front end other
than ply's builds it) compiles to the same C as the ply script that says
the same, and the pass runner stops after the first pass with errors."""
import pytest

from plyc import aggregations as AGG
from plyc import builtins as B
from plyc import driver, printf, providers
from plyc import types as T
from plyc.diag import Collector, PlycError
from plyc.ir import nodes as ir
from plyc.ir import passes
from plyc.ir.dump import dump

SCRIPT = 'BEGIN {\n\t@[comm] = count();\n\tprintf("%d\\n", $target + 1);\n}\n'


def span(line: int) -> ir.Span:
    return ir.Span(line, 1, line, 2)


def by_hand() -> ir.Program:
    spec = ir.Spec("BEGIN", "", span=span(1))
    (_, target), = providers.resolve_specs([spec], Collector())
    comm = ir.Variable(B.variable("comm"), type=B.variable("comm").type, span=span(2))
    m = ir.Map("@", 0, ir.AGGREGATION, span(2), key_types=[comm.type], value_type=T.U64,
               agg=AGG.AGGREGATIONS["count"], key_names=["comm"], written=True)
    x = ir.Binary("+", ir.Param(ir.TARGET, type=T.U32, span=span(3)), ir.IntConst(1, type=T.S64, span=span(3)),
                  type=T.Int(8, False), span=span(3))
    ev = ir.Event(1, ir.PRINTF, span(3), parts=printf.parse("%d\n"), arg_types=[x.type])
    body = ir.Block([ir.Aggregate("@", [comm], AGG.AGGREGATIONS["count"], [], span=span(2)),
                     ir.EmitEvent(ev, [x], span=span(3))], span=span(1))
    probe = ir.Probe(0, spec, target, body)
    return ir.Program([probe], {"@": m}, [ev], uses_target=True)


def test_hand_built_ir_compiles_as_the_script():
    opts = driver.Options(env={})
    want = driver.compile_source(SCRIPT, "t.ply", opts, name="t")
    got = driver.compile_ir(by_hand(), SCRIPT, "t.ply", opts, name="t")
    assert dump(got.ir) == dump(want.ir)
    assert got.generated.bpf_c == want.generated.bpf_c
    assert got.generated.loader_c == want.generated.loader_c


def test_passes_stop_at_the_first_with_errors():
    ran = []

    def ok(state, diag):
        ran.append("ok")

    def bad(state, diag):
        ran.append("bad")
        diag.error("first", span(1))
        diag.error("second", span(2))

    def never(state, diag):
        ran.append("never")

    with pytest.raises(PlycError) as err:
        passes.run((ok, bad, never), None)
    assert ran == ["ok", "bad"]
    assert [d.message for d in err.value.diags] == ["first", "second"]


def test_core_pass_finds_a_map_never_written():
    prog = by_hand()
    prog.maps["m"] = ir.Map("m", 1, ir.HASH, span(4))
    with pytest.raises(PlycError) as err:
        passes.run(passes.on_ir(passes.CORE), type("State", (), {"ir": prog}))
    assert [(d.message, d.span.line) for d in err.value.diags] == [("map 'm' is read but never assigned", 4)]


def test_resolve_reports_unknown_providers():
    diag = Collector()
    out = providers.resolve_specs([ir.Spec("nope", "x", span=span(1))], diag)
    assert out[0][1] is None
    assert diag.diags[0].message == "unknown provider 'nope'"
    assert providers.lookup("BEGIN") is not None
