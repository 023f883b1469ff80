"""bpftrace 0.27's smallest-type integers where sizeof() and typeof() see
them (plyc/frontends/bpftrace/smalltypes.py, docs/bpftrace.md "Integer
literals' types"), and nowhere else: the values keep plyc's types. Each size
below is 0.27.1's (tests/runtime/bt-smalltypes.test runs them beside it)."""
import pytest

from plyc import driver
from plyc.diag import PlycError
from plyc.ir import nodes as ir


def lower(source: str) -> ir.Program:
    return driver.lower(source, "t.bt", driver.Options(env={}))


def sizes(body: str) -> list:
    """The sizeof() constants print() is given, in order."""
    prog = lower("BEGIN { " + body + " }")
    return [n.args[0].value for n in ir.walk(prog.probes[0].body)
            if isinstance(n, ir.EmitEvent) and n.args and isinstance(n.args[0], ir.IntConst)]


SIZES = [
    ("print(sizeof(1)); print(sizeof(-129)); print(sizeof(70000)); print(sizeof(18446744073709551615));", [1, 2, 4, 8]),
    ("print(sizeof(1 << 3)); print(sizeof(1 << 40)); print(sizeof(1 ? 1 : 1000));", [1, 8, 1]),
    ("$x = 1; $x = 300; print(sizeof($x));", [2]),
    ("$x = 1; $x = (uint32)5; print(sizeof($x));", [4]),
    ("$x = -1; $x = (uint32)5; print(sizeof($x));", [8]),
    ("$x = 127; $x += 1; $y = 1; $y++; print(sizeof($x)); print(sizeof($y));", [8, 8]),
    ("$y = 1; $x = $y; $y = $x; $z = 1; $z = $z; print(sizeof($x)); print(sizeof($z));", [1, 1]),
    ("$a = 1; print(sizeof($a + 1)); print(sizeof(-$a)); print(sizeof($a == 1)); print(sizeof(!$a));", [8, 8, 1, 1]),
    ("$c = 1; print(sizeof($c ? 1 : 1000)); print(sizeof($c ? (uint8)1 : 100));", [2, 1]),
    ('print(sizeof((1, 1000))); print(sizeof(("a", 1))); $r = (a=1, b="x"); print(sizeof($r.a));', [4, 3, 1]),
    ("@m = 1; @m = -100000; @n++; print(sizeof(@m)); print(sizeof(@n));", [4, 8]),
    ("for ($i : 0..1000) { print(sizeof($i)); }", [2]),
    ("$p = pid; print(sizeof($p));", [4]),
]


@pytest.mark.parametrize("body,expected", SIZES, ids=range(len(SIZES)))
def test_sizes_as_0_27(body, expected):
    assert sizes(body) == expected


def test_values_keep_plycs_types():
    """`$x = 1` is still a 64-bit local: what it computes and prints is as before."""
    prog = lower("BEGIN { $x = 1; $x += 127; $y = (typeof($x))300; print(($x, $y, sizeof($x))); }")
    assert {n: str(t) for n, t in prog.probes[0].locals.items()} == {"x": "s64", "y": "s64"}


def test_typeof_wraps_and_refuses_as_0_27():
    prog = lower("BEGIN { $x = 1; $y = (typeof($x))300; print($y); }")
    cast = next(n for n in ir.walk(prog.probes[0].body) if isinstance(n, ir.SetLocal) and n.name == "y").value
    assert str(cast.type) == "s8"
    with pytest.raises(PlycError) as info:
        lower("BEGIN { $x = 1; let $y: typeof($x) = 300; }")
    assert "type mismatch for $y: 300 does not fit in its type, s8" in info.value.render()
    with pytest.raises(PlycError) as info:
        lower('BEGIN { $s = "ab"; let $y: typeof($s) = "abcdef"; }')
    assert "a string of 7 bytes does not fit in its char[3]" in info.value.render()


def test_string_sizes_are_027s():
    # str(p) is string[max_strlen], not plyc's padded read of max_strlen + 1
    # bytes; str(p, n) string[n + 1] up to it; str() of a literal number its
    # text (tests/runtime/bt-sizeof-strings.test runs them beside 0.27)
    cfg = "config = { max_strlen = 64 } "
    prog = lower(cfg + "BEGIN { $p = (int8 *)0; $x = str($p); @m = str($p); let $t: typeof(str($p)) = str($p); "
                 "print(sizeof(str($p))); print(sizeof($x)); print(sizeof(@m)); print(sizeof($t)); "
                 "print(sizeof(str($p, 10))); print(sizeof(str($p, 100))); print(sizeof(str(-5))); }")
    got = [n.args[0].value for n in ir.walk(prog.probes[0].body)
           if isinstance(n, ir.EmitEvent) and n.args and isinstance(n.args[0], ir.IntConst)]
    assert got == [64, 64, 64, 64, 11, 64, 3]
    assert sizes("$p = (int8 *)0; print(sizeof(str($p))); print(sizeof(str($p, 1023)));") == [1024, 1024]
