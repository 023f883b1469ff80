"""The typing rules every front end types through (docs/design.md, "Typing").

A front end walks its own tree and calls the builder methods of `Sema`
(typer.py) with the core's terms: typed IR operands, names, spans and
TypeRefs (typeref.py) for C type names; each returns typed IR or reports
an error. Below the front ends, above the IR: it imports the IR, types,
providers, builtins and kernel types, never a front end."""
from .typeref import TypeRef  # noqa: F401
from .typer import Bail, Sema  # noqa: F401
