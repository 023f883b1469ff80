"""The cheapest stage of a build that runs the C compiler: the generated BPF
program (NAME.bpf.c and NAME.h) compiled by clang as `plyc build` compiles it
(-O2, -Wall -Werror), no loader and no link. Tests use it to show that what
the front ends accept is C that compiles."""
import subprocess
import tempfile
from pathlib import Path

from plyc import driver
from plyc.arch import get as arch
from plyc.toolchain import BPF_WARNINGS, find_clang, runtime_dir


def bpf_compile_error(compiled: driver.Compiled) -> str:
    """clang's complaint about compiled's BPF program, or '' when it compiles."""
    name = compiled.resources.name
    rt = runtime_dir()
    with tempfile.TemporaryDirectory(prefix="plyc-cbuild-") as d:
        (Path(d) / f"{name}.bpf.c").write_text(compiled.generated.bpf_c)
        (Path(d) / f"{name}.h").write_text(compiled.generated.header)
        proc = subprocess.run([find_clang(), "-target", "bpf", f"-D__TARGET_ARCH_{arch('x86_64').bpf_arch}",
                               "-O2", "-g", *BPF_WARNINGS, "-I", rt / "bpf", "-I", rt / "bpf" / "include",
                               "-I", d, "-c", f"{d}/{name}.bpf.c", "-o", f"{d}/{name}.bpf.o"],
                              capture_output=True, text=True)
    return proc.stderr if proc.returncode else ""


def builds_or_is_refused(src: str, filename: str, options: driver.Options) -> bool:
    """What a fuzz target asserts of src: `plyc build` either refuses it with
    rendered diagnostics (a PlycError, never another exception) or makes a
    BPF program that compiles. True when it was built."""
    from plyc.diag import PlycError
    try:
        compiled = driver.compile_source(src, filename, options)
    except PlycError as err:
        text = err.render()
        assert text.startswith(filename) and ": error: " in text.split("\n")[0], text
        return False
    problem = bpf_compile_error(compiled)
    assert problem == "", f"generated code does not compile:\n--- script:\n{src}\n--- clang:\n{problem}"
    return True
