"""Reproducible tracers (docs/toolchain.md): two builds of a script with the
same options are the same bytes, whatever folder plyc ran from and whatever
temporary work folder the build used."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = 'kprobe:vfs_read /pid != 0/ { @[comm] = count(); printf("%s\\n", str(arg1)); }\n'


def build(tmp_path: Path, tag: str, *options, cache=None) -> bytes:
    """The tracer built from cwd tmp_path/tag/cwd/sub with TMPDIR tmp_path/tag/tmp,
    into tmp_path/tag/out/tracer (the same name each time: it names the program)."""
    base = tmp_path / tag
    cwd, tmpdir, out = base / "cwd" / "sub", base / "tmp", base / "out"
    for d in (cwd, tmpdir, out):
        d.mkdir(parents=True)
    script = tmp_path / "s.bt"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmpdir))
    if cache:
        env["PLYC_CACHE"] = str(cache)
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", *options, "-o", str(out / "tracer"), str(script)],
                          cwd=cwd, env=env, capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stderr.decode()
    data = (out / "tracer").read_bytes()
    for word in (str(tmp_path).encode(), b"/tmp/plyc-"):
        assert word not in data, f"{word!r} in the tracer"
    return data


def notes_build_id(path: Path) -> str:
    proc = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True)
    return "".join(line for line in proc.stdout.splitlines() if "Build ID" in line)


@pytest.mark.parametrize("options", [(), ("--no-strip",), ("--libc", "musl"), ("--target", "aarch64"),
                                     ("--target", "aarch64", "--libc", "musl")],
                         ids=["glibc", "glibc-no-strip", "musl", "aarch64", "aarch64-musl"])
def test_two_builds_are_the_same_bytes(tmp_path, options):
    a = build(tmp_path, "a", *options)
    b = build(tmp_path, "b", *options)
    assert a == b


def test_the_runtime_library_builds_the_same_from_any_folder(tmp_path):
    """Two fresh caches, each building libplycrt.a from its own folder and
    cwd: the libraries and the tracers are the same bytes."""
    a = build(tmp_path, "a", "--no-strip", cache=tmp_path / "cache-a")
    b = build(tmp_path, "b", "--no-strip", cache=tmp_path / "cache-b")
    [lib_a] = (tmp_path / "cache-a").glob("rt-*/libplycrt.a")
    [lib_b] = (tmp_path / "cache-b").glob("rt-*/libplycrt.a")
    assert lib_a.read_bytes() == lib_b.read_bytes()
    assert a == b
    assert notes_build_id(tmp_path / "a/out/tracer") == notes_build_id(tmp_path / "b/out/tracer")


def build_in(folder: Path, out: Path, **env):
    """`plyc build -o OUT s.bt` run in folder (SCRIPT as s.bt there) with env added."""
    (folder / "s.bt").write_text(SCRIPT)
    proc = subprocess.run([sys.executable, "-m", "plyc", "build", "-o", str(out), "s.bt"], cwd=folder,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **env), capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.exists()


def test_relative_paths_in_cflags_are_the_callers_folder(tmp_path):
    """The compiler runs in the work folder; $CFLAGS' and $LDFLAGS' relative
    paths still mean the folder plyc was run from."""
    from plyc.toolchain import absolute_paths
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "extra.h").write_text("#define PLYC_TEST_EXTRA 1\n")
    build_in(tmp_path, tmp_path / "t", CFLAGS="-include inc/extra.h -Iinc", LDFLAGS="-Linc")
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert absolute_paths(["-Iinc", "-isystem", "x", "--sysroot=r", "-DX=a/b", "-O2", "-I=/usr/inc"]) == \
            [f"-I{tmp_path}/inc", "-isystem", f"{tmp_path}/x", f"--sysroot={tmp_path}/r", "-DX=a/b", "-O2",
             "-I=/usr/inc"]
    finally:
        os.chdir(here)


def test_a_relative_compiler_and_archiver_are_the_callers_folder(tmp_path):
    """$CC=./bin/cc and $AR=./bin/ar name programs in the folder plyc was
    run from, as a relative path in $CFLAGS does (the compiler ran in the
    work folder: an internal error, FileNotFoundError). The folder is a
    stable one in the cache: the runtime library is built for the compiler's
    path once, not on every run."""
    from plyc.cachedir import cache_dir
    home = cache_dir() / "test-relative-cc"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    for tool in ("gcc", "ar"):
        (home / "bin" / f"my{tool}").write_text(f'#!/bin/sh\nexec {tool} "$@"\n')
        (home / "bin" / f"my{tool}").chmod(0o755)
    build_in(home, tmp_path / "t", CC="./bin/mygcc -O2", AR="bin/../bin/myar")


def test_relative_keep_folder_and_cache_work_and_change_nothing(tmp_path):
    """--keep DIR and $PLYC_CACHE given relative (the compiler runs in the
    work folder): the build works, and the tracer is the one a build with a
    temporary work folder makes."""
    (tmp_path / "s.bt").write_text(SCRIPT)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for cwd, extra, cache in (("a", ["--keep", "kept"], "cache"), ("b", [], None)):
        e = dict(env, PLYC_CACHE=cache) if cache else env
        proc = subprocess.run([sys.executable, "-m", "plyc", "build", *extra, "-o", "t", "../s.bt"],
                              cwd=tmp_path / cwd, env=e, capture_output=True, timeout=900)
        assert proc.returncode == 0, proc.stderr.decode()
    assert (tmp_path / "a/kept/t.bpf.c").exists() and list((tmp_path / "a/cache").glob("rt-*/libplycrt.a"))
    assert (tmp_path / "a/t").read_bytes() == (tmp_path / "b/t").read_bytes()
