"""bpftrace's cat(), system(), signal(), override(), buf() and path()
(plyc/frontends/bpftrace/events.py): their IR and their errors. Their
output is checked on this kernel by tests/runtime/bt-cat-buf.test,
bt-system.test, bt-signal.test and bt-events-json.test (compared with
bpftrace 0.17)."""

import pytest

from plyc.diag import PlycError
from plyc.ir.dump import dump


from btlower import err, lower


def test_unsafe_functions_need_the_build_flag():
    src = 'tracepoint:syscalls:sys_enter_kill { system("id"); signal(9); }'
    assert err(src) == (
        "tool.bt:1:38: error: system() is an unsafe function being used in safe mode\n"
        f"{src}\n" + " " * 37 + "^" + "~" * 11 + "\n"
        "note: build the tracer with `plyc build --unsafe` to allow it\n"
        "tool.bt:1:52: error: signal() is an unsafe function being used in safe mode\n"
        f"{src}\n" + " " * 51 + "^" + "~" * 8 + "\n"
        "note: build the tracer with `plyc build --unsafe` to allow it")
    assert "event 1 system" in dump(lower(src, unsafe=True))
    assert "signal_thread() is an unsafe function being used in safe mode" in \
        err('tracepoint:syscalls:sys_enter_kill { signal_thread(9); }')


def test_cat_and_system_are_formatted_events():
    prog = lower('BEGIN { cat("/proc/%d/maps", pid); system("echo %s", comm); }', unsafe=True)
    events = [line for line in dump(prog).splitlines() if line.startswith("event")]
    assert events[0].startswith("event 1 cat (u32)")
    assert events[1].startswith("event 2 system (char[16])")


def test_buf_is_a_sized_buffer():
    prog = lower('BEGIN { $n = 3; @a = buf("abc", 2); @b = buf("abc", $n); @c = buf("abc", 100); }')
    types = {m.name: str(m.value_type) for m in prog.maps.values()}
    # a constant length is the capacity; a run-time one, the string size
    # (max_strlen: 1024, 0.27's), which bounds a constant too
    assert types == {"@a": "buffer[2]", "@b": "buffer[1024]", "@c": "buffer[100]"}
    prog = lower('config = { max_strlen = 64 }\nBEGIN { $n = 3; @b = buf("abc", $n); @c = buf("abc", 100); }')
    assert {m.name: str(m.value_type) for m in prog.maps.values()} == {"@b": "buffer[64]", "@c": "buffer[64]"}


@pytest.mark.parametrize("src,message", [
    ('BEGIN { printf("%r", comm); }', "'%r' can't print a value of type char[16]"),
    ('BEGIN { printf("%5r", buf("a", 1)); }', "'%r' takes no flags, width, precision or length"),
    ('BEGIN { $x = buf(1); }', "buf() of a pointer needs a length: buf(p, n)"),
    ('BEGIN { cat(comm); }', "cat()'s first argument must be a format string literal"),
    ('BEGIN { cat("%d"); }', "the format has 1 conversion but 0 arguments follow"),
    ('tracepoint:syscalls:sys_enter_kill { signal("FOO"); }', "FOO is not a valid signal"),
    ('tracepoint:syscalls:sys_enter_kill { signal(99); }', "99 is not a valid signal, allowed range: [1,64]"),
    ('BEGIN { signal(9); }', 'signal can not be used with "BEGIN" probes'),
    ('END { signal_thread(9); }', 'signal_thread can not be used with "END" probes'),
    ('tracepoint:syscalls:sys_enter_kill { signal_thread("FOO"); }', "FOO is not a valid signal"),
    ('tracepoint:syscalls:sys_enter_kill { override(1); }', "override can only be used with kprobes."),
    ('kprobe:vfs_* { override(1); }', "override() can't be used in a kprobe wildcard"),
    ('tracepoint:syscalls:sys_enter_openat { print(path(args->filename)); }',
     "path() takes a probe argument that is a struct path * (argN, or a cast of one)"),
    ('kprobe:vfs_* { print(path(arg0)); }', "path() can only be used in an exact-name kprobe or kretprobe"),
])
def test_errors(src, message):
    assert message in err(src, unsafe=True)


def test_override_keeps_the_kprobe_and_path_needs_fentry():
    prog = lower("kprobe:vfs_read { override(1); }", unsafe=True)
    assert prog.probes[0].uses_regs
    try:
        prog = lower("kprobe:vfs_getattr { print(path(arg0)); }")
    except PlycError as e:      # a build kernel whose BTF lacks the function
        assert "needs vfs_getattr to run as fentry/fexit" in e.render()
        return
    assert prog.probes[0].needs_fentry == "path()"


# --- write_user(dst, src, n) -------------------------------------------------------
# Its run (the workload printing the bytes a uprobe wrote) is
# tests/vm/cases/bt-write-user.test: this machine's kernel is locked down,
# which takes bpf_probe_write_user away from every program.

WU = "uprobe:/bin/sh:main { "


def test_write_user_needs_the_build_flag():
    src = WU + '$s = "HEL"; write_user(arg0, $s, 3); }'
    assert err(src) == (
        "tool.bt:1:35: error: write_user() is an unsafe function being used in safe mode\n"
        f"{src}\n" + " " * 34 + "^" + "~" * 22 + "\n"
        "note: build the tracer with `plyc build --unsafe` to allow it")


def test_write_user_is_a_bool_call():
    prog = lower(WU + '$s = "HEL"; @ok = write_user(arg0, $s, arg1); write_user(arg0, "LO", 2); }', unsafe=True)
    text = dump(prog)
    assert text.count("write_user(") == 2
    assert prog.maps["@ok"].value_type.denotes == "bool"


@pytest.mark.parametrize("src,at,message", [
    ('$s = "HEL"; write_user("x", $s, 3); }', 46,
     "write_user()'s destination is a user-space address (an integer or pointer), got char[8]"),
    ('write_user(arg0, arg1, 3); }', 40,
     "write_user() writes a string or array the program holds, got u64"),
    ('$s = "HEL"; write_user(arg0, $s, "3"); }', 56,
     "write_user()'s length must be an integer, got char[8]"),
    ('$s = "HEL"; write_user(arg0, $s, 0); }', 56,
     "write_user()'s length 0 is not within its source's 8 bytes (1 to 8)"),
    # "HEL" is held in 8 bytes, NULs after it: 8 is within, 9 past
    ('$s = "HEL"; write_user(arg0, $s, 9); }', 56,
     "write_user()'s length 9 is not within its source's 8 bytes (1 to 8)"),
])
def test_write_user_errors_are_located(src, at, message):
    text = err(WU + src, unsafe=True)
    assert text.startswith(f"tool.bt:1:{at}: error: {message}\n"), text


def test_write_user_not_in_begin():
    assert 'write_user can not be used with "BEGIN" probes' in \
        err('BEGIN { $s = "a"; write_user(0, $s, 1); }', unsafe=True)
