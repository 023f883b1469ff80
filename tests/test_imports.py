"""plyc's layering, read from its source (ast): the IR imports nothing above
it (codegen, front ends, providers), no front end imports another, and no
module imports, directly or through others, a module that imports it back.

Every import counts, at module level or inside a function, except those
under `if TYPE_CHECKING:` (annotations only: Python never runs them)."""
import ast
from pathlib import Path

PLYC = Path(__file__).resolve().parent.parent / "plyc"

# Known, each to go with the change that owns its code (issue 21): the test
# asserts exactly these, so a new one fails it and a fixed one must be
# struck off here.
KNOWN_CROSS_IMPORTS = []
KNOWN_CYCLES = []


def module_name(path: Path) -> str:
    parts = ["plyc", *path.relative_to(PLYC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict:
    """Every module of plyc: name -> its file."""
    return {module_name(p): p for p in sorted(PLYC.rglob("*.py"))}


def _type_checking(node) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
        or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node):
    """ast.walk, less the `if TYPE_CHECKING:` bodies."""
    for child in ast.iter_child_nodes(node):
        if _type_checking(child):
            for n in child.orelse:
                yield n
                yield from _walk(n)
            continue
        yield child
        yield from _walk(child)


def imports(name: str, path: Path, known: dict) -> set:
    """The plyc modules `name` imports: `from P import m` names module P.m
    where m is one, else P."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in _walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "plyc")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "plyc":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in known else target)
    return {m for m in out if m in known and m != name}


def graph() -> dict:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_graph_is_read():
    """The reader finds real edges (a test that found none would pass)."""
    g = graph()
    assert "plyc.ir.nodes" in g["plyc.ir.passes"]
    assert "plyc.driver" in g["plyc.commands.build"]
    assert "plyc.frontends.ply.parser" in g["plyc.frontends.ply"]


def test_ir_imports_nothing_above_it():
    bad = sorted(f"{m} imports {dep}" for m, deps in graph().items() if under(m, "plyc.ir")
                 for dep in deps
                 if any(under(dep, p) for p in ("plyc.codegen", "plyc.frontends", "plyc.providers")))
    assert bad == []


# What the core IR may import besides itself: leaf modules, which import
# nothing of plyc but the IR (diag's spans) and each other (types' records
# are laid out by layout.py, which reads the targets' ABIs from arch.py).
IR_BELOW = {"plyc.types", "plyc.diag", "plyc.quoting", "plyc.layout", "plyc.arch",
            "plyc.lazyclass"}


def test_ir_imports_only_leaves():
    """Not the tables above it either (builtins, aggregations: they carry
    typing rules and layouts): only the IR's own modules and IR_BELOW."""
    g = graph()
    bad = sorted(f"{m} imports {dep}" for m, deps in g.items() if under(m, "plyc.ir")
                 for dep in deps if not under(dep, "plyc.ir") and dep not in IR_BELOW)
    assert bad == []
    assert "plyc.types" in g["plyc.ir.nodes"]
    leaky = sorted(f"{m} imports {dep}" for m in IR_BELOW for dep in g[m]
                   if not under(dep, "plyc.ir") and dep not in IR_BELOW)
    assert leaky == []


def front_end(name: str):
    """The front end (plyc.frontends.X, a package) name belongs to, if any."""
    parts = name.split(".")
    if len(parts) >= 3 and parts[1] == "frontends" and (PLYC / "frontends" / parts[2]).is_dir():
        return parts[2]
    return None


def test_no_front_end_imports_another():
    bad = sorted(f"{m} imports {dep}" for m, deps in graph().items() if front_end(m)
                 for dep in deps if front_end(dep) and front_end(dep) != front_end(m))
    assert bad == KNOWN_CROSS_IMPORTS


def cycles(g: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    assert cycles(graph()) == KNOWN_CYCLES
