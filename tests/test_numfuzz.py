"""The differential fuzzer of numbers (tests/numfuzz.py): random well-typed
integer programs (tests/numgen.py), each a batch of printf lines in one
BEGIN probe, built by plyc and run on this kernel; a ply tracer's output
against tests/numply.py's evaluation under docs/language.md's integer rule,
a bpftrace tracer's against bpftrace 0.27's for the same script.

Derandomized: the seeds are fixed ($PLYC_NUMFUZZ_SEED, $PLYC_NUMFUZZ_BATCHES
and $PLYC_NUMFUZZ_COUNT run others, more, longer: docs/testing.md). The evaluator itself is checked first,
on values C gives."""
import os

import pytest

import numfuzz
import numgen
import numply
from numgen import S64, U64, Ty


def seeds(lang: str) -> list:
    first = int(os.environ.get("PLYC_NUMFUZZ_SEED", "1"))
    return list(range(first, first + int(os.environ.get("PLYC_NUMFUZZ_BATCHES", "1"))))


def count(default: int) -> int:
    """printf lines a batch: $PLYC_NUMFUZZ_COUNT, else the language's."""
    return int(os.environ.get("PLYC_NUMFUZZ_COUNT") or default)


@pytest.mark.bpf
@pytest.mark.parametrize("seed", seeds("ply"))
def test_ply_numbers_follow_the_rule(seed, tmp_path):
    found = numfuzz.ply_batch(seed, count(numfuzz.COUNT), folder=tmp_path)
    assert not found, f"seed {seed}: plyc's ply tracer prints otherwise than the rule:\n" + "\n".join(found)


@pytest.mark.bpf
@pytest.mark.parametrize("seed", seeds("bt"))
def test_bt_numbers_as_bpftrace_027(seed, bpftrace27, tmp_path):
    found = numfuzz.bt_batch(seed, bpftrace27, count(numfuzz.BT_COUNT), folder=tmp_path)
    assert not found, f"seed {seed}: plyc prints otherwise than bpftrace 0.27:\n" + "\n".join(found)


# --- the evaluator, on what C prints ---------------------------------------------

@pytest.mark.parametrize("spec, value, text", [
    ("%d", -5, "-5"), ("%u", -1, "18446744073709551615"), ("%x", -2, "fffffffffffffffe"),
    ("%#x", 0, "0"), ("%#x", 255, "0xff"), ("%#o", 8, "010"), ("%#o", 0, "0"), ("%.0d", 0, ""),
    ("%+d", 5, "+5"), ("% d", 5, " 5"), ("%05d", -42, "-0042"), ("%08.3d", 42, "     042"),
    ("%-6x|", 10, "a     |"), ("%.5u", 7, "00007"), ("%#.3o", 8, "010"), ("%X", 3054, "BEE"),
])
def test_cformat_is_c(spec, value, text):
    assert numply.cformat(spec.rstrip("|"), value, S64) + ("|" if spec.endswith("|") else "") == text


def ev(expr: numgen.Node):
    return numply.Machine(numgen.Program([], [], {}, {})).eval(expr)


def cast(bits, signed, n):
    return numgen.Node("cast", (n,), ty=Ty(bits, signed))


def binop(op, a, b):
    return numgen.Node("bin", (a, b), name=op)


def neg(n):
    return numgen.Node("neg", (n,))


L = numgen.lit


def test_the_rule_on_known_values():
    assert ev(cast(8, True, L(200))) == (-56, Ty(8, True))
    assert ev(binop("/", neg(L(7)), L(2))) == (-3, S64)          # C truncates
    assert ev(binop("%", neg(L(7)), L(2))) == (-1, S64)
    assert ev(binop("/", cast(32, True, neg(L(7))), cast(32, False, L(2)))) == (-3, S64)    # they meet in s64
    assert ev(binop("/", cast(32, False, neg(L(7))), L(2))) == ((2 ** 32 - 7) // 2, U64)    # 2 takes u32's sign
    assert ev(binop("<", cast(64, True, neg(L(1))), cast(64, False, L(5)))) == (1, numgen.S32)
    assert ev(binop(">>", cast(32, True, neg(L(8))), L(1))) == (-4, S64)      # arithmetic
    assert ev(binop(">>", cast(32, False, neg(L(8))), L(1))) == (0x7FFFFFFC, U64)
    assert ev(binop(">>", cast(64, True, neg(L(8))), cast(8, False, L(1)))) == (-4, S64)
    assert ev(binop("<", cast(8, False, L(255)), cast(8, True, neg(L(1))))) == (0, numgen.S32)
    assert ev(binop("<", cast(8, False, L(255)), L(256))) == (1, numgen.S32)
    assert ev(binop("+", cast(32, False, neg(L(1))), L(1))) == (2 ** 32, U64)  # 64 bits wide
    assert ev(binop("+", cast(32, True, neg(L(1))), cast(32, False, L(0)))) == (-1, S64)
    assert ev(binop("<<", L(1), L(63))) == (-(2 ** 63), S64)
    assert ev(numgen.Node("inv", (cast(16, False, L(0)),))) == (2 ** 64 - 1, U64)


def test_the_merge_rule():
    assert numply.merge(Ty(32, True), Ty(32, False)) == Ty(64, True)
    assert numply.merge(Ty(8, True), Ty(16, False)) == Ty(32, True)
    assert numply.merge(Ty(16, True), Ty(8, False)) == Ty(16, True)
    assert numply.merge(Ty(8, False), Ty(32, False)) == Ty(32, False)
    assert numply.merge(Ty(64, True), Ty(64, False)) == S64


def test_programs_are_derandomized():
    a, b = (numgen.script(numgen.Gen(7, "bt").program(30), "bt") for _ in range(2))
    assert a == b
    assert a != numgen.script(numgen.Gen(8, "bt").program(30), "bt")
