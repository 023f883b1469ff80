"""The one rule where two integer types meet (types.promoted, issue 29):
map keys and values, tuple members, `?:` arms, a variable assigned twice,
aggregation arguments, arithmetic and comparisons, in all three front ends.
Each is bpftrace 0.27's (checked by hand against it: tests/bpftrace_sid.py)
and keeps every value of both sides, but s64 with u64, which none holds."""
from dataclasses import replace

import pytest

from plyc import driver
from plyc import types as T
from plyc.diag import PlycError

S8, U8, S16, U16 = T.Int(1, True), T.Int(1, False), T.Int(2, True), T.Int(2, False)
LIT = replace(T.S64, flexible=True)           # a literal that is not negative


@pytest.mark.parametrize("a, b, meet", [
    (T.S32, T.U32, T.S64),      # neither holds the other: the signed type twice the size
    (S8, U8, S16),
    (S16, T.U32, T.S64),
    (T.S64, T.U64, T.S64),      # none holds both: bpftrace's int64
    (T.S32, U16, T.S32),        # the signed one holds the unsigned one
    (T.S64, T.U32, T.S64),
    (U8, T.U32, T.U32),         # one sign: the larger
    (S8, T.S32, T.S32),
    (LIT, T.U64, T.U64),        # a literal that is not negative takes the other's sign
    (LIT, T.U32, T.U64),
    (LIT, S8, T.S64),
])
def test_two_integer_types_meet_in_one_that_holds_both(a, b, meet):
    assert T.promoted(a, b) == meet and T.promoted(b, a) == meet
    assert T.unify(a, b) == meet and T.unify(b, a) == meet
    assert not T.unify(a, b).flexible


def test_only_two_literals_stay_of_no_sign():
    assert T.unify(LIT, LIT).flexible
    assert not T.unify(LIT, T.S64).flexible and not T.unify(T.S64, LIT).flexible


def test_tuple_members_meet_one_by_one():
    a, b = T.Tuple([T.S32, S8]), T.Tuple([T.U32, U8])
    assert T.unify(a, b) == T.Tuple([T.S64, S16])


@pytest.mark.parametrize("op, a, b, signed", [
    ("+", T.S32, T.U32, True), ("-", T.U32, S8, True), ("*", T.S64, T.U64, True),
    ("+", T.U64, LIT, False), ("/", T.U32, T.U64, False), ("+", T.S64, LIT, True),
])
def test_arithmetic_is_signed_as_its_operands_meet(op, a, b, signed):
    assert T.arith(op, a, b).signed is signed


def analyze(src: str, name: str):
    return driver.analyze(driver.parse(src, name), "", name, driver.Options(env={}))


@pytest.mark.parametrize("src, name", [
    ("BEGIN { m[1] = (s32)-1; m[2] = (u32)4294967295; exit(0); }", "t.ply"),
    ("BEGIN { @m[1] = (int32)-1; @m[2] = (uint32)4294967295; exit(); }", "t.bt"),
])
def test_a_map_written_both_signs_holds_a_signed_type_that_holds_both(src, name):
    (m,) = analyze(src, name).maps.values()
    assert m.value_type == T.S64


@pytest.mark.parametrize("src, name, key", [
    ("BEGIN { @s[(s8)-1] = count(); @s[(u8)255] = count(); exit(0); }", "t.ply", S16),
    ("BEGIN { @s[(int32)-1] = count(); @s[(uint32)4294967295] = count(); exit(); }", "t.bt", T.S64),
    ("BEGIN { @s[1] = count(); @s[(uint64)18446744073709551615] = count(); exit(); }", "t.bt", T.U64),
])
def test_map_keys_of_both_signs_stay_distinct(src, name, key):
    (m,) = analyze(src, name).maps.values()
    assert m.key_types == [key]


@pytest.mark.parametrize("src, name", [
    ("BEGIN { @s = sum((s32)-10); @s = sum((u32)1); exit(0); }", "t.ply"),
    ("BEGIN { @s = min((int32)-10); @s = min((uint32)1); exit(); }", "t.bt"),
    ("BEGIN { @s = sum((uint64)1); @s = sum(-10); exit(); }", "t.bt"),
])
def test_an_aggregation_of_both_signs_is_signed(src, name):
    (m,) = analyze(src, name).maps.values()
    assert m.value_type.signed


@pytest.mark.parametrize("src, name", [
    ("BEGIN { $a = (s32)-1; $a = (u32)5; x[0] = $a; exit(0); }", "t.ply"),
    ("BEGIN { $a = (u8)1; x[0] = $a ? (s32)-1 : (u32)5; exit(0); }", "t.ply"),
    ("BEGIN { $a = (int8)-1; $a = (uint32)4294967295; @x = $a; exit(); }", "t.bt"),
    ("BEGIN { $a = (uint8)1; @x = $a ? (int32)-1 : (uint32)5; exit(); }", "t.bt"),
])
def test_a_variable_or_ternary_of_both_signs_is_signed(src, name):
    (m,) = analyze(src, name).maps.values()
    assert m.value_type == T.S64


def test_strncmp_is_bpftraces_zero_or_one_of_type_uint64():
    m = analyze('BEGIN { @x = strncmp("abc", "abd", 3); exit(); }', "t.bt").maps["@x"]
    assert m.value_type == T.U64


@pytest.mark.parametrize("src, name, typ", [
    ("BEGIN { $u = (uint8)200; @x = -$u; exit(); }", "t.bt", U8),         # bpftrace's: 56
    ("BEGIN { $u = (int16)5; @x = ~$u; exit(); }", "t.bt", S16),
    ("BEGIN { $u = (uint64)5; @x = -$u; exit(); }", "t.bt", T.U64),
    ("BEGIN { @x = -1; exit(); }", "t.bt", T.S64),                       # a literal's minus
    ("BEGIN { $u = (u8)200; x[0] = -$u; exit(0); }", "t.ply", T.S64),   # ply's: -200
])
def test_unary_minus_is_bpftraces_of_the_operands_type_and_plys_signed(src, name, typ):
    (m,) = analyze(src, name).maps.values()
    assert m.value_type == typ


@pytest.mark.parametrize("src, name, message", [
    ("BEGIN { @b[(int8)-5] = 1; @b[18446744073709551615] = 2; exit(); }", "t.bt",
     "18446744073709551615 does not fit in @b's key, of type s64"),
    ("BEGIN { @m = 18446744073709551615; @m = -1; exit(); }", "t.bt",
     "18446744073709551615 does not fit in @m's value, of type s64"),
    ("BEGIN { $x = -1; $x = 9223372036854775808; print($x); exit(); }", "t.bt",
     "9223372036854775808 does not fit in $x, of type s64"),
    ("BEGIN { m[1] = 18446744073709551615; m[2] = -1; exit(0); }", "t.ply",
     "18446744073709551615 does not fit in m's value, of type s64"),
    ("BEGIN { $z = 0; m[1] = $z ? -1 : 18446744073709551615; exit(0); }", "t.ply",
     "18446744073709551615 does not fit in the value of '?:', of type s64"),
])
def test_a_constant_past_the_signed_type_it_meets_is_refused_as_bpftrace_refuses_it(src, name, message):
    """bpftrace 0.27: `Type mismatch for @m: trying to assign value of type
    'uint64' when map already has a value type 'int64'`, not -1."""
    with pytest.raises(PlycError) as exc:
        analyze(src, name)
    assert message in str(exc.value)


def test_a_constant_past_int64_is_kept_where_everything_is_unsigned():
    m = analyze("BEGIN { @ok = 18446744073709551615; @ok = (uint8)1; exit(); }", "t.bt").maps["@ok"]
    assert m.value_type == T.U64
