"""Integer tracepoint fields are read by one load from the context, at the
offset, width and sign the device's format file gives them: the tracer
rewrites the load before it loads the program (runtime-c/load/tpfields.c).

The device here is this machine's kernel, whose format files the tracer is
made to see edited (PLYC_TRACEFS): the kernel keeps writing its own layout,
so a tracer that honours the edited one reads other bytes, predictably."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.bpf

EVENTS = Path("/sys/kernel/tracing/events")


def build(tmp_path, script, env=None):
    src = tmp_path / "t.ply"
    src.write_text(script)
    out = tmp_path / "t"
    proc = builds.run([sys.executable, "-m", "plyc", "build", str(src), "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return str(out)


def run(tracer, *args, env=None):
    return subprocess.run([tracer, "-v", *args], capture_output=True, text=True, timeout=30,
                          env=env or dict(os.environ))


def real_field(event: str, decl: str) -> tuple[int, int]:
    """Offset and size of `decl` ("size_t count") in this kernel's format."""
    m = re.search(rf"field:{re.escape(decl)};\toffset:(\d+);\tsize:(\d+);", (EVENTS / event / "format").read_text())
    assert m, f"{event} has no {decl}"
    return int(m[1]), int(m[2])


def device(path: Path, **edits) -> dict:
    """An environment whose tracefs (PLYC_TRACEFS, at `path`) serves this
    kernel's format files of the events named (group__event=...), each line
    declaring a field of the {decl: (offset, size)} given edited to that
    offset and size (None: the line left out)."""
    for key, fields in edits.items():
        event = key.replace("__", "/", 1)
        text = (EVENTS / event / "format").read_text()
        for decl, where in fields.items():
            line = re.compile(rf"\tfield:{re.escape(decl)};\toffset:\d+;\tsize:\d+;(.*)\n")
            assert line.search(text), f"{event} has no {decl}"
            text = line.sub("" if where is None else
                            rf"\tfield:{decl};\toffset:{where[0]};\tsize:{where[1]};\1\n", text)
        (path / "events" / event).mkdir(parents=True, exist_ok=True)
        (path / "events" / event / "format").write_text(text)
    return dict(os.environ, PLYC_TRACEFS=str(path))


READS = 'tracepoint:syscalls/sys_enter_read / comm == "plyc-work" / { @[data->count] = count(); }\n'
OPENS = 'tracepoint:syscalls/sys_exit_openat / comm == "plyc-work" / { @[data->ret] = count(); }\n'


def test_fields_are_loaded_directly(tmp_path, workload):
    """Fields of several sizes and signs, in two programs, each one load."""
    tracer = build(tmp_path, READS.replace("@[data->count]", "@reads[data->count, data->__syscall_nr >= 0]")
                   + OPENS.replace("@[", "@opens[").replace('"plyc-work" /', '"plyc-work" && data->ret < 0 /'))
    out = run(tracer, "-c", f"{workload} read 2 300; {workload} open /nonexistent/plyc 3")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@reads:\n{ 300, 1 }: 2\n\n@opens:\n{ -2 }: 3\n"
    off, _ = real_field("syscalls/sys_enter_read", "size_t count")
    assert f"data->count: offset {off}, 8 bytes: one load of 8 bytes\n" in out.stderr
    assert re.search(r"data->__syscall_nr: offset \d+, 4 bytes: one load of 4 bytes, sign-extended\n", out.stderr)
    assert re.search(r"data->ret: offset \d+, 8 bytes: one load of 8 bytes\n", out.stderr)


def test_the_device_offset_is_loaded(tmp_path, workload):
    """A device whose format puts `fd` where this kernel writes `count`:
    the load reads there (4 bytes: fd is an unsigned int in an 8-byte slot)."""
    count = real_field("syscalls/sys_enter_read", "size_t count")
    fd = real_field("syscalls/sys_enter_read", "unsigned int fd")
    env = device(tmp_path / "tracefs", syscalls__sys_enter_read={"unsigned int fd": count, "size_t count": fd})
    tracer = build(tmp_path, READS.replace("data->count", "data->fd"))
    out = run(tracer, "-c", f"{workload} read 2 300", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ 300 }: 2\n"
    assert f"data->fd: offset {count[0]}, 8 bytes: one load of 4 bytes\n" in out.stderr


def test_narrower_device_fields(tmp_path, workload):
    """An unsigned field the device has narrower than the build machine:
    the low bytes, zero-extended."""
    off, _ = real_field("syscalls/sys_enter_read", "size_t count")
    tracer = build(tmp_path, READS)
    for size, value in ((4, 70000), (2, 70000 & 0xffff), (1, 70000 & 0xff)):
        env = device(tmp_path / f"tracefs{size}", syscalls__sys_enter_read={"size_t count": (off, size)})
        out = run(tracer, "-c", f"{workload} read 3 70000", env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"\n@:\n{{ {value} }}: 3\n", size
        assert f"data->count: offset {off}, {size} byte{'s' if size > 1 else ''}: one load of {size} byte" \
            in out.stderr


def test_signed_fields_are_sign_extended_from_the_device_width(tmp_path, workload):
    """`long ret` is 4 bytes on a 32-bit device: -2 stays -2 from any width."""
    off, _ = real_field("syscalls/sys_exit_openat", "long ret")
    tracer = build(tmp_path, OPENS)
    for size in (4, 2, 1):
        env = device(tmp_path / f"tracefs{size}", syscalls__sys_exit_openat={"long ret": (off, size)})
        out = run(tracer, "-c", f"{workload} open /nonexistent/plyc 3", env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "\n@:\n{ -2 }: 3\n", size
        assert "sign-extended" in out.stderr


def built_as(tmp_path: Path, decl: str) -> dict:
    """A build environment whose sys_exit_openat declares `ret` as `decl`."""
    root = tmp_path / f"built-{decl.replace(' ', '-')}"
    ev = root / "events" / "syscalls" / "sys_exit_openat"
    ev.mkdir(parents=True)
    text = (EVENTS / "syscalls" / "sys_exit_openat" / "format").read_text()
    assert "field:long ret;" in text
    (ev / "format").write_text(text.replace("field:long ret;", f"field:{decl};"))
    return dict(os.environ, PLYC_TRACEFS=str(root))


def test_the_declared_type_decides_sign_and_width(tmp_path, workload):
    """The build machine's C type of a field gives its sign and the most
    bytes read: an unsigned field is zero-extended from the device's width;
    an int in an 8-byte slot is read as 4 bytes and sign-extended."""
    off, _ = real_field("syscalls/sys_exit_openat", "long ret")
    (tmp_path / "u").mkdir()
    unsigned = build(tmp_path / "u", OPENS, env=built_as(tmp_path, "unsigned long ret"))
    for size, value in ((8, 2**64 - 2), (4, 2**32 - 2)):
        env = device(tmp_path / f"tracefs{size}", syscalls__sys_exit_openat={"long ret": (off, size)})
        out = run(unsigned, "-c", f"{workload} open /nonexistent/plyc 3", env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"\n@:\n{{ {value} }}: 3\n", size
    (tmp_path / "i").mkdir()
    narrow = build(tmp_path / "i", OPENS, env=built_as(tmp_path, "int ret"))
    out = run(narrow, "-c", f"{workload} open /nonexistent/plyc 3")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n@:\n{ -2 }: 3\n"
    assert f"data->ret: offset {off}, 8 bytes: one load of 4 bytes, sign-extended\n" in out.stderr


def test_an_unaligned_field_is_read_with_the_helper(tmp_path, workload):
    """A load must be aligned to its width: a field that isn't is read with
    bpf_probe_read_kernel, at the device's offset all the same."""
    off, _ = real_field("syscalls/sys_enter_read", "size_t count")
    env = device(tmp_path / "tracefs", syscalls__sys_enter_read={"size_t count": (off + 1, 2)})
    tracer = build(tmp_path, READS)
    out = run(tracer, "-c", f"{workload} read 3 70000", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"\n@:\n{{ {(70000 >> 8) & 0xffff} }}: 3\n"
    assert (f"data->count: offset {off + 1}, 2 bytes: read with bpf_probe_read_kernel "
            "(its offset is not a multiple of its width)") in out.stderr


def test_a_field_the_device_lacks_is_named(tmp_path):
    env = device(tmp_path / "tracefs", syscalls__sys_enter_read={"size_t count": None})
    tracer = build(tmp_path, READS)
    out = run(tracer, "-d", "1", env=env)
    assert out.returncode == 1
    assert "t.ply:1: error: tracepoint:syscalls/sys_enter_read: this kernel's tracepoint has no field 'count'" \
        in out.stderr


def test_a_load_beyond_the_event_is_refused(tmp_path):
    """A format that puts a field past the end of the kernel's record: the
    kernel refuses to attach the program (it never reads other memory)."""
    count = real_field("syscalls/sys_enter_read", "size_t count")
    env = device(tmp_path / "tracefs", syscalls__sys_enter_read={"size_t count": (count[0] + 64, 8)})
    tracer = build(tmp_path, READS)
    out = run(tracer, "-d", "1", env=env)
    assert out.returncode == 1
    assert re.search(r"t\.ply:1: error: tracepoint:syscalls/sys_enter_read: cannot attach", out.stderr), out.stderr
