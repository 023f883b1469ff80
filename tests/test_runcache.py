"""`plyc run`'s cache key, made fast (docs/performance.md, "At the desk")
and still right: plyc's digest is kept under a stamp of its files and
taken again when any file changes, even with its mtime put back; a
one-liner's key needs no front end; the command line loads no stage
it does not run."""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from plyc import __version__, driver, runcache

ROOT = Path(__file__).resolve().parent.parent


def fake_package(tmp_path, monkeypatch) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "runtime-c" / "load").mkdir(parents=True)
    (pkg / "templates").mkdir()
    (pkg / "__pycache__").mkdir()
    (pkg / "driver.py").write_text("x = 1\n")
    (pkg / "runtime-c" / "load" / "loader.c").write_text("int a;\n")
    (pkg / "templates" / "loader.c.j2").write_text("{{ a }}\n")
    (pkg / "__pycache__" / "driver.cpython-311.pyc").write_bytes(b"\0")
    (pkg / "notes.txt").write_text("not plyc's code\n")
    monkeypatch.setattr(runcache, "package_dir", lambda: str(pkg))
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "cache"))
    return pkg


def full_digest(pkg: Path) -> str:
    """What the digest is: every .py, .j2, .c and .h file read."""
    h = hashlib.sha256(__version__.encode())
    for rel in ["driver.py", "runtime-c/load/loader.c", "templates/loader.c.j2"]:
        h.update(rel.encode() + b"\0" + (pkg / rel).read_bytes())
    return h.hexdigest()


def test_the_kept_digest_is_the_files_and_follows_every_change(tmp_path, monkeypatch):
    pkg = fake_package(tmp_path, monkeypatch)
    first = runcache._plyc_digest()
    assert first == full_digest(pkg)
    assert len(list((tmp_path / "cache" / "digests").iterdir())) == 1
    assert runcache._plyc_digest() == first              # from the kept one
    # the same size, the mtime put back: the change time still tells
    loader = pkg / "runtime-c" / "load" / "loader.c"
    st = loader.stat()
    loader.write_text("int b;\n")
    os.utime(loader, ns=(st.st_atime_ns, st.st_mtime_ns))
    changed = runcache._plyc_digest()
    assert changed != first and changed == full_digest(pkg)
    (pkg / "templates" / "loader.c.j2").write_text("{{ b }}\n")
    assert runcache._plyc_digest() == full_digest(pkg) != changed


def test_a_damaged_kept_digest_is_taken_again(tmp_path, monkeypatch):
    pkg = fake_package(tmp_path, monkeypatch)
    runcache._plyc_digest()
    kept = next((tmp_path / "cache" / "digests").iterdir())
    kept.write_text("not a digest")
    assert runcache._plyc_digest() == full_digest(pkg)


def test_the_package_files_are_plycs_code_only(tmp_path, monkeypatch):
    fake_package(tmp_path, monkeypatch)
    assert [str(p) for p in runcache.plyc_files()] == ["driver.py", "runtime-c/load/loader.c",
                                                        "templates/loader.c.j2"]


def test_a_one_liners_key_loads_no_front_end():
    code = ("import sys; from plyc import cli, runcache, driver; "
            "k = runcache.script_key('tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }', "
            "'<command-line>', driver.Options(lang='bpftrace')); "
            "print(k, sorted(m for m in sys.modules if m.startswith(('plyc.frontends.bpftrace.', 'plyc.ir', "
            "'plyc.codegen', 'plyc.providers', 'plyc.presence', 'plyc.listing', 'jinja2', 'lark', 'pycparser'))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    key, loaded = proc.stdout.split(" ", 1)
    assert len(key) == 20 and loaded.strip() == "[]"


def test_the_key_of_a_script_that_imports_reads_its_imports(tmp_path):
    (tmp_path / "lib.bt").write_text("BEGIN { printf(\"a\\n\"); }\n")
    main = tmp_path / "main.bt"
    main.write_text('import "lib.bt";\nBEGIN { exit(); }\n')
    opts = driver.Options()
    k = runcache.script_key(main.read_text(), str(main), opts)
    (tmp_path / "lib.bt").write_text("BEGIN { printf(\"b\\n\"); }\n")
    assert runcache.script_key(main.read_text(), str(main), opts) != k
    # the same text with no import in it: the same key as before the change
    assert runcache.script_key("BEGIN { exit(); }\n", str(main), opts) == \
        runcache.key("BEGIN { exit(); }\n", [], [], "main.bt", opts)


def test_a_changed_header_under_dash_i_is_a_new_key(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "mine.h").write_text("#define LIMIT 5\n")
    src = '#include "mine.h"\nBEGIN { printf("%d\\n", LIMIT); exit(); }\n'
    opts = driver.Options(lang="bpftrace", include_dirs=(str(inc),))
    k = runcache.script_key(src, "t.bt", opts)
    assert runcache.script_key(src, "t.bt", opts) == k
    (inc / "mine.h").write_text("#define LIMIT 6\n")
    assert runcache.script_key(src, "t.bt", opts) != k
    # --include's file too
    (tmp_path / "first.h").write_text("#define A 1\n")
    opts = driver.Options(lang="bpftrace", include_files=(str(tmp_path / "first.h"),))
    k = runcache.script_key(src, "t.bt", opts)
    (tmp_path / "first.h").write_text("#define A 2\n")
    assert runcache.script_key(src, "t.bt", opts) != k


def test_quick_links_are_for_this_machines_own_gcc_only(monkeypatch):
    """plyc run's quick link (gold, .incbin) only where the tracer is for
    this machine with its own gcc and glibc; a build environment's $CC,
    $CFLAGS or $LDFLAGS, a cross target or musl get the ordinary link."""
    from plyc import arch
    from plyc.toolchain import Toolchain
    for name in ("CC", "CFLAGS", "LDFLAGS", "CROSS_COMPILE", "SYSROOT", "SDKTARGETSYSROOT", "PLYC_LIBC"):
        monkeypatch.delenv(name, raising=False)
    native = next(t for t in arch.TARGETS if arch.is_native(t))
    assert Toolchain.detect(native).quick()
    monkeypatch.setenv("CFLAGS", "-O1")
    assert not Toolchain.detect(native).quick()
    monkeypatch.delenv("CFLAGS")
    monkeypatch.setenv("CC", "gcc")
    assert not Toolchain.detect(native).quick()
    assert not Toolchain(target=native, libc="musl").quick()
    other = next(t for t in arch.TARGETS if not arch.is_native(t))
    assert not Toolchain(target=other).quick()
