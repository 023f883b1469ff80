"""bpftrace 0.27's block scopes of scratch variables (plyc/frontends/bpftrace/
scopes.py, docs/bpftrace.md "Scopes"): what 0.27 refuses, plyc refuses with a
located error, beside 0.27's own words for it (the `bpf` test runs 0.27 on
each); built with `--bpftrace-output 0.17`, the scripts 0.17 runs build as
0.17's probe-wide variables. What 0.27 runs is tests/runtime/bt-scopes.test
(and bt-017-scopes.test for 0.17)."""
import subprocess

import pytest

from plyc import driver
from plyc.diag import PlycError

# script, plyc's error (line:col: message), 0.27's words, whether 0.17's syntax (no let, no for)
REFUSED = [
    ("BEGIN { if (1) { $x = 1; } print($x); exit(); }",
     "1:34: error: $x is not defined here: a variable first assigned in a block is that block's own",
     "Undefined or undeclared variable: $x", True),
    ("BEGIN { if (1) { $x = 1; } else { $x = 2; } print($x); exit(); }",
     "1:51: error: $x is not defined here", "Undefined or undeclared variable: $x", True),
    ("BEGIN { if (1) { if (1) { $x = 2; } print($x); } exit(); }",
     "1:43: error: $x is not defined here", "Undefined or undeclared variable: $x", True),
    ("BEGIN { { $x = 1; } print($x); exit(); }",
     "1:27: error: $x is not defined here", "Undefined or undeclared variable: $x", False),
    ("BEGIN { $i = 0; while ($i < 3) { $y = $i; $i++; } print($y); exit(); }",
     "1:57: error: $y is not defined here", "Undefined or undeclared variable: $y", True),
    ("BEGIN { unroll(2) { $y = 1; } print($y); exit(); }",
     "1:37: error: $y is not defined here", "Undefined or undeclared variable: $y", True),
    ("BEGIN { for ($i : 0..3) { } print($i); exit(); }",
     "1:35: error: $i is not defined here: a loop's variable is the loop's own",
     "Undefined or undeclared variable: $i", False),
    ("BEGIN { if (1) { $x = 1; } $x += 1; exit(); }",
     "1:28: error: $x is not defined here", "Undefined or undeclared variable: $x", True),
    ("BEGIN { if (1) { $x = 1; } $x++; exit(); }",
     "1:28: error: $x is not defined here", "Undefined or undeclared variable: $x", True),
    ("BEGIN { @m[1] = 5; if (1) { find(@m, 1, $v); } print($v); exit(); }",
     "1:54: error: $v is read before it is assigned", "Undefined or undeclared variable: $v", False),
    ("BEGIN { $x = 1; if (1) { let $x = 2; } exit(); }",
     "1:26: error: variable $x was already declared: bpftrace 0.27 does not allow shadowing it in a block",
     "Variable shadowing is not allowed", False),
    ("BEGIN { let $x = 1; let $x = 2; print($x); exit(); }",
     "1:21: error: variable $x was already declared: bpftrace 0.27 does not allow declaring it twice",
     "Variable shadowing is not allowed", False),
    ("BEGIN { $i = 5; for ($i : 0..2) { } exit(); }",
     "1:22: error: the loop variable $i is already a variable here", "Loop declaration shadows existing variable",
     False),
    ("BEGIN { let $x; print($x); exit(); }",
     "1:23: error: $x is declared with no type and never assigned: its type is unknown",
     "Could not resolve the type of this variable", False),
]


def check(source: str, version: str = "0.27"):
    return driver.lower(source, "t.bt", driver.Options(env={}, frontend={"bpftrace-output": version}))


@pytest.mark.parametrize("source,error,words,old", REFUSED, ids=range(len(REFUSED)))
def test_refused_as_0_27_refuses(source, error, words, old):
    with pytest.raises(PlycError) as info:
        check(source)
    text = info.value.render()
    assert text.startswith(f"t.bt:{error}"), text
    assert "\n" + source + "\n" in text and "^" in text        # the line, a caret under the place


@pytest.mark.parametrize("source", [s for s, _, _, old in REFUSED if old])
def test_0_17_output_keeps_the_probes_variables(source):
    """Debian 12's bpftrace reads them as the probe's (zero where unassigned)."""
    prog = check(source, "0.17")
    assert prog.probes[0].locals


def test_a_hint_names_the_017_option():
    with pytest.raises(PlycError) as info:
        check(REFUSED[0][0])
    assert "note: $x was assigned at line 1, in a block that has ended (bpftrace 0.27 scopes a variable by " \
        "block): assign it, or 'let $x;', before that block, or build with --bpftrace-output 0.17" \
        in info.value.render()


def test_two_variables_of_one_name_are_two_locals():
    """Sibling blocks' `$x` of two types, and a `let $x` after a block that
    had its own: each a local of its own type (the later `x'2`, shown `$x`)."""
    prog = check('BEGIN { if (1) { $x = 1; } if (1) { $x = "s"; } let $x; $x = (uint8)2; print($x); }')
    locals_ = {name: str(t) for name, t in prog.probes[0].locals.items()}
    assert locals_ == {"x": "s64", "x'2": "char[8]", "x'3": "u8"}


def test_a_later_error_names_the_variable_as_written():
    with pytest.raises(PlycError) as info:
        check('BEGIN { if (1) { $x = 1; } if (1) { $x = "s"; $x = 1; } }')
    assert "$x was char[8] and can't now hold s64" in info.value.render()
    assert "x'2" not in info.value.render()


def test_each_error_at_once_with_the_others():
    """The scoping errors come with the lowering's own, in the script's order."""
    with pytest.raises(PlycError) as info:
        check("BEGIN { if (1) { $x = 1; } print($x); foo(); $y = $x; }")
    lines = [ln for ln in info.value.render().splitlines() if ": error: " in ln]
    assert [ln.split(": error: ")[0] for ln in lines] == ["t.bt:1:34", "t.bt:1:39", "t.bt:1:51"]


@pytest.mark.bpf
def test_bpftrace_0_27_refuses_them(tmp_path, bpftrace27):
    """0.27 itself refuses each script above, in its words."""
    for i, (source, _, words, _) in enumerate(REFUSED):
        path = tmp_path / f"s{i}.bt"
        path.write_text(source + "\n")
        run = subprocess.run(bpftrace27([path.name], tmp_path), capture_output=True, text=True, timeout=120)
        assert run.returncode != 0 and words in run.stderr, (source, run.stderr)
