"""Current bpftrace's `import` (plyc/frontends/bpftrace/imports.py): the
files it joins in and in which order, what their errors point at, how the
tracer names their lines, `plyc run`'s cache, and a tracer against
bpftrace 0.27 on the same files."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plyc import driver
from plyc.diag import PlycError
from plyc.frontends.bpftrace import parse
from plyc.ir.dump import dump

ROOT = Path(__file__).resolve().parent.parent


def write(folder: Path, files: dict) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def parsed(folder: Path, main: str = "main.bt"):
    path = folder / main
    return parse(path.read_text(), str(path))


def error_of(folder: Path, main: str = "main.bt") -> str:
    path = folder / main
    with pytest.raises(PlycError) as e:
        driver.lower(path.read_text(), str(path), driver.Options())
    return str(e.value)


def begin_texts(program) -> list:
    """What each BEGIN probe's first printf prints, in the program's order."""
    return [p.body.stmts[0].expr.args[0].value.decode() for p in program.probes]


def test_imported_parts_join_the_script_before_its_own(tmp_path):
    write(tmp_path, {
        "lib.bt": 'struct pair { int a; int b; }\nmacro twice(x) { x * 2 }\nBEGIN { printf("lib"); }\n',
        "main.bt": 'import "lib.bt";\nBEGIN { printf("main"); }\n',
    })
    prog = parsed(tmp_path)
    assert begin_texts(prog) == ["lib", "main"]
    assert [m.name for m in prog.macros] == ["twice"]
    assert "struct pair" in prog.preamble[0].text
    assert [f.name for f in prog.imported] == [str(tmp_path / "lib.bt")]


def test_a_folder_in_name_order_each_file_once_and_cycles_end(tmp_path):
    write(tmp_path, {
        "d/b.bt": 'import "../main.bt";\nBEGIN { printf("b"); }\n',     # back to the script: once
        "d/a.bt": 'import "b.bt";\nBEGIN { printf("a"); }\n',           # beside itself, not the script
        "d/notes.txt": 'BEGIN { printf("not a script"); }\n',
        "main.bt": 'import "d";\nimport "d/a.bt";\nBEGIN { printf("main"); }\n',
    })
    assert begin_texts(parsed(tmp_path)) == ["b", "a", "main"]


def test_a_script_of_imports_only_runs_their_probes(tmp_path):
    write(tmp_path, {"lib.bt": 'BEGIN { printf("lib"); }\n', "main.bt": 'import "lib.bt";\n'})
    assert begin_texts(parsed(tmp_path)) == ["lib"]
    write(tmp_path, {"empty.bt": 'macro one() { 1 }\n', "none.bt": 'import "empty.bt";\n'})
    assert "none.bt:1:1: error: the script has no probes" in error_of(tmp_path, "none.bt")


def test_errors_in_an_imported_file_name_it_and_its_line(tmp_path):
    write(tmp_path, {
        "lib.bt": '// a library\nBEGIN { $y = nosuch; }\n',
        "syntax.bt": 'BEGIN {\n  printf("x")\n  exit();\n}\n',
        "main.bt": 'import "lib.bt";\nBEGIN { exit(); }\n',
        "main2.bt": 'import "syntax.bt";\nBEGIN { exit(); }\n',
    })
    lib = tmp_path / "lib.bt"
    assert error_of(tmp_path) == (f"{lib}:2:14: error: unknown identifier 'nosuch'\n"
                                  "BEGIN { $y = nosuch; }\n             ^~~~~~")
    assert error_of(tmp_path, "main2.bt").startswith(f"{tmp_path / 'syntax.bt'}:3:3: error: ")


def test_errors_in_an_imported_definition_name_its_file(tmp_path):
    write(tmp_path, {
        "types.bt": '\n\nstruct bad { nosuchtype x; }\n',
        "a.bt": 'struct a { int x; }\n', "b.bt": '\nstruct a { int y; }\n',
        "packed.bt": 'struct p { char c; int i; } __attribute__((packed))\n',
        "main.bt": 'import "types.bt";\nBEGIN { }\n',
        "main2.bt": 'import "a.bt";\nimport "b.bt";\nBEGIN { }\n',
        "main3.bt": 'import "packed.bt";\nstruct q { char c; int i; }\nBEGIN { printf("%d %d\\n", sizeof(struct p), sizeof(struct q)); }\n',
    })
    assert error_of(tmp_path).startswith(f"{tmp_path / 'types.bt'}:3:14: error: unknown type name 'nosuchtype'\n"
                                         "struct bad { nosuchtype x; }\n")
    assert error_of(tmp_path, "main2.bt").startswith(f"{tmp_path / 'b.bt'}:2:8: error: struct a is defined twice\n")
    path = tmp_path / "main3.bt"
    # packed where it is defined, in the imported file (not at the script's line 1)
    assert "emit printf 1 (5:u64, 8:u64)" in dump(driver.lower(path.read_text(), str(path), driver.Options()))


@pytest.mark.parametrize("files,message", [
    ({"main.bt": 'import "nosuch.bt";\nBEGIN { }\n'}, 'main.bt:1:1: error: cannot find the imported file {d}/nosuch.bt'),
    ({"lib.c": "int x;\n", "main.bt": 'import "lib.c";\nBEGIN { }\n'},
     "main.bt:1:1: error: cannot import {d}/lib.c: an import names a .bt file, a .bpf.c file or a folder of them"),
    ({"lib.bt": "config = { max_strlen = 8 }\nBEGIN { }\n", "main.bt": 'import "lib.bt";\nBEGIN { }\n'},
     "lib.bt:1:1: error: a config block in an imported file: the script's own config block sets the run"),
    ({"main.bt": 'BEGIN { }\nimport "lib.bt";\n'}, "main.bt:2:1: error: an import must come before macros and probes"),
    ({"main.bt": 'import lib;\nBEGIN { }\n'}, "main.bt:1:8: error: expected the imported file's name as a string"),
    ({"main.bt": 'import "";\nBEGIN { }\n'}, "main.bt:1:1: error: an import names no file"),
    ({"bad.bt": b"BEGIN { printf(\"\xff\"); }\n", "main.bt": 'import "bad.bt";\nBEGIN { }\n'},
     "main.bt:1:1: error: the imported file is not UTF-8 text"),
])
def test_imports_that_cannot_be_taken_are_located_errors(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    got = error_of(tmp_path)
    assert message.format(d=tmp_path) in got, got


def test_a_fifo_or_a_device_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "fifo.bt")
    os.symlink("/dev/zero", tmp_path / "zero.bt")
    write(tmp_path, {"main.bt": 'import "fifo.bt";\nBEGIN { }\n', "main2.bt": 'import "zero.bt";\nBEGIN { }\n'})
    assert f"cannot import {tmp_path}/fifo.bt: not a regular file" in error_of(tmp_path)
    assert f"cannot import {tmp_path}/zero.bt: not a regular file" in error_of(tmp_path, "main2.bt")


def test_the_tracer_names_an_imported_probe_by_its_file(tmp_path):
    write(tmp_path, {"lib.bt": '\nBEGIN { printf("lib\\n"); }\n',
                     "main.bt": '// x\nimport "lib.bt";\nBEGIN { exit(); }\n'})
    path = tmp_path / "main.bt"
    gen = driver.compile_source(path.read_text(), str(path), driver.Options()).generated
    # named from the script's folder, as the script by its base name: the
    # tracer is the same wherever it is built
    assert '.where = "lib.bt:2"' in gen.loader_c
    # the statement's comment: the script's import line (verifier messages
    # name it), then the file's own line and text
    assert '/* main.bt:2: lib.bt:2: BEGIN { printf("lib\\n"); } */' in gen.bpf_c
    assert str(tmp_path) not in gen.loader_c + gen.bpf_c


@pytest.mark.bpf
def test_plyc_run_rebuilds_when_an_imported_file_changes(tmp_path):
    write(tmp_path, {"lib.bt": 'macro v() { 1 }\n', "main.bt": 'import "lib.bt";\nBEGIN { printf("v%d\\n", v()); exit(); }\n'})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run():
        proc = subprocess.run([sys.executable, "-m", "plyc", "run", "main.bt"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split("\n")[0]     # 0.27's banner is on stderr

    assert run() == "v1"
    write(tmp_path, {"lib.bt": 'macro v() { 2 }\n'})
    assert run() == "v2"


def run_both(folder: Path, bpftrace27, main: str = "main.bt") -> tuple:
    """folder's main script run by a tracer plyc built and by bpftrace 0.27,
    both having run to their end: (ours, theirs)."""
    out = folder / "tracer"
    subprocess.run([sys.executable, "-m", "plyc", "build", main, "-o", str(out)], cwd=folder, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    ours = subprocess.run([str(out)], capture_output=True, text=True, timeout=60)
    theirs = subprocess.run(bpftrace27([main], folder), capture_output=True, text=True, timeout=120)
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    return ours, theirs


@pytest.mark.bpf
def test_against_bpftrace_0_27(tmp_path, bpftrace27):
    write(tmp_path, {
        "lib/defs.bt": 'struct pair { int a; int b; }\nmacro twice(x) { x * 2 }\n',
        "hello.bt": 'import "lib";\nBEGIN { printf("hello from %s\\n", "hello.bt"); }\n',
        "main.bt": ('import "hello.bt";\nimport "lib/defs.bt";\n'
                    'BEGIN { @p = twice(21); printf("%d %d\\n", twice(@p), sizeof(struct pair)); exit(); }\n'),
    })
    ours, theirs = run_both(tmp_path, bpftrace27)
    assert "Attached 2 probes" in ours.stderr.splitlines() and "Attached 2 probes" in theirs.stderr.splitlines()
    assert ours.stdout == theirs.stdout
    assert theirs.stdout.startswith("hello from hello.bt\n84 8\n\n\n@p: 42\n")
