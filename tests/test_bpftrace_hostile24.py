"""Hostile and unusual scripts of bpftrace's current language (0.2x, as
0.27 reads them) that plyc once compiled to C clang refused, refused where
0.27 accepts, or ran to another answer than 0.27's: what plyc does now.
Their runs beside 0.27 are tests/runtime/bt-hostile24-*.test."""
import pytest

from plyc import driver

from btlower import err, lower
from cbuild import bpf_compile_error


def compiled(src: str) -> driver.Compiled:
    out = driver.compile_source(src, "tool.bt", driver.Options(frontend={"unsafe": False}))
    problem = bpf_compile_error(out)
    assert problem == "", problem
    return out


def test_a_shift_tested_as_a_condition_compiles():
    # clang's -Wint-in-bool-context refused `if (v << 2)`
    compiled('BEGIN { $a = 3; if ($a << 2) { printf("y\\n"); } if (!($a << 2)) { exit(); }\n'
             '  $c = ($a << 1) ? 1 : 2; while ($a << 0) { $a--; } @ = (uint8)(1 << 9) + $c; }')
