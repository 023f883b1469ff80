"""A kernel struct held by value used as a value (`print(curtask->se.load)`,
`@m = $task->se.load`, `*$task->mm`): a record of its members, each a CO-RE read of its
own, nested structs as records, which bpftrace 0.27 prints
`{ .weight = 1048576, .inv_weight = 4194304 }`. Only where the struct is the
value: on the way to a member (`curtask->se.load.weight`) it stays a place
to read through (lower.py's field_base)."""
from __future__ import annotations

from ... import btf as B
from ... import types as T
from ...ir import nodes as ir

# Members a struct value may hold, nested ones counted (each a read of its
# own: a task_struct by value would be thousands).
MAX_MEMBERS = 64


def value(typer, x: ir.Expr, span) -> ir.Expr:
    """x, an expression of a kernel struct type, as a record; x a pointer
    to one: the struct it points to (`*p`)."""
    return _record(typer, x, span, [0], x.type.pointee, "")


def _record(typer, x: ir.Expr, span, count: list, what: str, path: str) -> ir.TupleMake:
    """x's members as a record; errors name the value's type (what) and
    the member (path: where x is in it)."""
    b = typer.kernel(lambda k: k.btf, span)
    st = b[b.strip(x.type.btf)]
    hint = "read the members you need (->x)"
    if st.kind == B.UNION:
        typer.err(f"a {what} as a value is not supported by plyc: "
                  + (f"its member '{path[:-1]}' is a union" if path else "it is a union"), span, hint)
    items, names = [], []
    for m in st.members:
        if not m.name or m.bitfield_size:
            typer.err(f"a {what} as a value is not supported by plyc yet: "
                      + (f"its member '{path}{m.name}' is a bit-field" if m.name
                         else f"{'its member ' + repr(path[:-1]) if path else 'it'} has an anonymous member"),
                      span, hint)
        count[0] += 1
        if count[0] > MAX_MEMBERS:
            typer.err(f"a {what} as a value is not supported by plyc: it has more than {MAX_MEMBERS} "
                      "members, nested ones counted", span, hint)
        typ = typer.kernel_member(x.type, m.name, x.type.is_pointer, span)
        node = ir.KMember(x, m.name, type=typ, span=span)
        if typ.kind == "struct":
            node = _record(typer, node, span, count, what, f"{path}{m.name}.")
        elif typ.kind not in ("int", "str"):
            typer.err(f"a {what} as a value is not supported by plyc yet: its member '{path}{m.name}' is "
                      f"an array of {typ.pointee}", span, hint)
        items.append(node)
        names.append(m.name)
    return ir.TupleMake(items, type=T.Tuple([i.type for i in items], names), span=span)
