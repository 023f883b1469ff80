"""The musl build (--libc musl): an x86_64 tracer of at most 500 KB
stripped, static, with no glibc in it, that runs: a few runtime directive
tests (tests/runtime/) through it, chosen for what differs between C
libraries (printf conversions, JSON and UTF-8 output, child and signal
handling, sorted output, hexdump, strerror()'s and signal_name()'s words)."""
import subprocess
import sys
from pathlib import Path

import pytest

import test_runtime

ROOT = Path(__file__).resolve().parent.parent
MAX_SIZE = 500 * 1024
CASES = ["printf-conversions", "printf-widths", "json-values", "tracepoint-char-array", "child-signals",
         "end-on-sigint", "map-sort-order", "print-histogram", "mem-hexdump", "argdist-hist",
         "manual-wildcard", "bt-strerror-table",
         "bt-signal-name-table", "bt-ustack", "bt-kstack-modes", "bt-syscall-name", "bt-output-events-json"]


def plyc(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "plyc", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def musl_libraries():
    # The first use builds libbpf, libelf and zlib for musl (once).
    proc = plyc("sysroot", "--libc", "musl", "--target", "x86_64", timeout=900)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def test_musl_tracer_is_small_static_and_runs(musl_libraries, tmp_path):
    out = tmp_path / "syscall-count"
    proc = plyc("build", "--libc", "musl", ROOT / "examples/syscall-count.ply", "-o", out)
    assert proc.returncode == 0, proc.stderr
    size = out.stat().st_size
    assert size <= MAX_SIZE, f"{size} bytes"
    readelf = subprocess.run(["readelf", "-lS", str(out)], capture_output=True, text=True).stdout
    assert "INTERP" not in readelf and ".symtab" not in readelf  # static and stripped
    assert b"GLIBC" not in out.read_bytes()
    help_out = subprocess.run([str(out), "-h"], capture_output=True, text=True)
    assert help_out.returncode == 0 and "syscall-count.ply:" in help_out.stdout


def test_glibc_is_still_there(musl_libraries, tmp_path):
    out = tmp_path / "glibc"
    proc = plyc("build", "--libc", "glibc", ROOT / "examples/syscall-count.ply", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert b"GLIBC" in out.read_bytes()


def test_musl_no_strip_keeps_symbols(musl_libraries, tmp_path):
    out = tmp_path / "unstripped"
    # The first such build has zig build musl with debug information (once).
    proc = plyc("build", "--libc", "musl", "--no-strip", ROOT / "examples/syscall-count.ply", "-o", out,
                timeout=900)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", str(out)], capture_output=True, text=True).stdout
    assert " T plyc_main" in nm
    # What plyc's libraries leave out for size (plyc/musl.py): zlib reads
    # (libbpf's /proc/config.gz) but does not write; libbpf's loader
    # generator is plyc's stand-in, without gen_loader.c's helpers.
    defined = {line.split()[-1] for line in nm.splitlines() if len(line.split()) == 3}
    assert {"inflate", "gzgets", "gzclose_r", "bpf_gen__init"} <= defined
    assert not {"deflate", "gzwrite", "gzclose_w", "realloc_insn_buf"} & defined
    # and the runtime as far as the program prints (docs/toolchain.md, "Where
    # the bytes go"): ply's output, no user symbols nor C++ demangler, no
    # bpftrace output nor bcc report
    assert {"plyc_output_ply", "plyc_ply_print"} <= defined
    assert not {"plyc_usym_bt", "plyc_demangle", "plyc_output_bpftrace", "plyc_bt_map_print",
                "plyc_output_bccreport"} & defined


def test_musl_links_user_symbols_where_printed(musl_libraries, tmp_path):
    """A program with a user stack or usym() value links the symbolizer and
    the demangler, and bpftrace's output without ply's."""
    script = tmp_path / "u.bt"
    script.write_text('kprobe:vfs_read { @[ustack(3)] = count(); printf("%s\\n", usym(reg("ip"))); }\n')
    out = tmp_path / "u"
    proc = plyc("build", "--libc", "musl", "--no-strip", script, "-o", out, timeout=900)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", str(out)], capture_output=True, text=True).stdout
    defined = {line.split()[-1] for line in nm.splitlines() if len(line.split()) == 3}
    assert {"plyc_usym_bt", "plyc_demangle", "plyc_usyms_elf", "plyc_output_bpftrace", "plyc_bt_print"} <= defined
    assert not {"plyc_output_ply", "plyc_ply_print", "plyc_output_bccreport"} & defined


def test_the_libbpf_stand_ins_define_what_libbpf_declares(musl_libraries):
    # A newer libbpf that declares another generator function would leave
    # it undefined (or link gen_loader.c's, twice): fail here, not in a link.
    import re
    sys.path.insert(0, str(ROOT))
    from plyc import musl
    src = musl.sources()
    for header, standin in (("bpf_gen_internal.h", "libbpf-no-gen-loader.c"),):
        declared = set(re.findall(r"^\w[\w ]*?\b(bpf_gen__\w+)\(", (musl._one(src, "libbpf") / "src" / header)
                                  .read_text(), re.M))
        defined = set(re.findall(r"^\w[\w ]*?\b(bpf_gen__\w+)\(", (musl.STANDIN_DIR / standin).read_text(), re.M))
        assert declared and declared == defined, (header, declared ^ defined)


def test_musl_refuses_a_sysroot(tmp_path):
    proc = plyc("build", "--libc", "musl", "--sysroot", tmp_path, ROOT / "examples/syscall-count.ply",
                "-o", tmp_path / "x")
    assert proc.returncode == 1
    assert proc.stderr == ("plyc: error: --sysroot is for glibc builds: a musl build uses the libraries "
                           "plyc builds (plyc sysroot --libc musl --target T)\n")


@pytest.mark.bpf
@pytest.mark.parametrize("case", CASES)
def test_runtime_case_with_musl(case, musl_libraries, tmp_path, workload, usdt_prog, monkeypatch):
    monkeypatch.setenv("PLYC_LIBC", "musl")
    test_runtime.test_runtime(test_runtime.ROOT / "tests/runtime" / f"{case}.test", tmp_path, workload,
                              usdt_prog)
    assert b"GLIBC" not in (tmp_path / case.replace("-", "_")).read_bytes()  # it was musl's
