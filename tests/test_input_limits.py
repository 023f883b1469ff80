"""The limits of the three front ends' input: constants past 64 bits,
nesting, printf's arguments, large tuples. Valid-looking input that used to
reach clang as C it refuses, or a Python traceback, is either built or
refused with a located error (file:line:col, the line, a caret)."""
import subprocess
import sys
from pathlib import Path

import pytest

from plyc import driver
from plyc.diag import PlycError

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent


def refusal(src: str, name: str = "t.ply") -> str:
    """The rendered errors `plyc check` gives src saved as name (it must fail)."""
    with pytest.raises(PlycError) as info:
        driver.lower(src, name, driver.Options(env={}))
    return info.value.render()


def located(text: str, name: str, line: int, col: int, message: str):
    """text's first diagnostic is at name:line:col, says message, and shows a caret."""
    first, shown, caret = text.split("\n")[:3]
    assert first == f"{name}:{line}:{col}: error: {message}", text
    assert caret.strip().startswith("^") and len(caret) - len(caret.lstrip()) == col - 1, text


# (script, file name, line, col, message): constants the generated C would
# leave undefined or not compile, refused in both script languages.
CONSTANTS = [
    ('BEGIN { exit(1/0); }', "t.ply", 1, 16, "division by zero"),
    ('BEGIN { $x = 3; exit($x % 0); }', "t.ply", 1, 27, "modulo by zero"),
    ('BEGIN { exit(1 << 99); }', "t.ply", 1, 19, "shift count 99 is out of range: it must be 0 to 63"),
    # two literals: 0.27's literal folder refuses the whole expression, in its words
    ('BEGIN { printf("%d\\n", 1<<99999); exit(); }', "t.bt", 1, 24,
     "unable to fold literals due to overflow or underflow"),
    ('BEGIN { printf("%d\\n", 1<<-1); exit(); }', "t.bt", 1, 24, "unable to fold literals due to overflow or underflow"),
    ('BEGIN { $x = 1; printf("%d\\n", $x<<99999); exit(); }', "t.bt", 1, 36,
     "shift count 99999 is out of range: it must be 0 to 63"),
    ('BEGIN { printf("%d\\n", pid >> 64); exit(); }', "t.bt", 1, 31, "shift count 64 is out of range: it must be 0 to 63"),
    ('BEGIN { printf("%d\\n", pid / (2 - 2)); exit(); }', "t.bt", 1, 31, "division by zero"),
    ('BEGIN { printf("%d\\n", $99999999999999999999); exit(); }', "t.bt", 1, 24,
     "$99999999999999999999: a tracer takes at most 128 positional parameters"),
    ('BEGIN { exit(256); }', "t.bt", 1, 14, "exit status 256 is out of range: it must be 0 to 255"),
    ('BEGIN { exit(-1); }', "t.ply", 1, 14, "exit status -1 is out of range: it must be 0 to 255"),
    ('BEGIN { exit(1 << 8); }', "t.ply", 1, 14, "exit status 256 is out of range: it must be 0 to 255"),
    ('interval:99999999999999999999s { exit(); }', "t.ply", 1, 1,
     "interval '99999999999999999999s' is too long: at most 9223372036s"),
    ('interval:s:99999999999999999999 { exit(); }', "t.bt", 1, 1,
     "interval '99999999999999999999s' is too long: at most 9223372036s"),
    ('profile:99999999999:99hz { exit(); }', "t.ply", 1, 1, "CPU 99999999999 is out of range (0 to 8191)"),
    ('BEGIN { printf("a\\0b %d\\n", 1); exit(); }', "t.ply", 1, 16,
     "a NUL character (\\0) in a format string: the rest of it would not be printed"),
    ('BEGIN { printf("a\\x00b %d\\n", 1); exit(); }', "t.bt", 1, 16,
     "a NUL character (\\0) in a format string: the rest of it would not be printed"),
    ('struct S { char x[-1]; }\nBEGIN { printf("%d\\n", sizeof(struct S)); exit(); }', "t.bt", 1, 17,
     "array 'x' has a negative size (-1)"),
    ('struct S { char x[99999999999]; }\nBEGIN { printf("%d\\n", sizeof(struct S)); exit(); }', "t.bt", 1, 17,
     "array 'x' is too large: 99999999999 bytes, at most 2147483647"),
    ('struct S { long x[1 << 99]; }\nBEGIN { exit(); }', "t.bt", 1, 19, "shift count 99 is out of range: it must be 0 to 63"),
    ('enum E { A = 99999999999999999999 };\nBEGIN { printf("%d\\n", A); exit(); }', "t.bt", 1, 14,
     "the constant 99999999999999999999 does not fit in 64 bits"),
    # the build zeroed 2^64 bytes in memset calls, for ever
    ('BEGIN { $s = (string[18446744073709551615])"ab"; print($s); exit(); }', "t.bt", 1, 14,
     "string[18446744073709551615] is larger than a string can be: at most 32768 bytes"),
    ('BEGIN { $s = (buffer[99999])"ab"; exit(); }', "t.bt", 1, 14,
     "buffer[99999] is larger than a string can be: at most 32768 bytes"),
]


@pytest.mark.parametrize("src, name, line, col, message", CONSTANTS)
def test_constants_refused_where_written(src, name, line, col, message):
    located(refusal(src, name), name, line, col, message)


def test_in_range_constants_still_build_to_c():
    for src, name in [('BEGIN { exit(255); }', "t.ply"), ('BEGIN { exit(1 << 7); }', "t.bt"),
                      ('BEGIN { printf("%d\\n", pid >> 63); exit(); }', "t.bt"),
                      ('interval:9223372036s { exit(); }', "t.ply"),
                      ('struct S { char x[0]; int y; }\nBEGIN { printf("%d\\n", sizeof(struct S)); exit(); }', "t.bt")]:
        driver.compile_source(src, name, driver.Options(env={}))


def test_printf_arguments_beyond_the_limit_are_counted_as_such():
    for name in ("t.ply", "t.bt"):
        src = 'BEGIN { printf("' + "%d" * 101 + '\\n", ' + ", ".join(["1"] * 101) + "); exit(); }"
        assert refusal(src, name).startswith(f"{name}:1:9: error: printf() takes at most 99 arguments, got 102")


# --- valid scripts whose C did not compile -------------------------------------------

from cbuild import bpf_compile_error  # noqa: E402


@pytest.mark.parametrize("src, name", [
    ('BEGIN { $a = 1; exit(0); }', "t.bt"),           # -Wunused-but-set-variable
    ('BEGIN { $a = 1; exit(0); }', "t.ply"),
    ('BEGIN { $i = 0; while ($i < 3) { $i++; $b = $i * 2; } exit(0); }', "t.bt"),
    ('BEGIN { @m[1] = 2; for ($kv : @m) { $c = $kv.1; } exit(0); }', "t.bt"),
])
def test_a_variable_set_and_never_read_compiles(src, name):
    assert bpf_compile_error(driver.compile_source(src, name, driver.Options(env={}))) == ""


# --- nesting: a located error, never a RecursionError -------------------------------

def _macros(n: int, body: str) -> str:
    return "".join(f"macro m{i}(x) {{ {body.format(f'm{i + 1}(x)')} }}\n" for i in range(n)) + \
        f"macro m{n}(x) {{ x }}\nBEGIN {{ $y = 1; exit(m0($y) & 1); }}\n"


NESTED = [
    ("BEGIN { $x = 1; exit(" + "(" * 3000 + "$x" + ")" * 3000 + "); }", "t.bt", 1, 120),
    ("BEGIN { $x = 1; exit(" + "+".join(["$x"] * 3000) + "); }", "t.bt", 1, 8734),
    ("BEGIN { $x = 1; exit(" + "- " * 3000 + "$x); }", "t.bt", 1, 218),
    ("BEGIN { $x = 1; exit(" + "- " * 3000 + "$x); }", "t.ply", 1, 214),
    ("BEGIN { $x = 1; exit(" + "+".join(["$x"] * 3000) + "); }", "t.ply", 1, 8734),
    ("BEGIN { $x = 1; " + "if ($x) { " * 500 + "exit();" + " }" * 500 + " }", "t.bt", 1, 1011),
    (_macros(150, "{} + 1"), "t.bt", 32, 16),               # a chain of 150 macros
    (_macros(40, "~" * 45 + "{}"), "t.bt", 3, 19),         # macros, each one nesting deep
]


@pytest.mark.parametrize("src, name, line, col", NESTED, ids=range(len(NESTED)))
def test_deep_nesting_is_a_located_error(src, name, line, col):
    text = refusal(src, name)
    assert text.split("\n")[0].startswith(f"{name}:{line}:{col}: error: "), text[:300]
    assert "nests more than" in text.split("\n")[0] or "levels deep" in text.split("\n")[0], text[:300]


def test_nested_struct_definitions_are_a_located_error():
    src = "struct S0 {\n" + "".join(f" struct S{i} {{\n" for i in range(1, 251)) + "int x;\n" + \
        "} a;\n" * 250 + "};\nBEGIN { exit(); }\n"
    located(refusal(src, "t.bt"), "t.bt", 51, 13, "this C nests more than 50 levels deep here")


def test_nesting_just_under_the_limits_builds():
    for src, name in [("BEGIN { $x = 1; exit((" + "(" * 95 + "$x" + ")" * 95 + ") & 1); }", "t.bt"),
                      ("BEGIN { $x = 1; exit((" + "+".join(["$x"] * 95) + ") & 1); }", "t.bt"),
                      ("BEGIN { $x = 1; exit((" + "+".join(["$x"] * 95) + ") & 1); }", "t.ply"),
                      ("BEGIN { $x = 1; exit(" + "$x ? " * 90 + "1" + " : 0" * 90 + "); }", "t.bt"),
                      (_macros(30, "{} + 1"), "t.bt")]:
        assert bpf_compile_error(driver.compile_source(src, name, driver.Options(env={}))) == ""


# docs/language.md's numbers: each builds at N, and is refused at N + 1.
DOCUMENTED_DEPTHS = [
    (lambda n: "BEGIN { $x = 1; $y = " + "+".join(["$x"] * n) + "; exit(); }", ("t.ply", "t.bt"), 97),
    (lambda n: "BEGIN { $x = 1; $y = " + "- " * n + "$x; exit(); }", ("t.ply", "t.bt"), 96),
    (lambda n: "BEGIN { $x = 1; " + "if ($x) { " * n + "exit();" + " }" * n + " }", ("t.ply", "t.bt"), 48),
    (lambda n: "BEGIN { $x = 1; $y = " + "(" * n + "$x" + ")" * n + "; exit(); }", ("t.bt",), 98),
]


@pytest.mark.parametrize("make, names, limit", DOCUMENTED_DEPTHS, ids=["sum", "prefix", "if", "parens"])
def test_the_documented_nesting_limits_hold(make, names, limit):
    for name in names:
        driver.compile_source(make(limit), name, driver.Options(env={}))
        assert "nests more than 100 levels deep" in refusal(make(limit + 1), name).split("\n")[0]


def test_ply_parentheses_add_no_level():
    driver.compile_source("BEGIN { $x = 1; $y = " + "(" * 400 + "$x" + ")" * 400 + "; exit(); }", "t.ply",
                          driver.Options(env={}))


ARGDIST_NESTED = [
    ("(" * 2000 + "size" + ")" * 2000, 82, "this C nests more than 50 levels deep here"),
    ("+".join(["size"] * 3000), None, "this C nests more than 100 levels deep here"),
    ("-" * 3000 + "size", 132, "this C nests more than 50 levels deep here"),
    ("- " * 3000 + "size", 132, "this C nests more than 50 levels deep here"),
]


@pytest.mark.parametrize("expr, col, message", ARGDIST_NESTED, ids=range(len(ARGDIST_NESTED)))
def test_argdist_deep_nesting_is_a_located_error(expr, col, message):
    from plyc.commands.argdist import parse_args
    from plyc.frontends.argdist import lower_args, render_spec_error
    from plyc.frontends.argdist.spec import SpecError
    with pytest.raises(SpecError) as err:
        lower_args(parse_args(["-C", "p:c:malloc(size_t size):size_t:" + expr, "-o", "x"]))
    text = render_spec_error(err.value)
    first = text.split("\n")[0]
    assert first.startswith("plyc argdist: -C #1:") and first.endswith(f"error: invalid C expression: {message}"), first
    if col is not None:
        assert first.startswith(f"plyc argdist: -C #1:{col}: "), first
    assert text.split("\n")[2].strip().startswith("^"), text[:400]


@pytest.mark.parametrize("src", [
    "BEGIN { @x = (" + ",".join(["1"] * 500) + "); exit(); }",     # memsets clang merged past its inline limit
    "BEGIN { @x = (" + ",".join(["1"] * 100) + "); @y = (" + ",".join(["2"] * 100) + "); exit(); }",
    "BEGIN { @x[(" + ",".join(["1"] * 120) + ")] = (" + ",".join(["1"] * 120) + "); exit(); }",
    "BEGIN { print((" + ",".join(["1"] * 500) + ")); exit(); }",  # was "print() takes at most 99 arguments"
])
def test_large_tuples_compile(src):
    assert bpf_compile_error(driver.compile_source(src, "t.bt", driver.Options(env={}))) == ""


ARGDIST_CONSTANTS = [
    ("size/0", 37, "division by zero"),
    ("size%0", 37, "modulo by zero"),
    ("size<<99", 38, "shift count 99 is out of range: it must be 0 to 63"),
    ("size:size/0 > 1", 42, "division by zero"),
    ("size+99999999999999999999", 37, "integer constant 99999999999999999999 does not fit in 64 bits"),
]


@pytest.mark.parametrize("expr, col, message", ARGDIST_CONSTANTS, ids=range(len(ARGDIST_CONSTANTS)))
def test_argdist_constants_refused_under_the_specifier(expr, col, message):
    from plyc.commands.argdist import parse_args
    from plyc.frontends.argdist import lower_args, render_spec_error
    from plyc.frontends.argdist.spec import SpecError
    with pytest.raises(SpecError) as err:
        lower_args(parse_args(["-C", "p:c:malloc(size_t size):size_t:" + expr, "-o", "x"]))
    first, spec, caret = render_spec_error(err.value).split("\n")[:3]
    assert first == f"plyc argdist: -C #1:{col}: error: {message}"
    assert spec == "p:c:malloc(size_t size):size_t:" + expr and caret.index("^") == col - 1


@pytest.mark.parametrize("expr", ["1 << 99999999999", "1 << -1", "1 >> 64"])
def test_argdist_constant_shifts_out_of_range_are_not_constants(expr):
    # headers' enumerators and array sizes are evaluated so: 1 << -1 was a
    # ValueError, 1 << 10**11 filled memory
    from plyc.frontends.argdist.cparse import parse_expr
    from plyc.frontends.argdist.ctypes import Headers, NotConstant, evaluate
    from plyc.layout import abi
    h = Headers(abi("x86_64"))
    with pytest.raises(NotConstant):
        evaluate(parse_expr(expr, set()).node, h.abi, lambda n: None, lambda t: h.complete(h.resolve(t)))
