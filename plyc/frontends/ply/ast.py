"""ply's syntax tree: plain dataclasses, every node carries the span it came from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...span import NOSPAN, Span  # noqa: F401


@dataclass(eq=False)
class Node:
    span: Span = field(default=NOSPAN, kw_only=True)


# --- expressions -----------------------------------------------------------

@dataclass(eq=False)
class Expr(Node):
    pass


@dataclass(eq=False)
class Num(Expr):
    value: int


@dataclass(eq=False)
class Str(Expr):
    value: bytes


@dataclass(eq=False)
class Name(Expr):
    """A built-in variable (comm, arg0, data, ...)."""
    name: str


@dataclass(eq=False)
class Dollar(Expr):
    """`$x`: a scratch variable, a compile-time environment value, `$target` or `$1`."""
    name: str


@dataclass(eq=False)
class MapRef(Expr):
    """`@name[keys]` (aggregation) or `name[keys]` (plain map)."""
    name: str            # as written: "@", "@name" or "name"
    keys: list[Expr]

    @property
    def is_agg(self) -> bool:
        return self.name.startswith("@")


@dataclass(eq=False)
class Unary(Expr):
    op: str              # ! ~ - *
    operand: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(eq=False)
class Call(Expr):
    func: str
    args: list[Expr]
    name_span: Span = NOSPAN


@dataclass(eq=False)
class Member(Expr):
    obj: Expr
    field: str
    arrow: bool          # `->` rather than `.`


@dataclass(eq=False)
class Index(Expr):
    obj: Expr
    index: Expr


@dataclass(eq=False)
class TypeName(Node):
    """A C type as written in a cast or sizeof: base words plus pointer depth."""
    words: tuple[str, ...]   # ("struct", "file") / ("unsigned", "long") / ("u32",)
    pointers: int

    def __str__(self) -> str:
        return " ".join(self.words) + (" " + "*" * self.pointers if self.pointers else "")


@dataclass(eq=False)
class Cast(Expr):
    type: TypeName
    operand: Expr


@dataclass(eq=False)
class SizeOf(Expr):
    type: TypeName


# --- statements ------------------------------------------------------------

@dataclass(eq=False)
class Stmt(Node):
    pass


@dataclass(eq=False)
class Block(Stmt):
    stmts: list[Stmt]


@dataclass(eq=False)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(eq=False)
class Assign(Stmt):
    """`target = value;` where target is a MapRef or a Dollar scratch variable.
    Aggregations are Assigns whose value is a Call to an aggregation function."""
    target: Expr
    value: Expr


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Optional[Stmt]


@dataclass(eq=False)
class Return(Stmt):
    pass


@dataclass(eq=False)
class Delete(Stmt):
    target: MapRef


# --- probes ----------------------------------------------------------------

@dataclass(eq=False)
class Spec(Node):
    provider: str        # as written (alias or full name)
    arg: str             # everything after the first ':'; "" for BEGIN/END


@dataclass(eq=False)
class Probe(Node):
    specs: list[Spec]
    predicate: Optional[Expr]
    body: Stmt


@dataclass(eq=False)
class Program(Node):
    probes: list[Probe]
    filename: str = "<script>"


def children(node: Node):
    """Child nodes in source order, for generic walks."""
    for name in node.__dataclass_fields__:
        if name == "span":
            continue
        value = getattr(node, name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Node):
                    yield item


def walk(node: Node):
    yield node
    for child in children(node):
        yield from walk(child)
