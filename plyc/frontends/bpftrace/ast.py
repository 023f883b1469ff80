"""bpftrace's syntax tree: plain dataclasses, every node with its span.

The tree keeps what the script wrote (short provider names resolved, nothing
else): `args->f` and `args.f` are both Field nodes, `delete(@m[k])` and
`delete(@m, k)` both Calls; the lowering decides what they mean. C text in
the preamble (preprocessor lines, struct definitions) is kept verbatim with
its span, for pycparser later."""
from __future__ import annotations

from dataclasses import field, fields
from typing import Optional, Union

from ...lazyclass import node
from ...span import NOSPAN, Span


@node
class Node:
    span: Span = field(default=NOSPAN, kw_only=True)


# --- expressions -----------------------------------------------------------

@node
class Expr(Node):
    pass


@node
class Int(Expr):
    value: int
    text: str            # as written: "1_000", "0x1f", "2e3", "10ms"


@node
class Str(Expr):
    value: bytes


@node
class Ident(Expr):
    """A bare name: a builtin (pid, comm, args), an enum constant or #define
    from the preamble, a stack mode (perf), or a zero-argument macro."""
    name: str


@node
class Var(Expr):
    """`$name`: a scratch variable."""
    name: str


@node
class Positional(Expr):
    """`$1`, `$2`, ...: a positional parameter."""
    index: int


@node
class ParamCount(Expr):
    """`$#`: how many positional parameters were given."""


@node
class Map(Expr):
    """`@name` (keys None) or `@name[k1, k2]`; `@` alone is named "@"."""
    name: str
    keys: Optional[list[Expr]] = None


@node
class Call(Expr):
    name: str
    args: list[Expr]
    name_span: Span = NOSPAN

    @property
    def func(self) -> str:      # the name, as the shared builtin checks read it
        return self.name


@node
class Field(Expr):
    """`obj.name` or `obj->name` (`arrow`); bpftrace treats them alike on pointers."""
    obj: Expr
    name: str
    arrow: bool = False


@node
class TupleIndex(Expr):
    """`$t.0`"""
    obj: Expr
    index: int


@node
class Index(Expr):
    """`ptr[i]`, `array[i]`, `tuple[i]`"""
    obj: Expr
    index: Expr


@node
class Unary(Expr):
    op: str              # '!', '~', '-', '*' (dereference), '&' (address of)
    operand: Expr


@node
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@node
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@node
class IncDec(Expr):
    """`x++`, `++x`, `x--`, `--x` on a variable or map."""
    op: str              # '++' or '--'
    prefix: bool
    target: Expr


@node
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


@node
class Cast(Expr):
    type: TypeName
    operand: Expr


@node
class Sizeof(Expr):
    arg: Union[TypeName, Expr]


@node
class Offsetof(Expr):
    arg: Union[TypeName, Expr]
    fields: list[str]


@node
class Tuple(Expr):
    items: list[Expr]
    names: Optional[list] = None    # a record, `(a=1, b="x")`: its members' names


@node
class BlockExpr(Expr):
    """`{ stmt; ...; value }` (current bpftrace): the statements run, then
    the value is the block's; variables first assigned inside are its own."""
    stmts: list
    value: Expr


@node
class Range(Expr):
    """`start..end` in a for loop."""
    start: Expr
    end: Expr


# --- statements ------------------------------------------------------------

@node
class Stmt(Node):
    pass


@node
class Block(Stmt):
    stmts: list[Stmt]


@node
class ExprStmt(Stmt):
    expr: Expr


@node
class Assign(Stmt):
    """`target op value`; op is '=' or a compound one ('+=', '<<=', ...)."""
    target: Expr         # Var or Map
    op: str
    value: Expr


@node
class Let(Stmt):
    """`let $x;`, `let $x = value;`, `let $x: type [= value];` (current bpftrace)."""
    var: Var
    value: Optional[Expr] = None
    type: Optional["TypeName"] = None


@node
class If(Stmt):
    cond: Expr
    then: Block
    other: Optional[Union[Block, "If"]] = None


@node
class Unroll(Stmt):
    count: Expr
    body: Block


@node
class While(Stmt):
    cond: Expr
    body: Block


@node
class For(Stmt):
    """`for ($kv : @map)` or `for ($i : start..end)`."""
    var: Var
    iterable: Expr       # Map or Range
    body: Block


@node
class Jump(Stmt):
    kind: str            # 'break', 'continue', 'return'
    value: Optional[Expr] = None


# --- top level -------------------------------------------------------------

@node
class CText(Node):
    """C in the preamble, verbatim: a preprocessor line or a struct, union or
    enum definition. `start`/`end` are offsets into the script."""
    kind: str            # 'preprocessor', 'struct', 'union', 'enum'
    text: str
    start: int = 0
    end: int = 0


@node
class ConfigItem(Node):
    name: str
    value: Expr


@node
class Config(Node):
    items: list[ConfigItem]


@node
class MapDecl(Node):
    """`let @name = kind(entries);` (current bpftrace), before the probes."""
    name: str
    kind: str                 # hash | lruhash | percpuhash | percpulruhash (as written)
    entries: Int


@node
class MacroParam(Node):
    name: str
    kind: str            # 'var' ($x), 'map' (@x) or 'expr' (x)


@node
class Macro(Node):
    name: str
    params: list[MacroParam]
    body: Block


@node
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


@node
class Probe(Node):
    specs: list[ProbeSpec]
    predicate: Optional[Expr]
    body: Block


@node
class Program(Node):
    preamble: list[CText]
    config: Optional[Config]
    macros: list[Macro]
    probes: list[Probe]
    decls: list = field(default_factory=list)   # MapDecl, in order
    imports: list = field(default_factory=list)  # Import, in order (imports.py reads them)
    imported: list = field(default_factory=list)  # SourceFile of each file imports.py joined in
    # SourceFile of each C file imported (`import "lib.bpf.c";`), in order: compiled with the program
    c_files: list = field(default_factory=list)


@node
class Import(Node):
    """`import "path";`: a .bt or .bpf.c file, or a folder of them, beside the script."""
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
