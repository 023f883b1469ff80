"""A probe's wildcard in the tracer (kernel functions, tracepoints, ELF
symbols): the runtime's own glob (runtime-c/core/glob.c), not the C
library's fnmatch, whose multibyte and wide-character classes cost a musl
tracer 13 KB (docs/toolchain.md, "Where the bytes go"). It must answer as
fnmatch(pattern, name, 0) does in the C locale, held here to glibc's
fnmatch on hand-picked patterns and on random ones, driven from C
(tests/c/test_glob.c) as tests/test_demangle.py drives the demangler.

Not held to glibc: a range whose end is "[:", "[." or "[=" (POSIX leaves it
undefined), a "[." or "[=" that opens no collating element, and a
collating element followed by "-]"; glibc's answers to those depend on
what follows in the pattern."""
import random
import subprocess
from pathlib import Path

import pytest

from test_runtime_c import CFLAGS

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime-c"


@pytest.fixture(scope="module")
def matcher(tmp_path_factory):
    exe = tmp_path_factory.mktemp("glob") / "test_glob"
    subprocess.run(["gcc", *CFLAGS, "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    f"-I{RUNTIME}", str(ROOT / "tests/c/test_glob.c"), str(RUNTIME / "core/glob.c"),
                    "-o", str(exe)], check=True)
    return str(exe)


def run(exe: str, cases: list) -> list:
    """[(ours, glibc's)] for each (pattern, name)."""
    inp = "".join(f"{p}\t{n}\n" for p, n in cases).encode("latin-1")
    proc = subprocess.run([exe], input=inp, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    out = [tuple(int(w) for w in line.split()) for line in proc.stdout.decode().splitlines()]
    assert len(out) == len(cases)
    return out


# (pattern, name, matches): what probe specs use, and fnmatch's corners
CASES = [
    ("vfs_*", "vfs_read", True), ("vfs_*", "vfs_", True), ("vfs_*", "vf_read", False),
    ("*", "", True), ("", "", True), ("", "a", False), ("*read*", "ksys_readv", True),
    ("sys_enter_*", "sys_enter_openat", True), ("sys_enter_*", "sys_exit_openat", False),
    ("tcp_*_ack", "tcp_send_ack", True), ("tcp_*_ack", "tcp_send_acks", False),
    ("a*b*c", "aXbYbZc", True), ("a*b*c", "aXbYbZ", False), ("**x", "x", True),
    ("?", "a", True), ("?", "", False), ("??", "a", False), ("a?c", "abc", True),
    ("*/x", "a/b/x", True), ("*", ".hidden", True),
    ("[abc]", "b", True), ("[abc]", "d", False), ("[!abc]", "d", True), ("[^abc]", "a", False),
    ("[a-z]x", "qx", True), ("[a-z]x", "Qx", False), ("[z-a]", "m", False),
    ("[]]", "]", True), ("[!]]", "]", False), ("[a-]", "-", True), ("[-a]", "-", True),
    ("[[:digit:]]*", "9p", True), ("[[:digit:]]*", "p9", False), ("[[:upper:][:digit:]]", "Q", True),
    ("[![:alpha:]]", "_", True), ("[[:bogus:]]", "b", False), ("[[.a.]]", "a", True),
    ("[[=b=]]", "b", True), ("[\\]]", "]", True),
    ("\\*", "*", True), ("\\*", "x", False), ("a\\", "a\\", False), ("\\a", "a", True),
    ("[", "[", True), ("[a", "[a", True), ("a[", "a[", True), ("[!", "[!", True),
    ("?\x80", "a\x80", True), ("\xff*", "\xffz", True), ("[\x80-\xff]", "\x90", True),
]


def test_hand_picked(matcher):
    got = run(matcher, [(p, n) for p, n, _ in CASES])
    for (p, n, want), (ours, glibc) in zip(CASES, got):
        assert (bool(ours), bool(glibc)) == (want, want), (p, n)


def test_random_patterns_answer_as_glibc(matcher):
    rng = random.Random(20261208)
    toks = ["a", "b", "c", "-", "]", "[", "!", "^", "\\", "*", "?", ":", "[:alpha:]", "[:digit:]",
            "[:bogus:]", "[.a.]", "[=b=]", "x", "Z", "1", ".", "/"]
    chars = list("abc-][!^\\*?:xZ1./") + ["\x80", "\xff"]
    cases = []
    while len(cases) < 150000:
        p = "".join(rng.choice(toks) for _ in range(rng.randint(0, 7)))
        if "-[" in p or ".]-" in p:
            continue
        cases.append((p, "".join(rng.choice(chars) for _ in range(rng.randint(0, 6)))))
    got = run(matcher, cases)
    differ = [(p, n, o) for (p, n), o in zip(cases, got) if o[0] != o[1]]
    assert not differ, differ[:20]
    assert sum(o[0] for o in got) > 3000   # the patterns do match, often
