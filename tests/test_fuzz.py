"""Property-based tests of the front end: whatever text `plyc check` is
given, it either accepts it or reports a rendered diagnostic and exits 1;
it never raises anything else.

Inputs: random text, soups of the language's tokens, and mutations
(delete / duplicate / swap / insert a character or a token) of valid scripts
(test_parser.VALID_SCRIPTS and examples/*.ply). Derandomized, so CI sees the
same examples on every run."""
import atexit
import io
import re
import shutil
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from plyc import cli, driver
from plyc.frontends.ply import ast
from plyc.diag import MAX_SHOWN, PlycError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_parser import VALID_SCRIPTS  # noqa: E402
from cbuild import builds_or_is_refused  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEEDS = VALID_SCRIPTS + [p.read_text() for p in sorted((ROOT / "examples").glob("*.ply"))]
ENV = {"NUM": "42", "NAME": "bob"}

FUZZ = settings(derandomize=True, deadline=None, database=None, max_examples=600,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

# The first line of a diagnostic: `FILE:LINE:COL: error: ...` or `FILE: error: ...`.
HEAD = re.compile(r"^(?P<file>[^\n:]+)(?::(?P<line>\d+):(?P<col>\d+))?: error: \S")


def check(src: str) -> None:
    """`plyc check` in-process on `src` (as plyc.cli does it): success, or a
    PlycError that renders into well-formed diagnostics."""
    try:
        program = driver.parse(src, "f.ply")
    except PlycError as err:
        assert_rendered(err, src)
        return
    assert_spans_inside(program, src)
    try:
        driver.analyze(program, src, "f.ply", driver.Options(env=ENV))
    except PlycError as err:
        assert_rendered(err, src)


def assert_rendered(err: PlycError, src: str) -> None:
    assert err.diags
    text = err.render()
    src_lines = [line.rstrip("\r") for line in src.split("\n")]   # lines as the lexer counts them
    for diag in err.diags[:MAX_SHOWN]:
        one = diag.render(err.filename, err.source)
        assert one in text
        m = HEAD.match(one)
        assert m and m["file"] == "f.ply", one
        if m["line"]:
            line, col = int(m["line"]), int(m["col"])
            assert 1 <= line <= len(src_lines) and col >= 1, one
            # the source line (tabs expanded, unprintables blanked), then a caret under it
            shown, caret = one.split("\n")[1:3]
            assert shown == "".join(c if c.isprintable() else " " for c in src_lines[line - 1].expandtabs(8)), one
            assert caret.strip(" ").startswith("^") and set(caret.strip(" ")[1:]) <= {"~"}, one
    assert "Traceback" not in text


def assert_spans_inside(program: ast.Program, src: str) -> None:
    nlines = max(1, src.count("\n") + 1)
    for node in ast.walk(program):
        sp = node.span
        if sp == ast.NOSPAN:
            continue
        assert 1 <= sp.line <= sp.end_line <= nlines, (type(node).__name__, sp)
        assert sp.col >= 1 and sp.end_col >= 1


# --- the real CLI, in-process ------------------------------------------------

_TMP = Path(tempfile.mkdtemp(prefix="plyc-fuzz-"))
atexit.register(shutil.rmtree, _TMP, True)


def cli_check(src: str) -> None:
    """`plyc check FILE` through plyc.cli.main: exit 0, silent or with warnings only, or exit 1
    with diagnostics on stderr; anything else escapes and fails the test."""
    path = _TMP / "f.ply"
    path.write_text(src, encoding="utf-8", newline="")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = cli.main(["check", str(path)])
        except SystemExit as exc:    # read_script's refusals: a message, status 1
            rc = 1
            assert isinstance(exc.code, str) and exc.code.startswith("plyc: error: ")
            err.write(exc.code + "\n")
    assert out.getvalue() == ""
    if rc == 0:
        # silent, or warnings only (a probe this machine lacks: plyc/presence.py)
        text = err.getvalue()
        assert text == "" or ": warning: " in text and ": error" not in text and "Traceback" not in text, text
    else:
        assert rc == 1
        first = err.getvalue().split("\n", 1)[0]
        assert first.startswith(str(path)) and ": error: " in first or first.startswith("plyc: error: "), first
        assert "Traceback" not in err.getvalue()


# --- strategies ----------------------------------------------------------------

TOKENS = [
    # probes
    "BEGIN", "END", "kprobe:vfs_read", "k:vfs_*", "kr:vfs_read", "kretprobe:SyS_read", "t:sched/sched_switch",
    "tracepoint:syscalls/sys_enter_openat", "tracepoint:syscalls/sys_enter_*", "u:/bin/bash:readline",
    "uprobe:c:malloc", "ur:c:malloc", "usdt:/bin/x:p:n", "interval:1s", "i:500ms", "interval:s:1",
    "profile:99hz", "profile:1:100hz", "foo:bar", "tracepoint:sched/enable", "t:../sched/sched_switch",
    # punctuation and operators
    "{", "}", "(", ")", "[", "]", ";", ",", "/", "?", ":", ".", "->", "=", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", "<<=", ">>=", "||", "&&", "|", "^", "&", "==", "!=", "<", "<=", ">", ">=", "<<",
    ">>", "+", "-", "*", "%", "!", "~",
    # keywords, names, values
    "if", "else", "return", "delete", "sizeof", "struct", "file", "u32", "unsigned", "long", "char",
    "@", "@x", "@name", "$x", "$y", "$1", "$target", "$NUM", "$NAME", "$UNSET", "x", "m", "start",
    "comm", "pid", "kpid", "cpu", "time", "walltime", "stack", "caller", "retval", "arg0", "arg1", "data",
    "prev_comm", "prev_pid", "filename", "nosuch", "count", "sum", "min", "max", "avg", "quantize",
    "lquantize", "print", "printf", "str", "mem", "dyn", "uptr", "ksym", "strcmp", "exit", "clear",
    "(struct file *)", "->f_path", ".dentry", "task_struct", "regs", "->ip",
    "0", "1", "42", "0x1f", "0b101", "017", "09", "1_000", "99999999999999999999999",
    '"s"', '"%d\\n"', '"%s %v"', '"%q"', '"\\x41"', '"\\q"', '"', "'",
    "#", "# c\n", "//c\n", "/*", "*/", "/* c */",
    " ", " ", "\n", "\t",
]

# Splits a script into tokens (and the text between them) so that joining
# them gives the script back.
TOKEN_RE = re.compile(r'\s+|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*(?::[^\s,{/]+)?|\d\w*|[@$]\w*'
                      r'|<<=|>>=|->|&&|\|\||<<|>>|[-+*/%&|^=!<>]=|/\*|\*/|.', re.S)

printable = st.text(st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\n\t"),
                    max_size=120)
unicode_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
soup = st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join) | \
    st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)


@st.composite
def mutated(draw, seeds=SEEDS):
    src = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        by_token = draw(st.booleans())
        units = TOKEN_RE.findall(src) if by_token else list(src)
        assert "".join(units) == src
        if not units:
            units = [""]
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "insert"]))
        i = draw(st.integers(0, len(units) - 1))
        if op == "delete":
            del units[i]
        elif op == "duplicate":
            units.insert(i, units[i])
        elif op == "swap":
            j = draw(st.integers(0, len(units) - 1))
            units[i], units[j] = units[j], units[i]
        else:
            new = draw(st.sampled_from(TOKENS)) if by_token else \
                draw(st.characters(min_codepoint=9, max_codepoint=126))
            units.insert(i, new)
        src = "".join(units)
    return src


# --- properties ----------------------------------------------------------------

@FUZZ
@given(printable)
def test_random_printable_text(src):
    check(src)


@settings(FUZZ, max_examples=200)
@given(unicode_text)
def test_random_unicode_text(src):
    check(src)


@FUZZ
@given(soup)
def test_token_soup(src):
    check(src)


@settings(FUZZ, max_examples=1500)
@given(mutated())
def test_mutated_valid_scripts(src):
    check(src)


@settings(FUZZ, max_examples=150)
@given(mutated() | soup | printable)
def test_cli_check_never_crashes(src):
    cli_check(src)


# What checks clean is also built: its BPF program compiled by clang, as
# `plyc build` does (tests/cbuild.py). Fewer examples: each one that builds
# runs clang (about 0.3 s). The seeds also take Debian's corpus of ply scripts.
CORPUS = sorted((ROOT.parent / "shared" / "corpus" / "ply").glob("*.ply"))
BUILD_SEEDS = SEEDS + [p.read_text() for p in CORPUS]


@settings(FUZZ, max_examples=200)
@given(mutated(BUILD_SEEDS))
def test_mutated_scripts_that_check_clean_also_compile(src):
    builds_or_is_refused(src, "f.ply", driver.Options(env=ENV))


def test_build_seeds_compile():
    assert CORPUS, "the corpus of ply scripts is missing"
    for src in BUILD_SEEDS:
        builds_or_is_refused(src, "f.ply", driver.Options(env=ENV))


# --- the seeds themselves, and inputs the fuzzer once found ----------------------

def test_seeds_are_valid():
    for src in SEEDS:
        program = driver.parse(src, "f.ply")
        driver.analyze(program, src, "f.ply", driver.Options(env=ENV))


REGRESSIONS = [
    "BEGIN { exit(1 | 2); }",                  # '|' '^' '&' were dropped from the tree: crash
    "BEGIN { exit(1 ^ 2 & 3); }",
    "BEGIN { exit(09); }",                     # bad octal digit: ValueError
    "BEGIN { exit(0x); }",
    "BEGIN { exit(0b); }",
    "BEGIN { exit(1 << 2); }",                 # '<<' lexed as '<' '<'
    "BEGIN { exit(" + "-" * 3000 + "1); }",    # RecursionError in the tree walks
    "BEGIN { exit(" + "+".join(["1"] * 3000) + "); }",
    "BEGIN " + "if (1) " * 2000 + "exit();",
    "BEGIN { exit(" + "(" * 3000 + "1" + ")" * 3000 + "); }",
    "BEGIN { /* unterminated",
    "BEGIN { exit(1 /* unterminated",
    "BEGIN { /x; }",                           # unary '/' was accepted
    "\x00", "\ufeffBEGIN { exit(); }", "BEGIN { exit(\u00e9); }", "BEGIN\r\n{\r\n\texit();\r\n}\r\n",
    "BEGIN\x0c{ exit(); }\n\x0cEND { exit(nosuch); }",   # the diagnostic showed the wrong line
    "BEGIN { exit(); }\u2028END { exit(nosuch); }",
    "BEGIN {\r\n\texit(1)\r\n}\r\n",
    'BEGIN { printf("%\n"); }',                # the message held a raw newline
    "t:sched/enable { exit(data->x); }",        # NotADirectoryError reading the format file
    "t:sched/sched_switch/.. { exit(data->x); }",
]


def test_regressions():
    for src in REGRESSIONS:
        check(src)
        cli_check(src)


def test_long_comments_and_many_errors_stay_fast():
    # The predicate's closing-slash lookahead once backtracked quadratically
    # over a long line comment (35 s for these 20k blanks), and rendering
    # was quadratic in the number of errors on a long line.
    start = time.monotonic()
    check("kprobe:vfs_read / arg0 / #" + " " * 20000)
    check("kprobe:vfs_read / arg0 / //" + " " * 20000)
    check("kprobe:vfs_read / arg0 / /*" + " */ " * 5000)
    check("BEGIN {" + " exit(nosuch);" * 1000 + "}")
    assert time.monotonic() - start < 10
