"""docs/design.md's how-tos, each done once by following its steps: a
provider ("How to add a provider"), a builtin function ("How to add a
builtin function"), an aggregation ("How to add an aggregation") and a
subcommand ("How to add a subcommand"); a front end is added so in
tests/test_frontends.py. Each test first checks that the section still
names every place the test changes, then changes those places only (the
Python tables patched at run time, the runtime's C in a copy of runtime-c/)
and builds a tracer; the `bpf` ones run it. A how-to whose steps no longer
suffice fails here. And every repository path the document names exists."""
import fnmatch
import importlib
import os
import re
import shutil
import subprocess
import types
from pathlib import Path

import pytest

from plyc import aggregations as AGG
from plyc import builtins as B
from plyc import cli, driver, providers, toolchain
from plyc import types as T
from plyc.codegen import aggregations as CAGG
from plyc.codegen import intrinsics as CI
from plyc.diag import PlycError, error
from plyc.frontends import base as febase
from plyc.frontends.bpftrace import probes as btprobes
from plyc.frontends.bpftrace import specs as btspecs
from plyc.frontends.ply import lower as plylower
from plyc.ir import intrinsics as I
from plyc.providers import Fields, Provider, Target, spec_error

from cbuild import bpf_compile_error

# the module (the package's `lower` is its function)
btlower = importlib.import_module("plyc.frontends.bpftrace.lower")

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "design.md").read_text()


def section(title: str) -> str:
    """The text of docs/design.md's `## title` section."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert m, f'docs/design.md has no section "{title}"'
    return m.group(1)


def names_each(text: str, places: list) -> None:
    """The section names each (file, symbol) the test changes."""
    flat = " ".join(text.split())
    missing = [(f, s) for f, s in places if f not in flat or s not in flat]
    assert missing == [], f"the how-to no longer names {missing}"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """plyc's cache for this module's builds: a changed runtime is built
    there, not in the user's, once for the tests that change it alike."""
    d = tmp_path_factory.mktemp("cache")
    d.chmod(0o700)
    return d


def runtime_copy(tmp_path: Path, monkeypatch, cache: Path) -> Path:
    """A copy of runtime-c/ the build uses."""
    rt = tmp_path / "runtime-c"
    shutil.copytree(toolchain.runtime_dir().resolve(), rt)
    monkeypatch.setattr(toolchain, "runtime_dir", lambda: rt)
    monkeypatch.setenv("PLYC_CACHE", str(cache))
    return rt


def insert_before_end(path: Path, opening: str, line: str) -> None:
    """line added as the last entry of the C initializer or enum that
    starts with `opening` (before its closing `};`)."""
    text = path.read_text()
    start = text.index(opening)
    end = text.index("\n};", start)
    path.write_text(text[:end] + "\n" + line + text[end:])


def run_tracer(out: Path) -> str:
    proc = subprocess.run([str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# --- every path the document names ---------------------------------------------------

PATH = re.compile(r"\b((?:plyc|runtime-c|tests|templates|docs|bench)/[\w./*-]*\w)")
# named, but of another project (ply's own scripts folder)
NOT_OURS = {"scripts/opensnoop.ply"}


def test_every_path_the_design_names_exists():
    named = {p for p in PATH.findall(DOC) if "NAME" not in p}
    assert len(named) > 60
    missing = sorted(p for p in named if not list(ROOT.glob(p)) and p not in NOT_OURS)
    assert missing == []


# A file named by its own name or its path inside a folder of the tree
# (`sema/looks.py`, `output/ply.c`, `plyc.bpf.h`): some file of the
# repository's must end so.
MODULE = re.compile(r"(?<![\w./-])((?:[\w*.-]+/)*[\w*-]+(?:\.[\w-]+)*\.(?:py|c|h|j2|lark|md|sh|toml))\b")
# named, but none of the repository's files: other projects' (libbpf's, the
# kernel's) and what a build writes
ELSEWHERE = {"arch/*/include/uapi/asm/ptrace.h", "bpf_tracing.h", "vmlinux.h",
             "plyc_syscalls.h"}     # written by toolchain.py into the runtime it builds


def repository_files() -> list:
    return [p.relative_to(ROOT).as_posix() for d in ("plyc", "runtime-c", "templates", "tests", "docs", "bench",
                                                     "scripts", "examples")
            for p in (ROOT / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts] + \
        [p.name for p in ROOT.iterdir() if p.is_file()]


def unfound(names: set, files: list) -> list:
    return sorted(n for n in names if n not in ELSEWHERE and "NAME" not in n and not any(
        fnmatch.fnmatch(f, n) or fnmatch.fnmatch(f, "*/" + n) for f in files))


def test_every_module_the_design_names_exists():
    """Bare names too: design.md once named sema/widths.py a release after
    it had become sema/looks.py, which the check above (paths from the top)
    let by."""
    files = repository_files()
    assert unfound({"sema/widths.py", "sema/looks.py", "opt/keys.py", "plyc.bpf.h"}, files) == ["sema/widths.py"]
    named = set(MODULE.findall(DOC))
    assert len(named) > 150
    assert unfound(named, files) == []


# --- How to add a provider -----------------------------------------------------------

TOY_H = """\
/* toy: tests/test_howtos.py's provider, the cpu clock on every CPU. */
#ifndef PLYC_PROVIDER_TOY_H
#define PLYC_PROVIDER_TOY_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "plyc_provider.h"

struct plyc_toy_data {
\tuint64_t period;           /* ns between two runs of the program, per CPU */
};

extern const struct plyc_provider plyc_provider_toy;

#endif
"""

TOY_C = """\
/* toy: tests/test_howtos.py's provider, the cpu clock on every CPU. */
#include "plyc_attach.h"
#include "providers/toy.h"

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
\t\t  struct plyc_links *links)
{
\tconst struct plyc_toy_data *d = c->pr->data;
\tstruct perf_event_attr attr = {
\t\t.type = PERF_TYPE_SOFTWARE,
\t\t.size = sizeof(attr),
\t\t.config = PERF_COUNT_SW_CPU_CLOCK,
\t\t.sample_period = d->period,
\t};

\t(void)obj;
\treturn plyc_attach_perf(c, bp, links, &attr, -1, "the toy clock");
}

const struct plyc_provider plyc_provider_toy = { .name = "toy", .attach = attach };
"""


def _toy_fields(spec) -> Fields:
    return Fields(count=spec.arg)


def _toy_make(spec, f: Fields) -> Target:
    if not (f.count or "").isdigit() or int(f.count) <= 0:
        raise spec_error(spec, f"'{f.count}' is not a period in ns", "e.g. toy:10000000")
    t = Target(TOY, spec, f.count)
    t.period_ns = int(f.count)
    return t


TOY = Provider(name="toy", aliases=(), fields=_toy_fields, make=_toy_make, spell=lambda f: f.count or "",
               section=lambda t: "perf_event", ctx_decl="void *ctx", example="10000000",
               c_provider="plyc_provider_toy",
               c_data=lambda t, p: ("plyc_toy_data", [("period", f"{t.period_ns}ULL")]),
               doc="the cpu clock on every CPU (a test's)")

TOY_SCRIPT = "toy:10000000 { @ticks = count(); }\ninterval:300ms { exit(); }\n"


def _bt_fields(spec):
    """specs.fields with the toy's branch."""
    if spec.provider == "toy":
        return Fields(count=spec.parts[0])
    return FIELDS(spec)


FIELDS = btspecs.fields


@pytest.fixture
def toy_provider(tmp_path, monkeypatch, cache):
    """docs/design.md, "How to add a provider", steps 1-4 done for `toy`."""
    steps = section("How to add a provider")
    assert "three files and two registry lines" in " ".join(steps.split())
    names_each(steps, [("plyc/providers/NAME.py", "Provider"), ("runtime-c/providers/NAME.h", "struct plyc_NAME_data"),
                       ("runtime-c/providers/NAME.c", "plyc_provider.h"), ("plyc/providers/__init__.py", "REGISTRY"),
                       ("runtime-c/plyc_providers.h", '#include "providers/NAME.h"'),
                       ("plyc/frontends/bpftrace/probes.py", "PROBE_TYPES"),
                       ("plyc/frontends/bpftrace/specs.py", "fields")])
    # the files the steps name are where the existing providers are
    assert (ROOT / "plyc/providers/perfevent.py").exists() and (ROOT / "runtime-c/providers/perfevent.h").exists()
    # 1. the Python half (TOY above) and 3. its registry line
    monkeypatch.setattr(providers, "REGISTRY", providers.REGISTRY + (TOY,))
    # 2. the C half, and 3. its registry line
    rt = runtime_copy(tmp_path, monkeypatch, cache)
    (rt / "providers" / "toy.h").write_text(TOY_H)
    (rt / "providers" / "toy.c").write_text(TOY_C)
    reg = rt / "plyc_providers.h"
    reg.write_text(reg.read_text().replace("\n#endif", '\n#include "providers/toy.h"\n\n#endif'))
    # 4. bpftrace's spelling (PROBE_TYPES is read through BY_NAME, built from it)
    monkeypatch.setitem(btprobes.BY_NAME, "toy", btprobes.ProbeType("toy", (), (1,), "toy:period"))
    monkeypatch.setattr(btspecs, "fields", _bt_fields)
    return tmp_path


def test_a_provider_added_as_the_doc_says_builds(toy_provider):
    out = toy_provider / "ticks"
    compiled = driver.build(TOY_SCRIPT, "ticks.ply", str(out), driver.Options(env={}))
    assert compiled.ir.probes[0].provider is TOY
    assert "&plyc_provider_toy" in compiled.generated.loader_c
    assert ".period = 10000000ULL" in compiled.generated.loader_c
    # its program named as the provider says (none of its facts given: its name and argument)
    assert 'SEC("perf_event")\nint toy_10000000(' in compiled.generated.bpf_c
    assert os.access(out, os.X_OK)
    # its errors are the user's, located
    with pytest.raises(PlycError) as e:
        driver.lower("toy:soon { @n = count(); }", "t.ply", driver.Options(env={}))
    assert "'soon' is not a period in ns" in e.value.render()
    # bpftrace's spelling reaches it too
    bt = driver.compile_source("toy:10000000 { @[comm] = count(); }", "t.bt", driver.Options(env={}))
    assert bt.ir.probes[0].provider is TOY and bpf_compile_error(bt) == ""


@pytest.mark.bpf
def test_a_provider_added_as_the_doc_says_runs(toy_provider):
    out = toy_provider / "ticks"
    driver.build(TOY_SCRIPT, "ticks.ply", str(out), driver.Options(env={}))
    m = re.search(r"@ticks: (\d+)", run_tracer(out))
    assert m and int(m.group(1)) > 0


# --- How to add a builtin function ---------------------------------------------------

POPCOUNT = I.Intrinsic("popcount", "the bits set in an integer")


def check_popcount(chk, call):
    x = chk.expr(call.args[0])
    if not x.type.is_int:
        chk.err(f"popcount() needs an integer, got {x.type}", call.args[0].span)
    return chk.make_call(call, [x], T.U64)


def emit_popcount(g, call):
    return f"((__u64)__builtin_popcountll((__u64)({g.scalar(call.args[0])})))"


@pytest.fixture
def popcount(monkeypatch):
    """docs/design.md, "How to add a builtin function", steps 1-3 done for popcount()."""
    steps = section("How to add a builtin function")
    names_each(steps, [("plyc/ir/intrinsics.py", "ALL"), ("plyc/codegen/intrinsics.py", "EMIT"),
                       ("plyc/builtins.py", "FUNCTIONS"), ("plyc/frontends/bpftrace/lower.py", "SHARED"),
                       ("tests/test_intrinsics.py", "SCRIPTS")])
    monkeypatch.setattr(I, "ALL", I.ALL + (POPCOUNT,))                         # 1.
    monkeypatch.setitem(I.BY_NAME, POPCOUNT.name, POPCOUNT)
    monkeypatch.setitem(CI.EMIT, POPCOUNT, emit_popcount)                     # 2.
    monkeypatch.setitem(B.FUNCTIONS, "popcount", B.Func("popcount", (1, 1), check_popcount, POPCOUNT))  # 3.
    # bpftrace's list of the functions it lowers is built from SHARED at import
    monkeypatch.setattr(btlower, "SHARED", btlower.SHARED + ("popcount",))
    monkeypatch.setattr(btlower, "FUNCTIONS", btlower.FUNCTIONS + ("popcount",))


POPCOUNT_SCRIPT = 'BEGIN { printf("%d\\n", popcount(0xff00f0)); exit(); }'


def test_a_builtin_added_as_the_doc_says_compiles(popcount):
    for name in ("t.ply", "t.bt"):
        compiled = driver.compile_source(POPCOUNT_SCRIPT, name, driver.Options(env={}))
        assert "__builtin_popcountll(" in compiled.generated.bpf_c
        assert bpf_compile_error(compiled) == ""
    with pytest.raises(PlycError) as e:
        driver.lower('BEGIN { print(popcount(comm)); }', "t.ply", driver.Options(env={}))
    assert "popcount() needs an integer, got char[16]" in e.value.render()
    # step 4: tests/test_intrinsics.py wants a script of it
    import test_intrinsics
    test_intrinsics.test_every_intrinsic_has_one_emitter_and_every_emitter_an_intrinsic()
    with pytest.raises(AssertionError):
        test_intrinsics.test_scripts_cover_every_intrinsic()


@pytest.mark.bpf
def test_a_builtin_added_as_the_doc_says_runs(popcount, tmp_path):
    out = tmp_path / "pop"
    driver.build(POPCOUNT_SCRIPT, "pop.ply", str(out), driver.Options(env={}))
    assert run_tracer(out).strip() == "12"


# --- How to add an aggregation -------------------------------------------------------

SUMSQ = AGG.Aggregation("sumsq", takes_x=True, arity=1, kind="PLYC_A_SUMSQ",
                        layout=lambda cname, info: AGG.Layout("__u64", 8))


def update_sumsq(v, x, m):
    return [f"*{v} += (__u64)({x}) * (__u64)({x});"]


@pytest.fixture
def sumsq(tmp_path, monkeypatch, cache):
    """docs/design.md, "How to add an aggregation", steps 1-3 done for
    sumsq(x), the sum of the squares."""
    steps = section("How to add an aggregation")
    names_each(steps, [("plyc/codegen/aggregations.py", "UPDATE"), ("plyc/aggregations.py", "TABLE"),
                       ("plyc/frontends/ply/lower.py", "AGGREGATIONS"),
                       ("plyc_rt.h", "enum plyc_agg"), ("runtime-c/maps/aggregations.c", "struct plyc_agg_ops"),
                       ("runtime-c/output/ply.c", "aggs[]"), ("runtime-c/output/bpftrace.c", "SCALAR")])
    monkeypatch.setitem(CAGG.UPDATE, "sumsq", update_sumsq)                     # 1.
    monkeypatch.setattr(AGG, "TABLE", AGG.TABLE + (SUMSQ,))                     # 2.
    monkeypatch.setitem(AGG.AGGREGATIONS, "sumsq", SUMSQ)    # built from TABLE at import
    monkeypatch.setattr(plylower, "AGGREGATIONS", plylower.AGGREGATIONS + ("sumsq",))     # ply's name of it
    rt = runtime_copy(tmp_path, monkeypatch, cache)                                    # 3.
    insert_before_end(rt / "plyc_rt.h", "enum plyc_agg {", "\tPLYC_A_SUMSQ,")
    insert_before_end(rt / "maps" / "aggregations.c", "struct plyc_agg_ops ops[] = {",
                      '\t[PLYC_A_SUMSQ] = { "sumsq()", .merge = merge_words, .scalar = scalar_word, '
                      ".metric_type = type_counter, .metric = metric_count },")
    insert_before_end(rt / "output" / "ply.c", "aggs[] = {", "\t[PLYC_A_SUMSQ] = SCALAR,")
    insert_before_end(rt / "output" / "bpftrace.c", "aggs[] = {", "\t[PLYC_A_SUMSQ] = SCALAR,")
    return tmp_path


SUMSQ_SCRIPT = "BEGIN { @sq = sumsq(3); @sq = sumsq(4); @by[1] = sumsq(5); exit(); }"


def test_an_aggregation_added_as_the_doc_says_builds(sumsq):
    out = sumsq / "sq"
    compiled = driver.build(SUMSQ_SCRIPT, "sq.ply", str(out), driver.Options(env={}))
    assert compiled.ir.maps["@sq"].agg is SUMSQ
    assert "PLYC_A_SUMSQ" in compiled.generated.loader_c
    assert os.access(out, os.X_OK)
    with pytest.raises(PlycError) as e:
        driver.lower("BEGIN { @sq = sumsq(); }", "t.ply", driver.Options(env={}))
    assert "sumsq() takes 1 argument, got 0" in e.value.render()   # the arity check comes with the entry


OPS_OF_SUMSQ = """\
#include <stdio.h>
#include "plyc_agg.h"

int main(void)
{
	struct plyc_map m = { .name = "@sq", .agg = PLYC_A_SUMSQ };
	const struct plyc_agg_ops *o = plyc_agg_ops(&m);

	printf("%s %d\\n", o->name ? o->name : "none", o->scalar != NULL);
	return 0;
}
"""


def test_an_aggregation_added_as_the_doc_says_has_its_runtime_ops(sumsq):
    """The runtime's entry (step 3) is the new kind's, not the plain map's
    it would fall back to (which prints a one-word value the same)."""
    tc = toolchain.Toolchain.detect()
    lib, rt = tc.runtime_lib(), toolchain.runtime_dir()
    (sumsq / "ops.c").write_text(OPS_OF_SUMSQ)
    tc.run([*tc.cc, "-std=gnu11", *toolchain.WARNINGS, "-I", rt, sumsq / "ops.c", lib, "-static", *tc.ldflags,
            *tc.libs, "-o", sumsq / "ops"], "linking a check of the runtime's table")
    assert subprocess.run([sumsq / "ops"], capture_output=True, text=True, check=True).stdout == "sumsq() 1\n"


@pytest.mark.bpf
def test_an_aggregation_added_as_the_doc_says_runs(sumsq):
    out = sumsq / "sq"
    driver.build(SUMSQ_SCRIPT, "sq.ply", str(out), driver.Options(env={}))
    assert run_tracer(out) == "\n@sq: 25\n\n@by:\n{ 1 }: 25\n"


# --- How to add a subcommand, a front end ---------------------------------------------

def test_a_subcommand_added_as_the_doc_says(monkeypatch, capsys):
    steps = section("How to add a subcommand")
    names_each(steps, [("plyc/commands/NAME.py", "add(sub)"), ("set_defaults(func=run)", "run(args) -> int"),
                       ("cli.COMMANDS", "PlycError")])

    def add(sub):
        p = sub.add_parser("hello", help="say hello")
        p.add_argument("who")
        p.set_defaults(func=run)

    def run(args) -> int:
        if args.who == "nobody":
            raise error("nobody to greet", None)
        print(f"hello {args.who}")
        return 0

    monkeypatch.setattr(cli, "COMMANDS", cli.COMMANDS + (types.SimpleNamespace(add=add, run=run),))
    assert cli.main(["hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert cli.main(["hello", "nobody"]) == 1
    assert "nobody to greet" in capsys.readouterr().err


def test_the_front_end_how_to_is_done_in_test_frontends():
    steps = section("How to add a front end")
    sig = re.search(r"`FrontEnd\((.*?)\)`", steps).group(1)
    assert [a.split("=")[0].strip() for a in sig.split(",")] == list(febase.FrontEnd.__dataclass_fields__)
    names_each(steps, [("plyc/frontends/registry.py", "FRONTENDS"), ("tests/test_frontends.py", ".toy")])
    assert "def test_a_new_front_end_needs_no_driver_change" in (ROOT / "tests" / "test_frontends.py").read_text()
