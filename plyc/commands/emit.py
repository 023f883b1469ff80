"""`plyc emit`: a stage of the compilation, as text (ast, ir, resources, c)."""
from __future__ import annotations

import sys

from .. import driver
from .common import add_script_args, read_script


def add(sub):
    p = sub.add_parser("emit", help="show a stage of the compilation")
    p.add_argument("--stage", choices=["ast", "ir", "resources", "c"], default="c")
    add_script_args(p)
    p.set_defaults(func=run)


def _is_node(value) -> bool:
    """A syntax tree node of any front end: a dataclass with a span."""
    return hasattr(value, "__dataclass_fields__") and hasattr(value, "span")


def dump_ast(node, indent=0) -> str:
    pad = "  " * indent
    if isinstance(node, list):
        return "".join(dump_ast(n, indent) for n in node)
    fields = []
    kids = []
    for name in node.__dataclass_fields__:
        if name in ("span", "name_span"):
            continue
        value = getattr(node, name)
        if _is_node(value) or (isinstance(value, list) and value and _is_node(value[0])):
            kids.append((name, value))
        elif value is not None and value != []:
            fields.append(f"{name}={value!r}")
    out = f"{pad}{type(node).__name__} {' '.join(fields)} @{node.span.line}:{node.span.col}\n"
    for name, value in kids:
        out += f"{pad}  .{name}:\n" + dump_ast(value, indent + 2)
    return out


def run(args) -> int:
    source, filename = read_script(args)
    opts = driver.Options(verbose=args.verbose, lang=args.lang)
    if args.stage == "ast":
        sys.stdout.write(dump_ast(driver.parse(source, filename, args.lang)))
        return 0
    if args.stage == "ir":
        from ..ir.dump import dump
        from ..ir.opt import optimize
        sys.stdout.write(dump(optimize(driver.lower(source, filename, opts))))
        return 0
    compiled = driver.compile_source(source, filename, opts)
    if args.stage == "resources":
        from ..codegen import resources
        sys.stdout.write(resources.describe(compiled.resources))
    else:
        g = compiled.generated
        name = compiled.resources.name
        for fname, text in ((f"{name}.bpf.c", g.bpf_c), (f"{name}.h", g.header), (f"{name}.c", g.loader_c)):
            print(f"/* ==== {fname} ==== */")
            sys.stdout.write(text)
    return 0
