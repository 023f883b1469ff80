"""bpftrace's syntax tree: plain dataclasses, every node with its span.

The tree keeps what the script wrote (short provider names resolved, nothing
else): `args->f` and `args.f` are both Field nodes, `delete(@m[k])` and
`delete(@m, k)` both Calls; the lowering decides what they mean. C text in
the preamble (preprocessor lines, struct definitions) is kept verbatim with
its span, for pycparser later."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Optional, Union

from ...span import NOSPAN, Span


@dataclass(eq=False)
class Node:
    span: Span = field(default=NOSPAN, kw_only=True)


# --- expressions -----------------------------------------------------------

@dataclass(eq=False)
class Expr(Node):
    pass


@dataclass(eq=False)
class Int(Expr):
    value: int
    text: str            # as written: "1_000", "0x1f", "2e3", "10ms"


@dataclass(eq=False)
class Str(Expr):
    value: bytes


@dataclass(eq=False)
class Ident(Expr):
    """A bare name: a builtin (pid, comm, args), an enum constant or #define
    from the preamble, a stack mode (perf), or a zero-argument macro."""
    name: str


@dataclass(eq=False)
class Var(Expr):
    """`$name`: a scratch variable."""
    name: str


@dataclass(eq=False)
class Positional(Expr):
    """`$1`, `$2`, ...: a positional parameter."""
    index: int


@dataclass(eq=False)
class ParamCount(Expr):
    """`$#`: how many positional parameters were given."""


@dataclass(eq=False)
class Map(Expr):
    """`@name` (keys None) or `@name[k1, k2]`; `@` alone is named "@"."""
    name: str
    keys: Optional[list[Expr]] = None


@dataclass(eq=False)
class Call(Expr):
    name: str
    args: list[Expr]
    name_span: Span = NOSPAN

    @property
    def func(self) -> str:      # the name, as the shared builtin checks read it
        return self.name


@dataclass(eq=False)
class Field(Expr):
    """`obj.name` or `obj->name` (`arrow`); bpftrace treats them alike on pointers."""
    obj: Expr
    name: str
    arrow: bool = False


@dataclass(eq=False)
class TupleIndex(Expr):
    """`$t.0`"""
    obj: Expr
    index: int


@dataclass(eq=False)
class Index(Expr):
    """`ptr[i]`, `array[i]`, `tuple[i]`"""
    obj: Expr
    index: Expr


@dataclass(eq=False)
class Unary(Expr):
    op: str              # '!', '~', '-', '*' (dereference), '&' (address of)
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
class IncDec(Expr):
    """`x++`, `++x`, `x--`, `--x` on a variable or map."""
    op: str              # '++' or '--'
    prefix: bool
    target: Expr


@dataclass(eq=False)
class TypeName(Node):
    """A type as written in a cast, sizeof or offsetof: `struct task_struct *`,
    `uint8[8]`, `int8[]` (array_len -1: size inferred)."""
    base: str            # "uint32", "struct sock", "pid_t"; "typeof" for typeof(of)
    pointers: int = 0
    array_len: Optional[int] = None
    of: Optional[Expr] = None    # typeof(expr)'s expression

    @property
    def words(self) -> tuple:
        return tuple(self.base.split())

    def __str__(self) -> str:
        text = self.base + (" " + "*" * self.pointers if self.pointers else "")
        if self.array_len is not None:
            text += "[]" if self.array_len < 0 else f"[{self.array_len}]"
        return text


@dataclass(eq=False)
class Cast(Expr):
    type: TypeName
    operand: Expr


@dataclass(eq=False)
class Sizeof(Expr):
    arg: Union[TypeName, Expr]


@dataclass(eq=False)
class Offsetof(Expr):
    arg: Union[TypeName, Expr]
    fields: list[str]


@dataclass(eq=False)
class Tuple(Expr):
    items: list[Expr]
    names: Optional[list] = None    # a record, `(a=1, b="x")`: its members' names


@dataclass(eq=False)
class BlockExpr(Expr):
    """`{ stmt; ...; value }` (current bpftrace): the statements run, then
    the value is the block's; variables first assigned inside are its own."""
    stmts: list
    value: Expr


@dataclass(eq=False)
class Range(Expr):
    """`start..end` in a for loop."""
    start: Expr
    end: Expr


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
    """`target op value`; op is '=' or a compound one ('+=', '<<=', ...)."""
    target: Expr         # Var or Map
    op: str
    value: Expr


@dataclass(eq=False)
class Let(Stmt):
    """`let $x;`, `let $x = value;`, `let $x: type [= value];` (current bpftrace)."""
    var: Var
    value: Optional[Expr] = None
    type: Optional["TypeName"] = None


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: Block
    other: Optional[Union[Block, "If"]] = None


@dataclass(eq=False)
class Unroll(Stmt):
    count: Expr
    body: Block


@dataclass(eq=False)
class While(Stmt):
    cond: Expr
    body: Block


@dataclass(eq=False)
class For(Stmt):
    """`for ($kv : @map)` or `for ($i : start..end)`."""
    var: Var
    iterable: Expr       # Map or Range
    body: Block


@dataclass(eq=False)
class Jump(Stmt):
    kind: str            # 'break', 'continue', 'return'
    value: Optional[Expr] = None


# --- top level -------------------------------------------------------------

@dataclass(eq=False)
class CText(Node):
    """C in the preamble, verbatim: a preprocessor line or a struct, union or
    enum definition. `start`/`end` are offsets into the script."""
    kind: str            # 'preprocessor', 'struct', 'union', 'enum'
    text: str
    start: int = 0
    end: int = 0


@dataclass(eq=False)
class ConfigItem(Node):
    name: str
    value: Expr


@dataclass(eq=False)
class Config(Node):
    items: list[ConfigItem]


@dataclass(eq=False)
class MapDecl(Node):
    """`let @name = kind(entries);` (current bpftrace), before the probes."""
    name: str
    kind: str                 # hash | lruhash | percpuhash | percpulruhash (as written)
    entries: Int


@dataclass(eq=False)
class MacroParam(Node):
    name: str
    kind: str            # 'var' ($x), 'map' (@x) or 'expr' (x)


@dataclass(eq=False)
class Macro(Node):
    name: str
    params: list[MacroParam]
    body: Block


@dataclass(eq=False)
class ProbeSpec(Node):
    """One attach point: `provider:part:part`, provider as its full name
    (`t` -> tracepoint); `text` is as written."""
    provider: str
    parts: list[str]
    text: str

    @property
    def wildcard(self) -> bool:
        return any("*" in p or "?" in p for p in self.parts)

    def __str__(self) -> str:
        return ":".join([self.provider] + self.parts)


@dataclass(eq=False)
class Probe(Node):
    specs: list[ProbeSpec]
    predicate: Optional[Expr]
    body: Block


@dataclass(eq=False)
class Program(Node):
    preamble: list[CText]
    config: Optional[Config]
    macros: list[Macro]
    probes: list[Probe]
    decls: list = field(default_factory=list)   # MapDecl, in order
    imports: list = field(default_factory=list)  # Import, in order (imports.py reads them)
    imported: list = field(default_factory=list)  # SourceFile of each file imports.py joined in


@dataclass(eq=False)
class Import(Node):
    """`import "path";`: a .bt file or a folder of them, beside the script."""
    path: bytes


def sx(node) -> str:
    """A compact s-expression of a tree, for tests and `emit --stage ast`:
    `(Assign = (Map @x (Ident pid)) (Call count))`."""
    if isinstance(node, list):
        return "[" + " ".join(sx(n) for n in node) + "]"
    if isinstance(node, bytes):
        return repr(node.decode("latin-1"))
    if not isinstance(node, Node):
        return str(node) if not isinstance(node, str) or node else "''"
    if isinstance(node, TypeName):
        return f"<{node}>"
    if isinstance(node, ProbeSpec):
        return str(node)
    if isinstance(node, Int):
        return str(node.value)
    if isinstance(node, Var):
        return "$" + node.name
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Positional):
        return f"${node.index}"
    if isinstance(node, ParamCount):
        return "$#"
    if isinstance(node, Map) and node.keys is None:
        return node.name
    if isinstance(node, CText):
        return f"({node.kind} {node.text.splitlines()[0]!r})"
    if isinstance(node, Str):
        return sx(node.value)
    parts = [type(node).__name__]
    for f in fields(node):
        if f.name in ("span", "name_span"):
            continue
        value = getattr(node, f.name)
        if value is None or value is False:
            continue
        parts.append(f.name if value is True else sx(value))
    return "(" + " ".join(parts) + ")"
