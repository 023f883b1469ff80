"""A provider is all in one place (docs/design.md, "How to add a
provider"): its Python half in plyc/providers/ says everything the code
generator and the front ends ask of it (how its programs are named,
whether its stack is user memory, what its context holds, ...), so no other
module of plyc spells a provider's name, but the front ends' own spelling
tables, which map their languages' words to providers. Read from the source
(ast): a string constant that is a provider's name or long alias."""
import ast
from pathlib import Path

from plyc import providers

PLYC = Path(__file__).resolve().parent.parent / "plyc"

# The front ends' spelling of probes: each language's words for them.
SPELLING = {
    "frontends/bpftrace/probes.py",     # bpftrace's probe types and their rules
    "frontends/bpftrace/specs.py",      # a bpftrace spec's parts into a provider's Fields
    "frontends/ply/parser.py",          # ply's BEGIN and END tokens
    "frontends/argdist/spec.py",        # argdist's p, r, t, u
}
# A string that is a provider's name, meaning something else there.
NOT_A_PROVIDER = {
    ("frontends/argdist/__init__.py", "interval"),      # argdist's -i option (the report's period)
    ("codegen/resources.py", "fentry"),                 # the build option that keeps kprobes' fentry twins
}


def provider_names() -> set:
    """Names and aliases of the registered providers (aliases of a letter or
    two, as `k` or `it`, are no words anyone greps for)."""
    return {n for p in providers.REGISTRY for n in (p.name, *p.aliases) if len(n) > 3}


def named(source: str, names: set) -> list:
    """(line, name) of each string constant in source that is one of names."""
    return sorted((n.lineno, n.value) for n in ast.walk(ast.parse(source))
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names)


def test_the_finder_finds_a_provider_named():
    names = provider_names()
    assert {"kprobe", "tracepoint", "BEGIN", "fentry", "iter"} <= names
    assert named('if p.name in ("uprobe", "uretprobe"):\n    x = "ok"\n', names) == [(1, "uprobe"), (1, "uretprobe")]
    assert named('err(f"kprobe probes have {x}")\n', names) == []      # a message's word is no test


def test_no_module_outside_the_providers_names_one():
    names = provider_names()
    found = []
    for path in sorted(PLYC.rglob("*.py")):
        rel = path.relative_to(PLYC).as_posix()
        if rel.startswith("providers/") or rel in SPELLING:
            continue
        found += [f"{rel}:{line}: {name!r}" for line, name in named(path.read_text(), names)
                  if (rel, name) not in NOT_A_PROVIDER]
    assert found == []


def test_the_spelling_tables_are_there():
    """An entry of SPELLING or NOT_A_PROVIDER that no longer names one is struck off."""
    names = provider_names()
    for rel in SPELLING:
        assert named((PLYC / rel).read_text(), names), rel
    for rel, name in NOT_A_PROVIDER:
        assert name in {n for _, n in named((PLYC / rel).read_text(), names)}, (rel, name)


def test_the_core_tables_speak_no_dialect():
    """builtins.py and aggregations.py hold what every front end shares;
    a language's own rule or wording is a hook on its Sema (plyc/sema/typer.py:
    printf_conversions, printf_accepts, AGG_WORDS), and
    each front end names the aggregations it has in a table of its own."""
    for table in ("builtins.py", "aggregations.py"):
        text = (PLYC / table).read_text().lower()
        assert "bpftrace" not in text and "0.27" not in text, table
    from plyc import aggregations as AGG
    assert not hasattr(AGG, "get") and not hasattr(AGG.Aggregation, "public")


def test_a_front_ends_words_reach_the_core_tables_errors():
    """The hook is used: the same mistake in ply's and in bpftrace's words."""
    from plyc import driver
    from plyc.diag import PlycError
    import pytest
    for source, name, want in (
            ('BEGIN { printf("%d\\n", username); }', "t.bt", "unsupported format specifier for type 'username_t': d"),
            ('BEGIN { printf("%d\\n", "ab"); }', "t.ply", "'%d' can't print a value of type"),
            ("BEGIN { @h = quantize(1); @h = hist(1, 9); }", "t.ply", "@maps hold aggregations: assign count()/sum()/min()/max()/avg()/quantize()/lquantize(),"),
            ("BEGIN { @h = hist(1, 9); }", "t.bt", "hist: bits 9 must be 0..5")):
        with pytest.raises(PlycError) as e:
            driver.lower(source, name, driver.Options(env={}))
        assert want in e.value.render(), e.value.render()


def test_whether_a_name_is_a_glob_is_asked_in_one_place():
    # the test of glob characters (* ? [) was spelt in six modules
    import re
    spelt = re.compile(r'''"\*\?\[|\[\*\?\\\[\]''')
    where = sorted(str(p.relative_to(PLYC)) for p in PLYC.rglob("*.py") if spelt.search(p.read_text()))
    assert where == ["providers/base.py"], where
    from plyc.providers.base import is_glob
    assert [is_glob(x) for x in ("vfs_*", "a?c", "x[ab]", "vfs_read", "")] == [True, True, True, False, False]
