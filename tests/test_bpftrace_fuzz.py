"""Property-based tests of the bpftrace parser: whatever text it is given,
it returns a tree whose spans lie inside the text, or raises a PlycError
with a located, rendered diagnostic; never anything else.

Inputs: mutations (delete / duplicate / insert a character or a token) of
valid scripts (the shape tests' scripts and Debian's tools where installed),
and soups of the language's tokens. Derandomized, so CI sees the same
examples on every run."""
import glob
import re
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from plyc import driver
from plyc.diag import PlycError
from plyc.frontends.bpftrace import parse
from plyc.frontends.bpftrace import ast as A

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cbuild import builds_or_is_refused  # noqa: E402

SEEDS = [
    '#include <linux/sched.h>\nstruct S { int x; }\nconfig = { max_map_keys = 2 }\n'
    'macro add($a, b) { $a + b }\n'
    'BEGIN { printf("hi %d\\n", 1_000); }\n'
    'kprobe:vfs_read, k:tcp_* /arg2 < 16 && comm == "bash"/ { @[pid, comm] = count(); '
    '$t = (struct task_struct *)curtask; @x[$t->pid] = hist(arg2); }\n'
    't:syscalls:sys_enter_openat { printf("%s\\n", str(args.filename)); delete(@m, 1); '
    'if ($x) { $y = $x ? 1 : 2; } else if (!$z) { unroll(2) { $i++; } } else { return; } '
    'while ($i < 10) { $i += 1; break; } for ($kv : @m) { print($kv.0); } '
    '$a = (1, "two", (3,)); $b = sizeof(struct sock) + offsetof(struct sock, sk_flags); }\n'
    'i:s:1 { print(@, 2); clear(@); exit(); }\nEND { $s = -0x1f << 2 % 017; }\n',
] + [open(p).read() for p in sorted(glob.glob("/usr/sbin/*.bt"))[:12]]

TOKENS = ["BEGIN", "END", "kprobe:f", "t:a:b", "{", "}", "(", ")", "[", "]", "/", ";", ",", ":",
          "$x", "$1", "$#", "@m", "@", "pid", "comm", "args", ".", "->", "=", "+=", "++", "?",
          "==", "&&", "!", "*", "&", "1", "0x1f", "1e3", "10ms", '"s"', "if", "else", "while",
          "for", "unroll", "sizeof", "offsetof", "struct", "(struct sock *)", "#include <x.h>",
          "config", "macro", "let", "..", "\n", " ", "//c\n", "/*c*/", "'", "\\", "\t"]

FUZZ = settings(derandomize=True, deadline=None, database=None, max_examples=500,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
HEAD = re.compile(r"^f\.bt(:\d+:\d+)?: error: \S")


def check(src: str):
    try:
        program = parse(src, "f.bt")
    except PlycError as err:
        text = err.render()
        assert HEAD.match(text), text
        return
    lines = src.split("\n")
    for node in _walk(program):
        sp = getattr(node, "span", None)
        if sp is not None and sp.line:
            assert 1 <= sp.line <= sp.end_line <= len(lines), (node, sp)
            assert 1 <= sp.col <= len(lines[sp.line - 1]) + 1, (node, sp)


def _walk(node):
    if isinstance(node, list):
        for x in node:
            yield from _walk(x)
    elif isinstance(node, A.Node):
        yield node
        for name in node.__dataclass_fields__:
            yield from _walk(getattr(node, name))


@st.composite
def mutated(draw, seeds=SEEDS):
    src = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        if not src:
            break
        i = draw(st.integers(0, len(src) - 1))
        op = draw(st.sampled_from(["delete", "dup", "insert", "token"]))
        if op == "delete":
            src = src[:i] + src[i + 1:]
        elif op == "dup":
            src = src[:i] + src[i] + src[i:]
        elif op == "insert":
            src = src[:i] + draw(st.characters(max_codepoint=0x7f)) + src[i:]
        else:
            src = src[:i] + draw(st.sampled_from(TOKENS)) + src[i:]
    return src


@FUZZ
@given(mutated())
def test_mutations(src):
    check(src)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_token_soup(src):
    check(src)


@FUZZ
@given(st.text(max_size=200))
def test_random_text(src):
    check(src)


# What parses is also built (tests/cbuild.py): lowered, and its BPF program
# compiled by clang as `plyc build` does; the seeds add all of Debian's tools
# (test_bpftrace_tools.py builds each of them).
BUILD_SEEDS = SEEDS + [open(p).read() for p in sorted(glob.glob("/usr/sbin/*.bt"))[12:]]


@settings(FUZZ, max_examples=120)
@given(mutated(BUILD_SEEDS))
def test_mutations_that_check_clean_also_compile(src):
    builds_or_is_refused(src, "f.bt", driver.Options())




def refused(src: str) -> str:
    """The rendered refusal of src (it must not build)."""
    try:
        driver.compile_source(src, "f.bt", driver.Options())
    except PlycError as err:
        return err.render()
    raise AssertionError(f"built: {src!r}")


# Found by a fuzz of 0.27's new syntax: text pycparser's own parser trips on
# (pycparser 3 raised AttributeError: 'Union' object has no attribute 'names'
# on two records as one member's type), an internal error of plyc's
def test_c_that_trips_pycparser_is_refused_at_its_definition():
    text = refused("struct Foo { int a; struct { int b; }union { long d; }; }\nBEGIN { exit(); }\n")
    assert text.startswith("f.bt:1:1: error: this definition is not C that plyc can read"), text


# a function declared among a struct's members was an internal error
# (AttributeError: 'TypeDecl' object has no attribute 'names')
def test_a_function_among_a_struct_s_members_is_refused_at_it():
    text = refused("struct Foo { int a; struct { int g(); char c[4]; }; }\nBEGIN { exit(); }\n")
    assert text.startswith("f.bt:1:") and "member 'g' is a function" in text, text


def test_an_unnamed_bit_field_is_named_so():
    # the refusal said "bit-field 'None'"
    text = refused("struct S { int : 40; int b; }\nBEGIN { exit(); }\n")
    assert "an unnamed bit-field has width 40: from 0 to 32 bits for its type" in text, text
