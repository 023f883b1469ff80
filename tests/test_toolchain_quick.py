"""`plyc run`'s quicker build of a tracer for this machine (docs/performance.md,
"At the desk", fourth round): the loader's fixed includes precompiled once
(a gcc .gch in the cache), the tracer linked against this machine's shared
libraries. The loader's object is the same bytes with the precompiled
header as without; the header is one gcc really uses; `plyc build` still
makes a static tracer; the cache's header is refused when others could
have written it, as the runtime library is."""
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from plyc import driver, toolchain
from plyc.toolchain import Toolchain, loader_prelude

ROOT = Path(__file__).resolve().parent.parent
ONE_LINER = "tracepoint:syscalls:sys_enter_getppid /pid != 1/ { @[comm] = count(); } interval:ms:100 { exit(); }"


def native_toolchain(monkeypatch, cache):
    for name in ("CC", "CFLAGS", "LDFLAGS", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT", "PLYC_LIBC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLYC_CACHE", str(cache))
    from plyc import arch
    tc = Toolchain.detect(next(t for t in arch.TARGETS if arch.is_native(t)))
    assert tc.quick()
    return tc


def generated(script: str = ONE_LINER, name: str = "t"):
    opts = driver.Options(lang="bpftrace")
    return driver.compile_source(script, "<command-line>", opts, name).generated


def test_the_prelude_is_the_loaders_fixed_includes():
    prelude = loader_prelude(generated().loader_c, "t")
    lines = prelude.splitlines()
    assert lines[0] == "#define _GNU_SOURCE"
    assert '#include "plyc_rt.h"' in lines and "#include <stdio.h>" in lines
    assert not any('"t.h"' in line for line in lines)


@pytest.mark.parametrize("text", [
    "/* x */\n#include \"t.h\"\n",                                        # no _GNU_SOURCE line
    "#define _GNU_SOURCE\n#include \"t.h\"\n",                           # nothing between
    "#define _GNU_SOURCE\nint x;\n#include \"t.h\"\n",                   # code
    "#define _GNU_SOURCE\n#include \"../../etc/x.h\"\n#include \"t.h\"\n",  # not the runtime's
    "#define _GNU_SOURCE\n#define X 1\n#include \"t.h\"\n",              # another macro
])
def test_a_prelude_of_any_other_shape_is_not_precompiled(text):
    assert loader_prelude(text, "t") is None


def compile_loader(tc, gen, folder: Path, prelude) -> bytes:
    folder.mkdir()
    (folder / "t.c").write_text(gen.loader_c)
    (folder / "t.h").write_text(gen.header)
    tc.compile_loader(folder / "t.c", folder / "t.o", folder, prelude)
    return (folder / "t.o").read_bytes()


def test_the_loader_object_is_the_same_bytes_with_the_precompiled_header(tmp_path, monkeypatch):
    tc = native_toolchain(monkeypatch, tmp_path / "cache")
    gen = generated('BEGIN { printf("%d %s\\n", 1, "x"); @a[1] = hist(2); exit(); }')
    prelude = loader_prelude(gen.loader_c, "t")
    plain = compile_loader(tc, gen, tmp_path / "a", None)
    first = compile_loader(tc, gen, tmp_path / "b", prelude)       # the header built
    again = compile_loader(tc, gen, tmp_path / "c", prelude)       # and found
    assert plain == first == again
    [folder] = (tmp_path / "cache").glob("pch-*")
    assert sorted(p.name for p in folder.iterdir()) == [toolchain.PCH_HEADER, toolchain.PCH_HEADER + ".gch"]
    assert (folder / toolchain.PCH_HEADER).read_text() == prelude
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in folder.iterdir())


def test_gcc_uses_the_precompiled_header(tmp_path, monkeypatch):
    """-H marks a header read from its .gch with `!`: the time is saved."""
    tc = native_toolchain(monkeypatch, tmp_path / "cache")
    gen = generated()
    header = tc.loader_pch(loader_prelude(gen.loader_c, "t"))
    (tmp_path / "t.c").write_text(gen.loader_c)
    (tmp_path / "t.h").write_text(gen.header)
    proc = subprocess.run([*tc.cc, *tc.loader_flags(tmp_path), "-H", "-include", str(header), "-c", "t.c",
                           "-o", "t.o"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"! {header}.gch" in proc.stderr.splitlines(), proc.stderr[:2000]


def test_a_precompiled_header_others_could_write_is_not_used(tmp_path, monkeypatch):
    tc = native_toolchain(monkeypatch, tmp_path / "cache")
    gen = generated()
    header = tc.loader_pch(loader_prelude(gen.loader_c, "t"))
    gch = Path(str(header) + ".gch")
    os.chmod(gch, 0o664)
    with pytest.raises(toolchain.CacheError, match=r"plyc's loader header .*\.gch is writable by others than "
                                                   r"its owner \(mode 664\): not used"):
        native_toolchain(monkeypatch, tmp_path / "cache").loader_pch(loader_prelude(gen.loader_c, "t"))
    os.chmod(gch, 0o644)
    os.chmod(header.parent, 0o775)
    with pytest.raises(toolchain.CacheError, match="plyc's loader header folder .* is writable by group"):
        native_toolchain(monkeypatch, tmp_path / "cache").loader_pch(loader_prelude(gen.loader_c, "t"))


def plyc(*args, env):
    return subprocess.run([sys.executable, "-m", "plyc", *args], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(ROOT)), cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL)


def interpreter(path: Path) -> bool:
    """Whether the ELF file has a program interpreter (is dynamically linked)."""
    proc = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True, check=True)
    return "Requesting program interpreter" in proc.stdout


@pytest.mark.bpf
def test_plyc_run_links_against_this_machines_libraries_and_build_does_not(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CC", "CFLAGS", "LDFLAGS", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT", "PLYC_LIBC")}
    env["PLYC_CACHE"] = str(tmp_path / "cache")
    script = 'BEGIN { printf("%s %d\\n", "quick", 42); exit(); }'
    run = plyc("run", "--lang", "bpftrace", "-e", script, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("quick 42\n"), run.stdout
    [tracer] = (tmp_path / "cache" / "run").glob("*/*")
    assert interpreter(tracer)
    build = plyc("build", "--lang", "bpftrace", "-e", script, "-o", str(tmp_path / "shipped"), env=env)
    assert build.returncode == 0, build.stderr
    assert not interpreter(tmp_path / "shipped")
    shipped = subprocess.run([str(tmp_path / "shipped")], capture_output=True, text=True, timeout=60)
    assert shipped.returncode == 0 and shipped.stdout == run.stdout


def early_folder(tmp_path, gen, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "t.h").write_text(gen.header)
    return folder


def test_clang_started_early_makes_the_same_object(tmp_path, monkeypatch):
    """The BPF C through early.py's FIFO, written after clang started: the
    object is the bytes clang makes of the file itself."""
    from plyc.early import EarlyBPF
    tc = native_toolchain(monkeypatch, tmp_path / "cache")
    gen = generated()
    plain = early_folder(tmp_path, gen, "plain")
    (plain / "t.bpf.c").write_text(gen.bpf_c)
    tc.compile_bpf(plain / "t.bpf.c", plain / "t.bpf.o", plain)
    fed = early_folder(tmp_path, gen, "fed")
    early = EarlyBPF(tc, fed / "t.bpf.c", fed / "t.bpf.o", fed)
    try:
        early.feed(gen.bpf_c)
    finally:
        early.stop()
    # the same folder name, so the same -ffile-prefix-map: compare in one place
    fed_obj = (fed / "t.bpf.o").read_bytes()
    (plain / "t.bpf.o").unlink()
    plain.rename(tmp_path / "p2")
    fed.rename(plain)
    tc.compile_bpf(plain / "t.bpf.c", plain / "t.bpf.o", plain)
    assert (plain / "t.bpf.o").read_bytes() == fed_obj
    assert (plain / "t.bpf.c").read_text() == gen.bpf_c and (plain / "t.bpf.c").is_file()


def test_clang_started_early_reports_its_errors_as_before(tmp_path, monkeypatch):
    from plyc.early import EarlyBPF
    tc = native_toolchain(monkeypatch, tmp_path / "cache")
    folder = early_folder(tmp_path, generated(), "f")
    early = EarlyBPF(tc, folder / "t.bpf.c", folder / "t.bpf.o", folder)
    try:
        with pytest.raises(toolchain.ToolchainError, match=r"(?s)compiling the BPF program failed:\n\+ .*clang.*"
                                                           r"t\.bpf\.c:1:\d+: error: unknown type name 'nonsense'"):
            early.feed("nonsense x;\n")
    finally:
        early.stop()


def test_clang_started_early_and_not_fed_is_killed(tmp_path, monkeypatch):
    """A script the front end refuses: clang, blocked on the FIFO, is
    killed and reaped; plyc run leaves no work folder behind."""
    from plyc.early import EarlyBPF
    tc = native_toolchain(monkeypatch, tmp_path / "cache")
    folder = early_folder(tmp_path, generated(), "f")
    early = EarlyBPF(tc, folder / "t.bpf.c", folder / "t.bpf.o", folder)
    early.stop()
    assert early.proc.returncode is not None and early.proc.returncode < 0
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o700)
    env = dict(os.environ, PLYC_CACHE=str(tmp_path / "cache"), TMPDIR=str(tmp))
    proc = plyc("run", "--lang", "bpftrace", "-e", "BEGIN { @x = nosuch(); }", env=env)
    assert proc.returncode == 1 and "error: unknown function 'nosuch'" in proc.stderr, proc.stderr
    assert list(tmp.iterdir()) == []
