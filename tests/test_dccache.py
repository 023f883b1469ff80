"""dataclass()'s methods compiled once and kept in the cache (plyc/dccache.py,
docs/performance.md "At the desk"): the classes are the ones dataclass()
makes, the file is used only when it is ours, and a second plyc compiles
none of them again."""
import dataclasses
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plyc import dccache

ROOT = Path(__file__).resolve().parent.parent


def make_classes():
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        a: int
        b: str = "x"
        c: tuple = ()

    @dataclasses.dataclass(order=True)
    class Plain:
        n: int = 0
        items: list = dataclasses.field(default_factory=list)
    return Frozen, Plain


def behaviour(Frozen, Plain) -> list:
    f = Frozen(1)
    out = [repr(f), f == Frozen(1, "x"), f != Frozen(2), hash(f) == hash(Frozen(1)), repr(Plain()),
           Plain(1) < Plain(2), Plain().items is not Plain().items]
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.a = 3
    with pytest.raises(TypeError):
        Frozen()
    return out


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """dccache installed over a cache folder of the test's own."""
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(dccache, "_codes", {})
    monkeypatch.setattr(dccache, "_used", set())
    monkeypatch.setattr(dccache, "_path", None)
    monkeypatch.setattr(dccache, "_changed", False)
    was = getattr(dataclasses, "exec", None)
    if was is not None:
        monkeypatch.delattr(dataclasses, "exec")
    (tmp_path / "cache").mkdir(mode=0o700)
    dccache.install()
    yield tmp_path / "cache" / dccache.NAME
    if was is None:
        del dataclasses.exec


def test_classes_made_through_the_cache_behave_as_dataclass_makes_them(installed):
    first = behaviour(*make_classes())
    dccache.save()
    assert installed.exists() and installed.stat().st_mode & 0o022 == 0
    # a new process's view: the file loaded, nothing compiled again
    dccache._codes.clear()
    dccache._codes.update(dccache._load(str(installed)))
    dccache._changed = False
    again = behaviour(*make_classes())
    assert again == first and not dccache._changed
    # the same as without the cache
    del dataclasses.exec
    try:
        assert behaviour(*make_classes()) == first
    finally:
        dataclasses.exec = dccache._exec


def test_a_file_not_ours_or_not_ours_in_form_is_not_loaded(installed):
    make_classes()
    dccache.save()
    os.chmod(installed, 0o666)
    assert dccache._load(str(installed)) == {}
    installed.write_bytes(b"\0garbage")
    os.chmod(installed, 0o644)
    assert dccache._load(str(installed)) == {}
    installed.write_bytes(marshal.dumps({"text": b"not code"}))
    codes = dccache._load(str(installed))
    dccache._codes.clear()
    dccache._codes.update(codes)
    assert behaviour(*make_classes())       # the bad entries compiled afresh


def test_nothing_is_written_without_a_cache_folder(tmp_path):
    code = ("import os, sys; from plyc import cli, dccache; "
            "print(dccache._path, os.path.exists(os.environ['PLYC_CACHE']))")
    env = dict(os.environ, PLYC_CACHE=str(tmp_path / "none"), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "False"]


def test_a_second_plyc_compiles_no_dataclass_again(tmp_path):
    code = ("from plyc import cli, dccache, driver; "
            "driver.compile_source('tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }', "
            "'<command-line>', driver.Options(lang='bpftrace')); "
            "print(dccache._changed, len(dccache._used))")
    (tmp_path / "cache").mkdir(mode=0o700)
    env = dict(os.environ, PLYC_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[0] == "True" and int(first.stdout.split()[1]) > 100
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split() == ["False", first.stdout.split()[1]]


def test_a_caller_with_future_flags_is_compiled_as_before(installed):
    """exec() compiles a text with its caller's __future__ flags: a caller
    that has one (annotations) gets exec()'s own compile, not the cache's."""
    caller = compile("def run(text, ns):\n    exec(text, {}, ns)\n", "<caller>", "exec",
                     flags=__import__("__future__").annotations.compiler_flag, dont_inherit=True)
    scope = {"exec": dccache._exec}
    exec(caller, scope)
    ns = {}
    text = "def f(x: int) -> int:\n    return x\n"
    scope["run"](text, ns)
    assert ns["f"].__annotations__ == {"x": "int", "return": "int"}     # as the caller's flags say
    assert text not in dccache._codes
