"""bpftrace 0.27's folding of literal expressions (plyc/frontends/bpftrace/
literals.py, docs/bpftrace.md "Literal expressions"): the folder's values,
types and refusals; each refusal located as 0.27 locates it, and 0.27 itself
refusing the same scripts in the same words (the `bpf` tests); random literal
expressions folded by plyc and printed by 0.27, beside each other; the three
places where plyc refuses what 0.27 gets wrong. What the tracer prints of
folded literals is tests/runtime/bt-literal-fold.test (beside 0.27) and
bt-017-literal-arith.test (a 0.17 build folds none)."""
import random
import re
import subprocess

import pytest

from plyc import driver
from plyc.diag import PlycError
from plyc.frontends.bpftrace import ast as A
from plyc.frontends.bpftrace import literals
from plyc.frontends.bpftrace.parser import parse

FLOW = literals.FLOW
UNDERFLOW = literals.UNDERFLOW
I64_MIN, I64_MAX, U64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1


def folded(text: str):
    """The expression's fold: an int, 'true'/'false', None (no literal
    expression) or the refusal's message."""
    e = parse(f"BEGIN {{ $x = {text}; }}", "t.bt").probes[0].body.stmts[0].value
    try:
        lit = literals.fold(e)
    except literals.Refused as refused:
        return refused.message
    if lit is None or not lit.is_bool:
        return lit if lit is None else lit.value
    return "true" if lit.value else "false"


# each measured under bpftrace 0.27.1 (print() of it)
VALUES = [
    ("9223372036854775807 + 1", 1 << 63), ("9223372036854775808 + 9223372036854775807", U64_MAX),
    ("18446744073709551615 + 0", U64_MAX), ("-(-9223372036854775808)", 1 << 63),
    ("-1 * -9223372036854775808", 1 << 63), ("-2 * -4611686018427387904", 1 << 63),
    ("-3074457345618258603 * -3", (1 << 63) + 1), ("0 - 9223372036854775808", I64_MIN),
    ("9223372036854775807 - 18446744073709551615", I64_MIN), ("-9223372036854775807 - 1", I64_MIN),
    ("1 - 2", -1), ("-5 - -7", 2), ("3 * -3", -9), ("0 * -5", 0),
    ("~0", U64_MAX), ("~1", U64_MAX - 1), ("~-1", 0), ("~-5", 4), ("-0", 0), ("~(1 << 63)", I64_MAX),
    ("1 << 63", 1 << 63), ("3 << 63", 1 << 63), ("-1 << 63", I64_MIN), ("-3 << 1", -6),
    ("-8 >> 1", -4), ("-1 >> 63", -1), ("18446744073709551615 >> 63", 1),
    ("-7 / 2", -3), ("7 / -2", -3), ("-7 / -2", 3), ("-7 % 3", -1), ("7 % -3", 1), ("-4 % -3", -1),
    ("18446744073709551615 / 7", 2635249153387078802), ("18446744073709551615 % 7", 1), ("997 / 207", 4),
    ("-5 & 3", 3), ("-1 | 5", -1), ("-1 ^ -1", 0), ("18446744073709551615 & 255", 255),
    ("1 < 2", "true"), ("-1 < 0", "true"), ("18446744073709551615 > 9223372036854775808", "true"),
    ("!5", "false"), ("!0", "true"), ("!-1", "false"), ("2 && -3", "true"), ("0 || 0", "false"),
    ("(1 < 2) + (3 < 4)", "true"), ("true - true", "false"), ("true << false", "false"),
    ("true && 5", "true"), ("-5 || false", "true"), ("true == 1", None), ("true + 1", None),
    ("1 ? 2 : 3", 2), ("0 ? 2 : -3", -3), ("(1 < 2) ? 18446744073709551615 : 1", U64_MAX),
    ("-(1 ? 5 : 6)", -5), ("~(0 ? 5 : 6)", U64_MAX - 6),
    # a cast is computed, never folded: (bool)63 / false is no refusal
    ("(bool)63 / false", None), ("(uint8)300 + 1", None), ("$y + 1", None),
]

REFUSALS = [
    ("~1 + 3", FLOW), ("18446744073709551615 + 1", FLOW), ("9223372036854775808 + 9223372036854775808", FLOW),
    ("0 - 9223372036854775809", FLOW), ("-9223372036854775807 - 2", FLOW), ("9223372036854775807 - -1", FLOW),
    ("4294967296 * 4294967296", FLOW), ("5 / 0", FLOW), ("5 % 0", FLOW), ("true / false", FLOW),
    ("1 << 64", FLOW), ("1 >> 64", FLOW), ("1 << -1", FLOW), ("18446744073709551615 > -1", FLOW),
    ("-1 == 18446744073709551615", FLOW), ("-1 & 18446744073709551615", FLOW),
    ("18446744073709551615 && -1", FLOW), ("(1 ? 18446744073709551615 : 0) + 1", FLOW),
    ("-9223372036854775809", UNDERFLOW), ("-~0", UNDERFLOW),
]

# where 0.27's folder computes through C++'s undefined behaviour: what
# 0.27.1 prints (None: it dies of SIGFPE); plyc refuses each
DEPARTURES = [
    ("1 - -9223372036854775808", "-9223372036854775807"), ("0 - -9223372036854775808", "-9223372036854775808"),
    ("-3074457345618258603 * 3", "9223372036854775807"), ("-9223372036854775808 / -1", None),
    ("-9223372036854775808 % -1", None),
]


@pytest.mark.parametrize("text,value", VALUES, ids=[t for t, _ in VALUES])
def test_folded_as_0_27_folds(text, value):
    assert folded(text) == value


@pytest.mark.parametrize("text,message", REFUSALS + [(t, FLOW) for t, _ in DEPARTURES],
                         ids=[t for t, _ in REFUSALS + DEPARTURES])
def test_refused(text, message):
    assert folded(text) == message


def check(source: str, version: str = "0.27"):
    return driver.lower(source, "t.bt", driver.Options(env={}, frontend={"bpftrace-output": version}))


# a script, where plyc and 0.27 put the refusal (0.27: line:col-end), its words
LOCATED = [
    ("BEGIN { print(~1 + 3); exit(); }", "1:15", FLOW),
    ("BEGIN { $y = 1; @m[pid] = $y + (1 << 64); exit(); }", "1:33", FLOW),
    ("BEGIN { if (pid > 0) { print(9223372036854775808 + 9223372036854775808); } exit(); }", "1:30", FLOW),
    ("BEGIN { print(sizeof(~1 + 3)); exit(); }", "1:22", FLOW),
    ("BEGIN { $t = (1, 2); print($t[5 / 0]); exit(); }", "1:31", FLOW),
    ("BEGIN { print((uint8)(5 % 0)); exit(); }", "1:23", FLOW),
    ("BEGIN { print(1 ? 2 : (3 - 18446744073709551615 - 5)); exit(); }", "1:24", FLOW),
    ("BEGIN {\n  $a = 18446744073709551615 > -1;\n  exit();\n}", "2:8", FLOW),
    ("BEGIN { print(-9223372036854775809); exit(); }", "1:15", UNDERFLOW),
]


@pytest.mark.parametrize("source,where,message", LOCATED, ids=range(len(LOCATED)))
def test_refusal_located(source, where, message):
    with pytest.raises(PlycError) as info:
        check(source)
    text = info.value.render()
    assert text.startswith(f"t.bt:{where}: error: {message}\n"), text
    line = source.splitlines()[int(where.split(":")[0]) - 1]
    assert f"\n{line}\n" in text and "^" in text        # the line, a caret under the place


def test_0_17_folds_none():
    """0.17 computes literal expressions as any value (bt-017-literal-arith):
    what 0.27 refuses builds."""
    check("BEGIN { printf(\"%ld %ld\\n\", ~1 + 3, 9223372036854775807 - -1); exit(); }", "0.17")


@pytest.mark.bpf
def test_bpftrace_0_27_refuses_them(tmp_path, bpftrace27):
    """0.27 refuses each located script in the same words, at the same place."""
    for i, (source, where, message) in enumerate(LOCATED):
        path = tmp_path / f"s{i}.bt"
        path.write_text(source + "\n")
        run = subprocess.run(bpftrace27([path.name], tmp_path), capture_output=True, text=True, timeout=120)
        assert run.returncode != 0 and f"s{i}.bt:{where}-" in run.stderr and message in run.stderr, \
            (source, run.stderr)


@pytest.mark.bpf
def test_bpftrace_0_27_gets_the_departures_wrong(tmp_path, bpftrace27):
    """What plyc refuses on purpose, 0.27 prints wrong (or dies): measured,
    so that a 0.27 that mends it is noticed (docs/bpftrace.md, Against 0.27)."""
    for i, (text, printed) in enumerate(DEPARTURES):
        path = tmp_path / f"d{i}.bt"
        path.write_text(f"BEGIN {{ print({text}); exit(); }}\n")
        run = subprocess.run(bpftrace27([path.name], tmp_path), capture_output=True, text=True, timeout=120)
        if printed is None:
            assert run.returncode < 0, (text, run.returncode, run.stdout, run.stderr)
        else:
            assert run.returncode == 0 and run.stdout.split("\n")[0] == printed, (text, run.stdout, run.stderr)


# --- random literal expressions, plyc's folder beside 0.27's -------------------------

POOL = [0, 1, 2, 3, 5, 7, 8, 63, 64, 65, 127, 128, 255, 256, 1 << 31, 1 << 32, (1 << 32) - 1, 1 << 62,
        I64_MAX, 1 << 63, (1 << 63) + 1, U64_MAX, U64_MAX - 1, 3074457345618258602, 6148914691236517205]
BINARY = "+ - * / % & | ^ << >> == != < <= > >= && ||".split()


def _expression(r: random.Random, depth: int) -> str:
    if depth == 0 or r.random() < 0.3:
        if r.random() < 0.08:
            return r.choice(["true", "false"])
        v = r.choice(POOL) if r.random() < 0.7 else r.randrange(100)
        return f"-{v}" if r.random() < 0.35 else str(v)
    k = r.random()
    if k < 0.2:
        return f"{r.choice('-~!')}({_expression(r, depth - 1)})"
    if k < 0.27:
        return f"({_expression(r, depth - 1)} ? {_expression(r, depth - 1)} : {_expression(r, depth - 1)})"
    return f"({_expression(r, depth - 1)} {r.choice(BINARY)} {_expression(r, depth - 1)})"


class _Dies(Exception):
    """0.27 dies of SIGFPE folding it."""


def _as_0_27(monkeypatch):
    """plyc's folder made to compute the departures as 0.27 does (wrapping
    a signed difference with INT64_MIN on the right and a product of mixed
    signs; dying at INT64_MIN / -1), the oracle the random expressions
    check 0.27 against."""
    compute = literals._compute

    def wrapped(op, x, y, signed):
        if op in ("/", "%") and (x, y) == (I64_MIN, -1):
            raise _Dies()
        v = compute(op, x, y, signed)
        if v is None and signed and (op == "-" and y == I64_MIN and x >= 0 or op == "*" and (x < 0) != (y < 0)):
            v = (x - y if op == "-" else x * y) & U64_MAX
            v = v - (1 << 64) if v > I64_MAX else v
        return v
    monkeypatch.setattr(literals, "_compute", wrapped)


def _run(bpftrace27, tmp_path, texts: list):
    path = tmp_path / "fold.bt"
    path.write_text("BEGIN {\n" + "".join(f"print({t});\n" for t in texts) + "exit(); }\n")
    run = subprocess.run(bpftrace27([path.name], tmp_path), capture_output=True, text=True, timeout=300)
    refused = {int(m.group(1)) - 2 for m in re.finditer(r"fold\.bt:(\d+):[\d-]+: ERROR: " + FLOW, run.stderr)}
    refused |= {int(m.group(1)) - 2 for m in re.finditer(r"fold\.bt:(\d+):[\d-]+: ERROR: " + UNDERFLOW, run.stderr)}
    return run, refused


@pytest.mark.bpf
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_literal_expressions_beside_0_27(seed, tmp_path, bpftrace27, monkeypatch):
    """Each expression's fold (a value, a bool, a refusal) is 0.27's: the
    refusals by one run (0.27 reports each line's), the values by another."""
    _as_0_27(monkeypatch)
    r = random.Random(seed)
    cases = []
    for _ in range(200):
        text = _expression(r, r.randint(1, 3))
        try:
            fold = folded(text)
        except _Dies:
            continue
        if fold is not None:
            cases.append((text, fold))
    refusal = (FLOW, UNDERFLOW)
    run, refused = _run(bpftrace27, tmp_path, [t for t, _ in cases])
    assert run.returncode != 0 or not refused
    wrong = [(t, f) for i, (t, f) in enumerate(cases) if (f in refusal) != (i in refused)]
    assert not wrong, wrong
    values = [(t, f) for t, f in cases if f not in refusal]
    run, _ = _run(bpftrace27, tmp_path, [t for t, _ in values])
    assert run.returncode == 0, run.stderr
    printed = run.stdout.split("\n")
    wrong = [(t, f, p) for (t, f), p in zip(values, printed) if str(f) != p]
    assert not wrong and len(values) > 100, wrong
