"""The tracer runtime's layers (runtime-c/, docs/design.md "The runtime"):
its sources are in a folder per layer, calls between files go only to the
same layer or one below it (plyc.toolchain.RUNTIME_LAYERS, lowest first),
no two files call each other through any path, and only the start-up
selection of the output's operations (output/select.c) names a style (the
generated loader only in its program description, which the selection reads).

The call graph is by name: each file's top-level definitions (functions,
and initialized objects such as an ops table), and every identifier its
code uses that another file defines (calls, and functions put in tables).
"""
import re
from pathlib import Path

import pytest

from plyc.toolchain import RUNTIME_LAYERS
from test_imports import cycles   # Tarjan's groups, over files here as over modules there

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime-c"
SELECTION = "output/select.c"

CONTROL = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def strip(src: str) -> str:
    """The C code without comments, string and character literals and
    preprocessor lines (newlines kept)."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\\n])*'", "''", src)
    return re.sub(r"^[ \t]*#[^\n]*(\\\n[^\n]*)*", "", src, flags=re.M)


def definitions(code: str) -> tuple:
    """(names defined at the top level, those of them that are static)."""
    defined, static = set(), set()
    depth, start = 0, 0
    for m in re.finditer(r"[{};]", code):
        if m.group(0) == "{":
            if depth == 0:
                head = code[start:m.start()]
                # a function: NAME(...) {; an initialized object: NAME[...] = {
                fn = re.search(r"\b([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*$", head)
                obj = re.search(r"\b([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*=\s*$", head)
                name = (fn or obj).group(1) if (fn or obj) else None
                if name and name not in CONTROL and not re.search(r"\b(struct|union|enum)\s*$", head[:(fn or obj).start()]):
                    defined.add(name)
                    if re.search(r"\bstatic\b", head):
                        static.add(name)
            depth += 1
        elif m.group(0) == "}":
            depth -= 1
            if depth == 0:
                start = m.end()
        elif depth == 0:
            start = m.end()
    return defined, static


def function_lengths(code: str) -> dict:
    """{function defined at the top level: its lines, from the line of its
    opening brace to that of its closing one}."""
    lengths, depth, start, opened = {}, 0, 0, None
    for m in re.finditer(r"[{};]", code):
        if m.group(0) == "{":
            if depth == 0:
                head = code[start:m.start()]
                fn = re.search(r"\b([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*(__attribute__\s*\(\(.*?\)\)\s*)?$", head)
                opened = (fn.group(1), code.count("\n", 0, m.start())) \
                    if fn and fn.group(1) not in CONTROL and not re.search(r"=\s*$", head) else None
            depth += 1
        elif m.group(0) == "}":
            depth -= 1
            if depth == 0:
                start = m.end()
                if opened:
                    lengths[opened[0]] = code.count("\n", 0, m.start()) - opened[1] + 1
                    opened = None
        elif depth == 0:
            start = m.end()
    return lengths


def sources() -> dict:
    return {p.relative_to(RUNTIME).as_posix(): strip(p.read_text())
            for layer in RUNTIME_LAYERS for p in sorted((RUNTIME / layer).glob("*.c"))}


def call_graph(files: dict) -> dict:
    """{file: {file it uses: names}} between different files."""
    owner, local = {}, {}
    for f, code in files.items():
        defined, static = definitions(code)
        local[f] = defined
        for name in defined - static:
            assert name not in owner, f"{name} is defined in {owner.get(name)} and {f}"
            owner[name] = f
    edges = {f: {} for f in files}
    for f, code in files.items():
        for name in set(re.findall(r"[A-Za-z_]\w*", code)) - local[f]:
            g = owner.get(name)
            if g and g != f:
                edges[f].setdefault(g, set()).add(name)
    return edges


def test_every_source_is_in_a_layer():
    """toolchain.py builds the layers' sources: none is left outside them
    (bpf/ holds the BPF side's headers, compat/ a toolchain's shims)."""
    outside = [p.relative_to(RUNTIME).as_posix() for p in RUNTIME.rglob("*.c")
               if p.relative_to(RUNTIME).parts[0] not in RUNTIME_LAYERS + ("compat",)]
    assert outside == []
    assert len(sources()) > 40


def test_the_graph_sees_calls():
    """The parser finds what the checks below rely on: the loader calls the
    attach layer, the ply style the aggregations, and the selection."""
    edges = call_graph(sources())
    assert "plyc_attach_all" in edges["load/loader.c"]["probes/attach.c"]
    assert "plyc_agg_scalar" in edges["output/ply.c"]["maps/aggregations.c"]
    assert "plyc_output_use" in edges["load/loader.c"][SELECTION]


def test_no_call_cycle_between_files():
    assert cycles(call_graph(sources())) == []


def test_calls_go_down_the_layers():
    rank = {layer: i for i, layer in enumerate(RUNTIME_LAYERS)}
    upward = []
    for f, uses in call_graph(sources()).items():
        for g, names in uses.items():
            if rank[g.split("/")[0]] > rank[f.split("/")[0]]:
                upward.append(f"{f} -> {g} ({', '.join(sorted(names))})")
    assert upward == []


def test_only_the_selection_names_a_style():
    """Whose output it is (ply's, bpftrace's, a report) is read once, when
    the operations are chosen; everything else prints through them."""
    named = [f for f, code in sources().items()
             if f != SELECTION and re.search(r"\bPLYC_STYLE_\w+|plyc_rt\s*\.\s*style\b", code)]
    assert named == []
    assert "PLYC_STYLE_BPFTRACE" in strip((RUNTIME / SELECTION).read_text())


# print() of values and of a map, printf, a map left to the exit dump
GENERATED = {
    "a.ply": 'kprobe:vfs_read { @n[comm] = count(); print(pid, comm); printf("%v\\n", pid); print(@n); }',
    "a.bt": 'kprobe:vfs_read { @n[comm] = count(); print((pid, comm)); print(pid); printf("%d\\n", pid); '
            'print(@n, 2); }',
}


@pytest.mark.parametrize("name", GENERATED)
def test_generated_loader_names_no_style(name):
    """The generated loader says once, in its program description, whose
    output it is; its printers go through the operations chosen by it."""
    from plyc import driver
    source = GENERATED[name]
    code = strip(driver.compile_source(source, name, driver.Options()).generated.loader_c)
    style = "PLYC_STYLE_BPFTRACE" if name.endswith(".bt") else "PLYC_STYLE_PLY"
    assert re.findall(r"\.style\s*=\s*PLYC_STYLE_\w+", code) == [f".style = {style}"]
    rest = re.sub(r"\.style\s*=\s*PLYC_STYLE_\w+", "", code)
    assert re.findall(r"\bPLYC_STYLE_\w+|plyc_rt\s*\.\s*style\b", rest) == []
    assert "plyc_print(" in rest


MAX_FUNCTION_LINES = 150


def test_function_lengths_are_measured():
    """The measure below sees a function's lines, static, inline or not."""
    code = strip("static inline int f(int a)\n{\n\tif (a) {\n\t\treturn 1;\n\t}\n\treturn 0;\n}\n"
                 "struct s { int x; };\nstatic const int t[] = { 1, 2 };\nvoid g(void) { }\n")
    assert function_lengths(code) == {"f": 6, "g": 1}
    lengths = function_lengths(strip((RUNTIME / "load/loader.c").read_text()))
    assert {"plyc_main", "arguments", "open_object", "load", "attach", "teardown"} <= lengths.keys()


def test_no_runtime_function_is_longer_than_150_lines():
    """Every C function of the runtime (its layers, the BPF side's headers,
    the interfaces' inline ones) reads as one job: plyc_main is its phases
    (docs/design.md "The runtime")."""
    long = [f"{p.relative_to(RUNTIME)}: {name}() {n} lines"
            for p in sorted(RUNTIME.rglob("*.[ch]"))
            for name, n in function_lengths(strip(p.read_text())).items() if n > MAX_FUNCTION_LINES]
    assert long == []
