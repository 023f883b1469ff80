"""The tracer's user symbols (runtime-c/symbols/usyms.c) for another process, as
bpftrace's ustack and usym() print them: a PIE program's own symbols
(.symtab), a stripped one's exported functions (.dynsym) and the address of
a function it keeps only in the stripped .symtab (hex), and the same
addresses once the process has exited (hex, as in bpftrace). Stacks on a
kernel, side by side with bpftrace: tests/runtime/bt-ustack*.test."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime-c"
CHILD = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) int exported_fn(int x) { return x * 3; }
__attribute__((noinline)) static int hidden_fn(int x) { return x + exported_fn(x); }
int (*volatile keep)(int) = hidden_fn;
int main(void)
{
	printf("%lx %lx\n", (unsigned long)exported_fn, (unsigned long)hidden_fn);
	fflush(stdout);
	pause();
	return keep(1);
}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("gcc not installed")
    tmp = tmp_path_factory.mktemp("usyms")
    subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O2", f"-I{RUNTIME}",
                    str(ROOT / "tests/c/usym_resolve.c"), str(RUNTIME / "symbols" / "usyms.c"), str(RUNTIME / "symbols" / "usymsref.c"),
                    str(RUNTIME / "symbols" / "demangle.c"), str(RUNTIME / "core" / "rt.c"), "-lelf", "-lz",
                    "-o", str(tmp / "resolve")], check=True, capture_output=True, text=True)
    (tmp / "child.c").write_text(CHILD)
    # -rdynamic: exported_fn is in .dynsym too, hidden_fn (static) only in .symtab
    subprocess.run(["gcc", "-O2", "-rdynamic", "-fPIE", "-pie", "-o", str(tmp / "child"), str(tmp / "child.c")],
                   check=True)
    shutil.copy(tmp / "child", tmp / "stripped")
    subprocess.run(["strip", "--strip-all", str(tmp / "stripped")], check=True)
    return tmp


def resolve(built, exe: str) -> tuple:
    """The names of exported_fn+2 and hidden_fn+1 in a live `exe`, then after it exited."""
    child = subprocess.Popen([str(built / exe)], stdout=subprocess.PIPE, text=True)
    try:
        addrs = [int(a, 16) for a in child.stdout.readline().split()]
        args = [str(child.pid), f"{addrs[0] + 2:x}", f"{addrs[1] + 1:x}"]
        live = subprocess.run([str(built / "resolve"), *args], capture_output=True, text=True,
                              check=True).stdout.splitlines()
    finally:
        child.kill()
        child.wait()
    gone = subprocess.run([str(built / "resolve"), *args], capture_output=True, text=True,
                          check=True).stdout.splitlines()
    return addrs, live, gone


@pytest.mark.skipif(os.geteuid() != 0, reason="reads another process's /proc/PID/map_files: needs root")
def test_symbols_of_a_pie_program(built):
    addrs, live, gone = resolve(built, "child")
    path = os.path.realpath(built / "child")
    assert live == [f"exported_fn+2 ({path})|exported_fn", f"hidden_fn+1 ({path})|hidden_fn"]
    assert gone == [f"0x{addrs[0] + 2:x} ([unknown])|0x{addrs[0] + 2:x}",
                    f"0x{addrs[1] + 1:x} ([unknown])|0x{addrs[1] + 1:x}"]


@pytest.mark.skipif(os.geteuid() != 0, reason="reads another process's /proc/PID/map_files: needs root")
def test_a_stripped_program_falls_back_to_its_dynamic_symbols(built):
    addrs, live, _ = resolve(built, "stripped")
    path = os.path.realpath(built / "stripped")
    assert live == [f"exported_fn+2 ({path})|exported_fn",
                    f"0x{addrs[1] + 1:x} ([unknown])|0x{addrs[1] + 1:x}"]
