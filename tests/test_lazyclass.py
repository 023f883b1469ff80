"""plyc/lazyclass.py: @node classes are dataclass(eq=False) once made, made
on their first instance (bases first), and the IR's and the bpftrace AST's
classes are left unmade by an import (what the desk's speed rests on)."""
import subprocess
import sys
from dataclasses import field, fields
from pathlib import Path

from plyc.lazyclass import made, node

ROOT = Path(__file__).resolve().parent.parent


@node
class Base:
    a: int
    b: list = field(default_factory=list)


@node
class Child(Base):
    c: str = "x"


@node
class Own:
    x: int

    def __init__(self, x):
        self.x = x * 2


def test_a_subclass_first_makes_its_bases_first():
    assert "__dataclass_fields__" not in Child.__dict__ and "__dataclass_fields__" not in Base.__dict__
    ch = Child(1, [2], c="y")
    assert (ch.a, ch.b, ch.c) == (1, [2], "y")
    assert [f.name for f in fields(ch)] == ["a", "b", "c"]
    assert repr(ch) == "Child(a=1, b=[2], c='y')"
    base = Base(3)
    assert (base.a, base.b) == (3, []) and base.b is not Base(3).b      # the factory, per instance
    assert base != Base(3) and base == base                             # eq=False: identity


def test_made_before_any_instance_and_eq_false():
    @node
    class Late:
        v: int = 5
    made(Late)
    assert [f.name for f in fields(Late)] == ["v"]
    one, two = Late(), Late()
    assert one.v == two.v == 5 and one != two     # eq=False: identity


def test_a_class_with_its_own_init_is_made_at_once():
    assert "__dataclass_fields__" in Own.__dict__
    assert Own(2).x == 4


def test_importing_the_ir_and_the_ast_makes_no_class():
    code = ("import plyc.ir.nodes as N, plyc.frontends.bpftrace.ast as A, plyc.lazyclass as L\n"
            "print(len(L._pending), sum('__dataclass_fields__' in c.__dict__ for c in L._pending))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    pending, made_ = map(int, out.stdout.split())
    assert pending > 80 and made_ == 0

