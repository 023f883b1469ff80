"""Names from outside the script: a --btf file's, argdist's -I headers, the
cached grammar, bpftrace's config and probe specs never reach generated C
(or the compiler's command line) as anything but an identifier or an escaped
string (docs/safety.md)."""
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plyc import btf as B  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_build_safety import clear_error, plyc  # noqa: E402


# --- a small BTF encoder ----------------------------------------------------------

def encode_btf(types: list) -> bytes:
    """Raw BTF from types given as ("int", name, size) | ("ptr", target id) |
    ("struct", name, size, [(member name, type id, bit offset)]); ids from 1
    in order. Names go into the string table as the bytes given."""
    strings = bytearray(b"\0")

    def name(text) -> int:
        if not text:
            return 0
        off = len(strings)
        strings.extend(text if isinstance(text, bytes) else text.encode())
        strings.append(0)
        return off

    out = bytearray()
    for t in types:
        if t[0] == "int":
            out += struct.pack("<IIII", name(t[1]), B.INT << 24, t[2], (1 << 24) | t[2] * 8)
        elif t[0] == "ptr":
            out += struct.pack("<III", 0, B.PTR << 24, t[1])
        elif t[0] == "struct":
            _, sname, size, members = t
            out += struct.pack("<III", name(sname), B.STRUCT << 24 | len(members), size)
            for mname, mtype, off in members:
                out += struct.pack("<III", name(mname), mtype, off)
    header = struct.pack("<HBBIIIII", B.MAGIC, 1, 0, 24, 0, len(out), len(out), len(strings))
    return header + bytes(out) + bytes(strings)


def kernel(struct_name=b"task_struct", member=b"pid", other=b"comm", inner=b"inner"):
    """A tiny kernel: struct task_struct { int pid; int comm; struct inner in; }."""
    return encode_btf([
        ("int", b"int", 4),                                                         # 1
        ("struct", inner, 4, [(b"v", 1, 0)]),                                       # 2
        ("struct", struct_name, 12, [(member, 1, 0), (other, 1, 32), (b"in", 2, 64)]),  # 3
        ("ptr", 3),                                                                 # 4
    ])


CAST = 'kprobe:vfs_read {{ printf("%d\\n", ((struct task_struct *)curtask)->{m}); exit(); }}\n'


def test_the_encoder_makes_btf_plyc_reads(tmp_path):
    """The crafted files are real BTF: a plain one compiles the cast."""
    (tmp_path / "k.btf").write_bytes(kernel())
    b = B.load(str(tmp_path / "k.btf"))
    assert b.type_name(4) == "struct task_struct *" and [m.name for m in b[3].members] == ["pid", "comm", "in"]
    (tmp_path / "x.bt").write_text(CAST.format(m="in.v"))
    proc = plyc("emit", "--stage", "c", str(tmp_path / "x.bt"), env={"PLYC_BTF": str(tmp_path / "k.btf")})
    assert proc.returncode == 0, proc.stderr.decode()
    c = proc.stdout.decode()
    assert "struct task_struct {" in c and "struct inner {" in c


HOSTILE_NAMES = [
    ("member", dict(member=b"pid;} x; int system(const char *); struct y {int pid"), "member name"),
    ("other-member", dict(other=b"comm[1];};\n#include \"/etc/shadow\"\nstruct z{int a"), "member name"),
    ("keyword-member", dict(other=b"int"), "is a C keyword"),
    ("nested-struct", dict(inner=b"inner {int v;}; int evil; struct inner2"), "type name"),
    ("not-ascii", dict(other=b"comm\xff"), "'comm\\xff' is not a C identifier"),
]


@pytest.mark.parametrize("case, names, says", HOSTILE_NAMES, ids=[c[0] for c in HOSTILE_NAMES])
def test_a_btf_name_that_is_not_c_is_refused(tmp_path, case, names, says):
    """A crafted --btf whose names are C text is refused with a clear error
    naming --btf and the name; no C is written, no traceback."""
    btf = tmp_path / "evil.btf"
    btf.write_bytes(kernel(**names))
    script = tmp_path / "x.bt"
    script.write_text(CAST.format(m="in.v"))
    out = tmp_path / "tracer"
    proc = plyc("build", "--btf", str(btf), "-o", str(out), str(script))
    err = clear_error(proc, f"--btf {btf}: ", says)
    assert not out.exists()
    assert err.count("\n") == 3, err     # the message, the script's line, the caret: the name is escaped


def test_a_btf_name_check_covers_the_machine_btf(tmp_path, monkeypatch):
    """$PLYC_BTF (the build machine's kernel) is checked the same way, named by its path."""
    btf = tmp_path / "evil.btf"
    btf.write_bytes(kernel(member=b"a b"))
    with pytest.raises(B.BTFError, match=r"evil\.btf: member name \(of struct task_struct\) 'a b' is not a C identifier"):
        B.BTF(btf.read_bytes(), str(btf))[3]
    (tmp_path / "x.bt").write_text(CAST.format(m="comm"))
    clear_error(plyc("emit", "--stage", "c", str(tmp_path / "x.bt"), env={"PLYC_BTF": str(btf)}),
                f"{btf}: member name")


def test_the_running_kernels_btf_passes_the_check():
    """Every type of this machine's vmlinux decodes: the check refuses no real kernel."""
    b = B.BTF(B.raw_btf("/sys/kernel/btf/vmlinux"), "vmlinux")
    assert sum(1 for _ in b.types) > 1000


def test_a_btf_error_outside_a_script_position_is_one_line(monkeypatch, capsys):
    """A BTF error raised where there is no script position (code
    generation) is plyc's one-line error, not an internal error."""
    from plyc import cli, driver

    def boom(args):
        raise B.BTFError("--btf k.btf: type name 'a b' is not a C identifier: not a kernel's BTF")
    monkeypatch.setattr(driver, "lower", lambda *a, **k: boom(None))
    assert cli.main(["check", "-e", "BEGIN { exit(); }", "--lang", "bpftrace"]) == 1
    err = capsys.readouterr().err
    assert err == "plyc: error: --btf k.btf: type name 'a b' is not a C identifier: not a kernel's BTF\n"


# --- argdist's -I headers -----------------------------------------------------------

@pytest.mark.parametrize("name", ['x.h"\n#include "/etc/shadow', "x.h>\n#include </etc/shadow", "a\\\"b.h",
                                  "/tmp/a\"b.h", "a\rb.h"],
                         ids=["quote-newline", "angle-newline", "backslash", "quote-path", "carriage-return"])
def test_argdist_header_names_an_include_line_cannot_hold_are_refused(tmp_path, name):
    """The preprocessor reads a header name with no escapes: one with a
    quote, `>`, backslash or control character is refused before anything
    is built, and the name is shown escaped (one line)."""
    (tmp_path / "x.h").write_text("struct req { int id; };\n")
    proc = plyc("argdist", "-I", name, "-C", "p:c:malloc(struct req *r):int:r->id", "-o", str(tmp_path / "t"),
                cwd=tmp_path)
    err = clear_error(proc, "cannot be written in an #include line")
    assert err.count("\n") == 1, err
    assert not (tmp_path / "t").exists()


def test_argdist_header_found_through_a_directory_with_a_quote_is_refused(tmp_path):
    """-I a.h relative to a current directory whose path holds a quote:
    the absolute path the #include line would need cannot be written."""
    cwd = tmp_path / 'q"d'
    cwd.mkdir()
    (cwd / "a.h").write_text("struct req { int id; };\n")
    proc = plyc("argdist", "-I", "a.h", "-C", "p:c:malloc(struct req *r):int:r->id", "-o", str(tmp_path / "t"),
                cwd=cwd)
    clear_error(proc, "-I a.h: a header's name or path with '\"' in it cannot be written in an #include line",
                f"({cwd}/a.h)")


def test_argdist_header_in_a_plain_directory_still_works(tmp_path):
    (tmp_path / "a.h").write_text("struct req { int pad; int id; };\n")
    proc = plyc("argdist", "-I", "a.h", "-C", "p:c:malloc(struct req *r):int:r->id", "-o", str(tmp_path / "t"),
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()


# --- the cached grammar and runtime library ----------------------------------------

class _Planted:
    """A pickle that, loaded, leaves a mark: what lark would run."""

    def __init__(self, mark):
        self.mark = str(mark)

    def __reduce__(self):
        return (os.mkdir, (self.mark,))


def planted_grammar(tmp_path):
    """(env, the cached grammar's path, a planted file lark would load, the
    mark its unpickling leaves) in a fresh cache: the planted file keeps
    the real one's first line (the grammar's hash) and then unpickles _Planted."""
    import pickle
    cache = tmp_path / "cache"
    env = dict(PLYC_CACHE=str(cache))
    assert plyc("check", "-e", "BEGIN { exit(); }", env=env).returncode == 0
    [grammar] = cache.glob("ply-grammar-*.lark")
    first_line = grammar.read_bytes().split(b"\n", 1)[0]
    mark = tmp_path / "unpickled"
    return env, grammar, first_line + b"\n" + pickle.dumps(_Planted(mark)) * 2, mark


@pytest.mark.parametrize("plant", ["group-writable", "foreign-owner", "symlink"])
def test_a_grammar_file_others_could_write_is_not_unpickled(tmp_path, plant):
    """The ply grammar's cached parser is unpickled only from a regular file
    of our own that no one else may write; otherwise it is built afresh and
    replaced by a file of our own."""
    env, grammar, evil, mark = planted_grammar(tmp_path)
    grammar.unlink()
    if plant == "symlink":
        (tmp_path / "elsewhere.lark").write_bytes(evil)
        grammar.symlink_to(tmp_path / "elsewhere.lark")
    else:
        grammar.write_bytes(evil)
        os.chmod(grammar, 0o666 if plant == "group-writable" else 0o644)
        if plant == "foreign-owner":
            os.chown(grammar, 54321, 54321)
    proc = plyc("check", "-e", "BEGIN { exit(); }", env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    assert not mark.exists(), "the planted pickle ran"
    st = os.lstat(grammar)
    assert stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o644
    assert grammar.read_bytes() != evil
    # and the fresh file is used the next time (no rebuild: same inode)
    assert plyc("check", "-e", "BEGIN { exit(); }", env=env).returncode == 0
    assert os.lstat(grammar).st_ino == st.st_ino


def test_a_grammar_file_of_our_own_is_unpickled(tmp_path):
    """The check is what stops it: the same planted file, private, is loaded
    (so the test above would fail without the check)."""
    env, grammar, evil, mark = planted_grammar(tmp_path)
    grammar.write_bytes(evil)
    os.chmod(grammar, 0o600)
    plyc("check", "-e", "BEGIN { exit(); }", env=env)
    assert mark.exists()


def test_a_runtime_library_others_could_write_is_not_linked(tmp_path):
    """libplycrt.a in the cache, made group-writable: the build stops with
    plyc's error instead of linking it into the tracer."""
    cache = tmp_path / "cache"
    env = dict(PLYC_CACHE=str(cache), PLYC_LIBC="glibc")
    (tmp_path / "x.bt").write_text('BEGIN { printf("hi\\n"); exit(); }\n')
    proc = plyc("build", "-o", str(tmp_path / "t1"), str(tmp_path / "x.bt"), env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    [lib] = cache.glob("rt-*/libplycrt.a")
    assert stat.S_IMODE(os.stat(lib).st_mode) == 0o644 and stat.S_IMODE(os.stat(lib.parent).st_mode) == 0o755
    os.chmod(lib, 0o664)
    clear_error(plyc("build", "-o", str(tmp_path / "t2"), str(tmp_path / "x.bt"), env=env),
                f"plyc's runtime library {lib} is writable by others than its owner (mode 664): not used")
    assert not (tmp_path / "t2").exists()


def test_the_runtime_library_is_private_whatever_the_umask(tmp_path):
    cache = tmp_path / "cache"
    (tmp_path / "x.bt").write_text('BEGIN { printf("hi\\n"); exit(); }\n')
    cmd = f"umask 0; exec {sys.executable} -m plyc build -o {tmp_path}/t {tmp_path}/x.bt"
    proc = subprocess.run(["sh", "-c", cmd], capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT),
                          PLYC_CACHE=str(cache)))
    assert proc.returncode == 0, proc.stderr.decode()
    proc = subprocess.run(["sh", "-c", cmd.replace("/t ", "/t2 ")], capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), PLYC_CACHE=str(cache)))
    assert proc.returncode == 0, proc.stderr.decode()
    for f in cache.glob("rt-*/*"):
        assert not os.stat(f).st_mode & 0o022, f


# --- probe specs with hostile names ----------------------------------------------

@pytest.fixture
def odd_program(tmp_path):
    """A program at a path holding a quote and a comment's end: a"b*/x/prog."""
    d = tmp_path / 'a"b*' / "x"
    d.mkdir(parents=True)
    prog = d / "prog"
    prog.write_bytes(Path("/usr/bin/true").read_bytes())
    prog.chmod(0o755)
    return prog


def c_quoted(path) -> str:
    """path inside a bpftrace string: `"` escaped."""
    return str(path).replace('"', '\\"')


@pytest.mark.parametrize("spec, in_c", [
    ('uprobe:"{p}":main', '.path = "{c}",'),
    ('uretprobe:"{p}":"*"', '.path = "{c}",'),
    ('usdt:"{p}":"p\\"r":"x*/y"', '.provider = "p\\"r",'),
], ids=["uprobe-path", "uprobe-glob", "usdt-names"])
def test_hostile_paths_and_probe_names_reach_c_as_strings(tmp_path, odd_program, spec, in_c):
    """A path or USDT name with a quote, `*/` and a glob builds, and the C
    holds it as an escaped string (and in comments with `*/` broken)."""
    script = tmp_path / "s.bt"
    script.write_text(spec.format(p=c_quoted(odd_program)) + " { @ = count(); }\n")
    out = tmp_path / "t"
    proc = plyc("build", "-o", str(out), str(script))
    assert proc.returncode == 0, proc.stderr.decode()
    c = plyc("emit", "--stage", "c", str(script)).stdout.decode()
    assert in_c.format(c=c_quoted(odd_program)) in c
    for line in c.splitlines():
        if line.lstrip().startswith("/*") and line.rstrip().endswith("*/"):
            assert "*/" not in line.strip()[2:-2], line


@pytest.mark.parametrize("spec, says", [
    ('tracepoint:"sch\\"ed":"sw*/"', "tracepoint 'sch\"ed:sw*/' is not group/event"),
    ('kprobe:"vfs_read\\"x"', "'vfs_read\"x' is not a kernel symbol"),
    ('kfunc:"vfs_r*\\"/x"', "'vfs_r*\"/x' is not a kernel function"),
    ('rawtracepoint:"sch\\"ed"', "'sch\"ed' is not a raw tracepoint name"),
    ('uretprobe:"/bin/true":"ma\\"in"', "'ma\"in' is not a symbol"),
], ids=["tracepoint", "kprobe", "kfunc", "rawtracepoint", "uprobe-symbol"])
def test_names_that_must_be_identifiers_are_refused_at_the_spec(tmp_path, spec, says):
    """Kernel and symbol names go into C and the kernel as names: odd
    characters are a located error at the probe, not C."""
    script = tmp_path / "s.bt"
    script.write_text(spec + " { @ = count(); }\n")
    err = clear_error(plyc("build", "-o", str(tmp_path / "t"), str(script)), f"{script}:1:1: error: ", says)
    assert "^" in err


def test_argdist_library_path_with_a_comment_end_builds(tmp_path):
    d = tmp_path / "sp*" / "x"
    d.mkdir(parents=True)
    (d / "prog").write_bytes(Path("/usr/bin/true").read_bytes())
    (d / "prog").chmod(0o755)
    proc = plyc("argdist", "-C", f"p:{d}/prog:main():u64:$PID#a\"b*/c", "-o", str(tmp_path / "t"))
    assert proc.returncode == 0, proc.stderr.decode()
