"""bpftrace 0.27's `import "lib.bpf.c";` (plyc/frontends/bpftrace/cimports.py,
plyc/usercode.py): the C file is compiled with the program, its global
functions are called from the script as 0.27 types them, clang's messages
about it point at its own lines, and a tracer prints what 0.27 prints on
the same files."""
from pathlib import Path

import pytest

from plyc import driver
from plyc.diag import PlycError
from plyc.frontends.bpftrace import parse

LIB = """\
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

int calls;

static int triple(int x) { return 3 * x; }
int add_one(int v) { return 1 + v; }
unsigned char wrap(unsigned char c) { return c + 1; }
_Bool is_even(long v) { return (v & 1) == 0; }
int task_tid(struct task_struct *t) { return BPF_CORE_READ(t, pid); }
int bump(void) { return ++calls + triple(0); }
void nothing(void) { }
"""

SCRIPT = """\
import "lib.bpf.c";
begin {
  print(add_one(1));
  $x = add_one(41); printf("%d\\n", $x);
  print(wrap(255));
  print(is_even(4)); print(is_even(3));
  print(task_tid(curtask) == tid);
  nothing();
  print(bump()); print(bump());
  exit();
}
"""


def write(folder: Path, files: dict) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def error_of(folder: Path, main: str = "main.bt") -> str:
    path = folder / main
    with pytest.raises(PlycError) as e:
        driver.lower(path.read_text(), str(path), driver.Options())
    return str(e.value)


def test_a_c_import_is_read_not_parsed_as_a_script(tmp_path):
    write(tmp_path, {"lib.bpf.c": "int f(int v) { return v; }\n", "d/x.bpf.c": "int g(void) { return 1; }\n",
                     "d/m.bt": "macro m() { 1 }\n",
                     "main.bt": 'import "lib.bpf.c";\nimport "d";\nimport "lib.bpf.c";\nBEGIN { }\n'})
    path = tmp_path / "main.bt"
    prog = parse(path.read_text(), str(path))
    # once each, a folder's .bpf.c files with its .bt files
    assert [f.name for f in prog.c_files] == [str(tmp_path / "lib.bpf.c"), str(tmp_path / "d/x.bpf.c")]
    assert [f.name for f in prog.imported] == [str(tmp_path / "d/m.bt")]
    assert prog.c_files[0].text == "int f(int v) { return v; }\n"


def test_calls_lower_to_the_functions_with_their_prototypes(tmp_path):
    write(tmp_path, {"lib.bpf.c": LIB, "main.bt": SCRIPT})
    path = tmp_path / "main.bt"
    gen = driver.compile_source(path.read_text(), str(path), driver.Options()).generated
    # declared with their own types; called with the script's values
    # converted to them, a pointer as its address; a void one as a statement
    for decl in ("extern __s32 add_one(__s32);", "extern __u8 wrap(__u8);", "extern _Bool is_even(__s64);",
                 "extern __s32 task_tid(void *);", "extern __s32 bump(void);", "extern void nothing(void);"):
        assert decl in gen.bpf_c
    assert "add_one(((__s64)(__s32)41LL))" in gen.bpf_c
    assert "\tnothing();" in gen.bpf_c
    assert "triple" not in gen.bpf_c       # static: not the script's
    assert str(tmp_path) not in gen.bpf_c


@pytest.mark.parametrize("lib,script,message", [
    # clang's error, at the C file's line and column, with its caret
    ("int ok(int v) { return v; }\n\nint bad(int v) { return v + nope; }\n", "print(ok(1));",
     "{d}/lib.bpf.c:3:29: error: use of undeclared identifier 'nope'\n"
     "int bad(int v) { return v + nope; }\n                            ^"),
    ("struct pt { int x; };\nstruct pt mk(void) { struct pt r = {1}; return r; }\n", "print(1);",
     "{d}/lib.bpf.c:2:11: error: functions with VarArgs or StructRet are not supported"),
    # a static function is no script's (0.27: "Unknown function")
    ("static int hidden(int x) { return x; }\nint f(void) { return hidden(1); }\n", "print(hidden(1));",
     "main.bt:2:15: error: unknown function 'hidden'"),
    # 0.27's words for arguments it refuses
    ("unsigned long long twice(unsigned long long v) { return 2 * v; }\n", 'print(twice("ab"));',
     "main.bt:2:21: error: Expected unsigned long long for argument `v` got char["),
    ("int twice(int v) { return 2 * v; }\n", "print(twice(1, 2));",
     "main.bt:2:15: error: Function `twice` requires 1 arguments, got only 2\n"
     "BEGIN { print(twice(1, 2)); }\n              ^~~~~~~~~~~"),
    ("struct s;\nint f(struct s *p) { return p != 0; }\n", "print(f(0));",
     "main.bt:2:17: error: Expected struct s * for argument `p` got s64"),
    ("#include <nosuch.h>\n", "print(1);", "{d}/lib.bpf.c:1:10: error: 'nosuch.h' file not found"),
    # the program's own names
    ("\nint plyc_mine(void) { return 1; }\n", "print(1);",
     "{d}/lib.bpf.c:2:5: error: plyc_mine(): a name starting with plyc_ is plyc's own in the program"),
])
def test_errors_name_the_c_file_or_the_call(tmp_path, lib, script, message):
    write(tmp_path, {"lib.bpf.c": lib, "main.bt": f'import "lib.bpf.c";\nBEGIN {{ {script} }}\n'})
    got = error_of(tmp_path)
    assert message.replace("{d}", str(tmp_path)) in got, got


def test_clang_warnings_are_printed_at_the_c_files_line_and_the_build_goes_on(tmp_path):
    # clang's default warnings, not plyc's -Wall -Werror (the C is the
    # user's: `unused` is no error, as under 0.27)
    write(tmp_path, {"lib.bpf.c": "int w(int v) { char c = 300; int unused; return v + c; }\n",
                     "main.bt": 'import "lib.bpf.c";\nBEGIN { print(w(1)); $x = (uint64)2; print(w($x)); }\n'})
    path = tmp_path / "main.bt"
    prog = driver.lower(path.read_text(), str(path), driver.Options())
    said = [(w.span.origin.name if w.span.origin else "main.bt", w.span.line, w.span.col, w.message)
            for w in prog.warnings]
    assert said[0][:3] == (str(tmp_path / "lib.bpf.c"), 1, 25)
    assert "changes value from 300 to 44" in said[0][3]
    # a wider value narrowed to the parameter: 0.27's warning (a literal's is not)
    assert said[1][1:] == (2, 46, "Expression of type: u64 being cast to type: s32. This may cause unexpected "
                                  "results. Use an explicit cast to suppress this warning.")
    assert len(said) == 2


def test_the_c_librarys_freestanding_headers_and_the_uapi_ones_are_there(tmp_path):
    # <stdint.h>, <stdbool.h>: clang's own (bpftrace gives its own);
    # <linux/types.h>: its <asm/types.h> from the target's multiarch folder
    write(tmp_path, {"lib.bpf.c": "#include <stdint.h>\n#include <stdbool.h>\n#include <linux/types.h>\n"
                                  "#include <bpf/bpf_helpers.h>\n"
                                  "uint64_t twice(uint64_t v) { return 2 * v; }\nbool odd(__s32 v) { return v & 1; }\n",
                     "main.bt": 'import "lib.bpf.c";\nBEGIN { print((twice(21), odd(3))); }\n'})
    path = tmp_path / "main.bt"
    gen = driver.compile_source(path.read_text(), str(path), driver.Options()).generated
    assert "extern __u64 twice(__u64);" in gen.bpf_c and "extern _Bool odd(__s32);" in gen.bpf_c


def test_a_file_of_no_function_builds_without_a_word(tmp_path):
    write(tmp_path, {"lib.bpf.c": "// nothing yet\n", "main.bt": 'import "lib.bpf.c";\nBEGIN { print(1); }\n'})
    path = tmp_path / "main.bt"
    assert driver.lower(path.read_text(), str(path), driver.Options()).warnings == []


def test_the_run_cache_key_holds_the_c_file(tmp_path):
    from plyc import runcache
    write(tmp_path, {"lib.bpf.c": "int f(void) { return 1; }\n", "main.bt": 'import "lib.bpf.c";\nBEGIN { }\n'})
    path = tmp_path / "main.bt"
    first = runcache.script_key(path.read_text(), str(path), driver.Options())
    write(tmp_path, {"lib.bpf.c": "int f(void) { return 2; }\n"})
    assert runcache.script_key(path.read_text(), str(path), driver.Options()) != first


@pytest.mark.bpf
def test_against_bpftrace_0_27(tmp_path, bpftrace27):
    write(tmp_path, {"lib.bpf.c": LIB, "main.bt": SCRIPT})
    from test_bpftrace_imports import run_both
    ours, theirs = run_both(tmp_path, bpftrace27)
    assert ours.stdout == theirs.stdout
    assert theirs.stdout.startswith("2\n42\n0\ntrue\nfalse\ntrue\n1\n2\n")
