"""plyc argdist: specifier parsing (argdist's errors, shown under the
specifier), lowering to the IR (names, constants, user-space types; asserted
on its `plyc emit --stage ir` text), typing errors shown under the specifier,
and builds of argdist's examples.
bcc's documented command lines are in tests/test_argdist_corpus.py."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plyc.commands.argdist import parse_args
from plyc.frontends.argdist import lower_args, render_spec_error
from plyc.ir.dump import dump
from plyc.frontends.argdist.ctypes import CType, Headers, evaluate
from plyc.arch import TARGETS
from plyc.layout import abi
from plyc.frontends.argdist.cparse import parse_expr
from plyc.frontends.argdist.spec import SpecError, parse

ROOT = Path(__file__).resolve().parent.parent


def lower(*argv):
    """The IR the command line lowers to, as `plyc emit --stage ir` prints it."""
    return dump(lower_args(parse_args([*argv, "-o", "x"]))[0].program)


PIDFILTER = "((param.pid_filter:u32 == 0:s64):s32 || (nspid:u32 == param.pid_filter:u32):s32):s32"


def refusal(*argv) -> str:
    """How plyc argdist refuses a command line, as printed."""
    with pytest.raises(SpecError) as err:
        lower(*argv)
    return render_spec_error(err.value)


def cli(*argv, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "plyc", "argdist", *argv], capture_output=True, text=True,
                          cwd=cwd, timeout=180)


# --- argdist's reasons, under the specifier -------------------------------------------

@pytest.mark.parametrize("spec,message,caret", [
    ("p:c", "at least the probe type, library, and function signature must be specified", "^~~"),
    ("p:c:f():a:b:c:d", "extraneous ':'-separated parts detected", "             ^~"),
    ("x:c:malloc()", "probe type must be 'p', 'r', 't', or 'u' but got 'x'", "^"),
    ("p:c:malloc", "function signature 'malloc' has an invalid format", "    ^~~~~~"),
    ("p:c:malloc(size_t size)::size", "no expr types specified", "                       ^"),
    ("p:c:malloc(size_t size):u64:", "no exprs specified", "                           ^"),
    ("p:c:malloc(size_t size):u64,u64:size", "mismatched # of exprs and types (1 exprs, 2 types)",
     "                        ^~~~~~~~~~~~"),
    ("p:c:malloc(size)", "parameter 'size' must be written 'type name'", "           ^~~~"),
    ("t::sched_switch()", "a tracepoint needs its category: t:category:event", " ^~~~~~~~~~~~~~~~"),
    ("p:c:write():int:$PID;write per process", "';' is not argdist's label separator: a label comes after '#'",
     "                    ^"),
])
def test_specifier_errors(spec, message, caret):
    with pytest.raises(SpecError) as err:
        parse(spec, "freq")
    assert err.value.message == message
    text = render_spec_error(err.value).splitlines()
    assert text[1:3] == [spec, caret]


def test_histogram_specific_errors():
    with pytest.raises(SpecError, match="histograms can only have 1 expr"):
        parse("p:c:malloc(size_t size):u64,u64:size,size", "hist")
    with pytest.raises(SpecError, match="histograms must have expr"):
        parse("p:c:malloc(size_t size)", "hist")


@pytest.mark.parametrize("spec,rendered", [
    ("p:c:malloc(size_t size):u64:$entry(size)", """\
plyc argdist: -C #1:29: error: $entry() and $latency are only available in return probes (r)
p:c:malloc(size_t size):u64:$entry(size)
                            ^~~~~~~~~~~~"""),
    ("r:c:malloc(size_t size):u64:$entry(nope)", """\
plyc argdist: -C #1:36: error: $entry(nope): no such param
r:c:malloc(size_t size):u64:$entry(nope)
                                   ^~~~
note: the parameters are the signature's: r:lib:func(type name, ...)"""),
    ("p:c:malloc(size_t size):u64:$retval", """\
plyc argdist: -C #1:29: error: $retval is only available in return probes (r)
p:c:malloc(size_t size):u64:$retval
                            ^~~~~~~"""),
    ("r:c:malloc(size_t size):u64:size", """\
plyc argdist: -C #1:29: error: 'size' is a parameter: in a return probe, read it with $entry(size)
r:c:malloc(size_t size):u64:size
                            ^~~~"""),
    ("p:c:malloc(size_t size):u64:$FOO", """\
plyc argdist: -C #1:29: error: unknown alias '$FOO' (known: $retval, $entry(param), $latency, $PID, $TID, \
$UID, $GID, $CPU, $COMM)
p:c:malloc(size_t size):u64:$FOO
                            ^~~~"""),
    ("p:c:malloc(size_t size):u64:size:size > 10 && foo(size)", """\
plyc argdist: -C #1:47: error: unknown function 'foo'
p:c:malloc(size_t size):u64:size:size > 10 && foo(size)
                                              ^~~
note: argdist's expressions may call $entry(param) and STRCMP("literal", expr)"""),
    ("p:c:malloc(size_t size):u64:size:size = 16", """\
plyc argdist: -C #1:34: error: an assignment is not supported in argdist expressions
p:c:malloc(size_t size):u64:size:size = 16
                                 ^~~~~~~~~"""),
    ("u:pthread:pthread_start():u64:arg0", """\
plyc argdist: -C #1:31: error: USDT arguments are arg1 to arg10 (argdist counts from 1), not arg0
u:pthread:pthread_start():u64:arg0
                              ^~~~"""),
    ("p:c:nanosleep(struct timespec *req):long:req->tv_nsecs", """\
plyc argdist: -C #1:47: error: struct timespec has no member 'tv_nsecs'
p:c:nanosleep(struct timespec *req):long:req->tv_nsecs
                                              ^~~~~~~~
note: its members are: tv_sec, tv_nsec"""),
    ("t:irq:irq_handler_entry():int:irqq", """\
plyc argdist: -C #1:31: error: 'irqq' is not a field of irq:irq_handler_entry nor a constant plyc can find
t:irq:irq_handler_entry():int:irqq
                              ^~~~
note: its fields are: irq, name"""),
    ("p:c:malloc(size_t size):u64:(blah_t)size", """\
plyc argdist: -C #1:30: error: unknown type 'blah_t'
p:c:malloc(size_t size):u64:(blah_t)size
                             ^~~~~~"""),
])
def test_expression_errors_point_into_the_specifier(spec, rendered):
    assert refusal("-C", spec) == rendered


def test_errors_name_the_option_and_specifier():
    text = refusal("-C", "p:c:malloc(size_t size):size_t:size", "-H", "p:c:free(void *p):u64:p",
                   "p:c:free(void *p):u64:$COMM")
    assert text.splitlines() == [
        "plyc argdist: -H #2:19: error: $COMM is a string: its type must be char*",
        "p:c:free(void *p):u64:$COMM",
        "                  ^~~"]


def test_every_specifier_refused_is_said():
    text = refusal("-C", "p:c", "-H", "p:c:malloc(size_t size):u64:size", "x:c:f()")
    assert [ln for ln in text.splitlines() if ln.startswith("plyc")] == [
        "plyc argdist: -C #1:1: error: at least the probe type, library, and function signature must be specified",
        "plyc argdist: -H #2:1: error: probe type must be 'p', 'r', 't', or 'u' but got 'x'"]


def test_string_of_comm_must_be_typed_char_pointer():
    assert refusal("-C", "r::__vfs_read():u32:$COMM:$latency > 100000") == """\
plyc argdist: -C #1:17: error: $COMM is a string: its type must be char*
r::__vfs_read():u32:$COMM:$latency > 100000
                ^~~"""


def test_typing_errors_are_shown_under_the_specifier(tmp_path):
    """A field or member that doesn't exist: the error points at the part of
    the specifier that names it."""
    proc = cli("-C", "t:irq:irq_handler_entry():int:args->irqq", "-o", str(tmp_path / "t"))
    assert proc.returncode == 1
    assert proc.stderr == """\
plyc argdist: -C #1:37: error: tracepoint irq:irq_handler_entry has no field 'irqq'
t:irq:irq_handler_entry():int:args->irqq
                                    ^~~~
note: its fields are: irq, name
"""
    proc = cli("-C", "p::vfs_read(struct file *file):u32:file->f_nope", "-o", str(tmp_path / "t"))
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[:3] == [
        "plyc argdist: -C #1:42: error: struct file has no member 'f_nope'",
        "p::vfs_read(struct file *file):u32:file->f_nope",
        "                                         ^~~~~~"]
    assert "argdist.ply" not in proc.stderr


def test_unrecognized_arguments_as_argdist(tmp_path):
    proc = cli("-i", "10", "-c", "1", "-H", "r:c:read()", "-o", str(tmp_path / "t"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == "plyc argdist: error: unrecognized arguments: 1"


# --- lowering -----------------------------------------------------------------------

def test_label_and_defaults():
    s = parse("p::vfs_read()#reads", "freq")
    assert (s.label, s.default_expr, [t.text for t in s.types], [e.text for e in s.exprs]) == \
        ("reads", True, ["u64"], ["1"])
    r = parse("r:c:malloc()", "freq")
    assert ([t.text for t in r.types], [e.text for e in r.exprs]) == (["int"], ["$retval"])


def test_lowering_of_entry_values_and_filters():
    text = lower("-H", "r::__kmalloc(size_t size):u64:$latency/$entry(size):$entry(size) > 16#ns per byte")
    assert text == f"""\
map e0_size hash [u32] -> u64 names=['kpid']
map e0__lat hash [u32] -> s64 (time) names=['kpid']
map e0__seen hash [u32] -> s64 names=['kpid']
map @s0 aggregation [] -> log2(u64)
program strsize=80 arch=x86_64 report
probe 0 kprobe:__kmalloc -> kprobe __kmalloc line 1 reads=arg0
  e0_size[kpid:u32] = arg0:u64  @1
  e0__lat[kpid:u32] = time:s64 (time)  @1
  e0__seen[kpid:u32] = 1:s64  @1
probe 1 kretprobe:__kmalloc -> kretprobe __kmalloc line 1
  if e0__seen[kpid:u32]:s64  @1
    if ({PIDFILTER} && (cast(e0_size[kpid:u32]:u64):u64 > 16:s64):s32):s32  @1
      @s0[] <- log2(cast(((time:s64 (time) - e0__lat[kpid:u32]:s64 (time)):s64 (time) / \
cast(e0_size[kpid:u32]:u64):u64):s64 (time)):u64)  @1
    delete e0_size[kpid:u32]  @1
    delete e0__lat[kpid:u32]  @1
    delete e0__seen[kpid:u32]  @1
"""


def test_lowering_of_struct_params_strings_and_aliases():
    text = lower("-C", "p::vfs_read(struct file *file, char __user *buf):char*,char*:"
                 "file->f_path.dentry->d_name.name,buf:$PID != 1 && STRCMP(\"bash\", $COMM)", "-t", "42")
    assert "@s0[str(cast(arg0:struct file *):struct file *->f_path:struct.dentry:struct dentry *->d_name:struct" \
        ".name:char *):char[80], str(uptr(cast(arg1:char *):char *):char *):char[80]] <- count()" in text
    assert f"if (({PIDFILTER} && (nstid:u32 == 42:s64):s32):s32 && ((pid:u32 != 1:s64):s32 && " \
        "(strcmp(\"bash\":char[8], str(comm:char[16]):char[80]):s32 == 0:s64):s32):s32):s32" in text


def test_tracepoint_fields_bare_or_through_args():
    bare = lower("-H", "t:syscalls:sys_enter_read():u64:count:count > 10 && fd == 0")
    assert f"if ({PIDFILTER} && ((field.count:u64 > 10:s64):s32 && (field.fd:u32 == 0:s64):s32):s32):s32" in bare
    assert "@s0[] <- log2(cast(field.count:u64):u64)" in bare
    assert lower("-H", "t:syscalls:sys_enter_read():u64:args->count:args->count > 10 && args->fd == 0") == bare


def test_usdt_arguments_count_from_one():
    assert "@s0[cast(arg1:u64):u64] <- count()" in lower("-C", "u:pthread:pthread_start():u64:arg2")


def test_kernel_constants_from_btf():
    """Enumerators of the kernel's BTF."""
    from plyc import btf
    b = btf.load(None)
    text = lower("-C", "t:syscalls:sys_enter_read():u64:count:count == TASK_COMM_LEN")
    assert f"(field.count:u64 == {b.enumerator('TASK_COMM_LEN')[0]}:s64)" in text


def test_gfp_flags_from_btf(lab_kernel):
    """GFP flags from the kernel's ___GFP_*_BIT enumerators (from 6.10): this
    machine's, else those of the lab's 6.12 (tests/vm/lab.py)."""
    from plyc import btf
    b, option = btf.load(None), []
    if b.enumerator("___GFP_HIGH_BIT") is None:
        path = str(lab_kernel("x86_64", "6.12").vmlinux)
        b, option = btf.load(path), ["--btf", path]
    atomic = (1 << b.enumerator("___GFP_HIGH_BIT")[0]) | (1 << b.enumerator("___GFP_KSWAPD_RECLAIM_BIT")[0])
    text = lower(*option, "-C", "p::__kmalloc(size_t size, gfp_t flags):size_t:size:flags&GFP_ATOMIC")
    assert f"(cast(arg1:u64):u32 & {atomic}:s64):u64" in text


def test_uapi_constants_from_an_include_header():
    text = lower("-I", "linux/fcntl.h", "-C", "t:syscalls:sys_enter_openat():int:flags:"
                 "(flags & O_ACCMODE) == O_RDONLY")
    assert "((field.flags:s32 & 3:s64):s64 == 0:s64):s32" in text
    msg = refusal("-C", "t:syscalls:sys_enter_openat():int:flags:flags & O_ACCMODE")
    assert msg.splitlines()[-1].startswith("note: it is defined in the kernel's UAPI header ")


def test_kernel_macros_from_kernel_headers(tmp_path):
    """With kernel headers (--kernel-headers), -I headers and argdist's own
    automatic ones (linux/slab.h for a specifier that says 'alloc') give
    macros, which win over what BTF has."""
    tree = tmp_path / "linux"
    (tree / "include" / "linux").mkdir(parents=True)
    (tree / "arch" / "x86" / "include").mkdir(parents=True)
    (tree / "include" / "linux" / "kconfig.h").write_text("#define __PLYC_KCONFIG 1\n")
    (tree / "include" / "linux" / "gfp_test.h").write_text(textwrap.dedent("""\
        #ifndef __KERNEL__
        #error kernel headers are read as the kernel reads them
        #endif
        #define BIT(n) (1UL << (n))
        #define __force
        typedef unsigned int gfp_t;
        #define ___GFP_TEST BIT(7)
        #define GFP_TEST ((__force gfp_t)___GFP_TEST | 0x1)
        """))
    (tree / "include" / "linux" / "slab.h").write_text("#define GFP_ATOMIC 0x999\n")
    text = lower("--kernel-headers", str(tree), "-I", "linux/gfp_test.h", "-C",
                 "p::__kmalloc(size_t size, gfp_t flags):size_t:size:(flags & GFP_TEST) && (flags & GFP_ATOMIC)")
    assert "((cast(arg1:u64):u32 & 129:s64):u64 && (cast(arg1:u64):u32 & 2457:s64):u64)" in text


def test_user_constants_from_the_c_library():
    text = lower("-C", "p:c:open(char *path, int flags):int:flags:flags & O_CREAT && flags != AF_INET")
    assert "probe 0 uprobe:c:open -> uprobe open line 1 reads=arg1\n" \
        "  if ((cast(arg1:u64):s32 & 64:s64):s64 && (cast(arg1:u64):s32 != 2:s64):s32):s32  @1\n" \
        "    @s0[cast(arg1:u64):s32] <- count()  @1\n" in text


def test_user_struct_members_are_user_memory_reads():
    text = lower("-H", "p:c:nanosleep(struct timespec *req):long:req->tv_nsec")
    assert "@s0[] <- log2(cast(uread64s((arg0:u64 + 8:s64):u64):s64):s64)" in text
    # A member of a member, an array element, a pointer followed.
    text = lower("-C", "p:c:fwrite(const void *p, size_t n, size_t m, FILE *f):int,char*,s8:"
                 "f->_fileno,f->_IO_read_ptr,f->_shortbuf[0]")
    assert "@s0[cast(uread32s((arg3:u64 + 112:s64):u64):s32):s32, str(uptr(uread64u((arg3:u64 + 8:s64):u64):u64)" \
        ":void *):char[80], cast(uread8s((arg3:u64 + 131:s64):u64):s8):s8] <- count()" in text


def test_user_struct_layouts_follow_the_target():
    """struct timespec on armhf: 32-bit time_t and long."""
    text = lower("--target", "armhf", "-H", "p:c:nanosleep(struct timespec *req):long:req->tv_nsec")
    assert "@s0[] <- log2(cast(uread32s((arg0:u64 + 4:s64):u64):s32):s32)" in text


def test_user_types_from_an_include_header(tmp_path):
    hdr = tmp_path / "app.h"
    hdr.write_text("#include <stdint.h>\nstruct req { char tag; uint64_t id; char name[12]; };\n#define REQ_MAGIC (3 << 4)\n")
    text = lower("-I", str(hdr), "-C",
                 "p:/usr/bin/app:handle(struct req *r):u64,char*:r->id,r->name:r->tag == REQ_MAGIC")
    assert "probe 0 uprobe:/usr/bin/app:handle -> uprobe handle line 1 reads=arg0\n" \
        "  if (uread8s(arg0:u64):s8 == 48:s64):s32  @1\n" \
        "    @s0[cast(uread64u((arg0:u64 + 8:s64):u64):u64):u64, str(uptr((arg0:u64 + 16:s64):u64):void *)" \
        ":char[12]] <- count()  @1\n" in text


SIZES_C = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <dirent.h>
#include <time.h>
#define T(t) printf("T|%s|%zu|%zu\n", #t, sizeof(t), _Alignof(t));
#define M(t, m) printf("M|%s|%s|%zu\n", #t, #m, offsetof(t, m));
int main(void)
{
    T(struct timespec) T(struct epoll_event) T(struct stat) T(FILE) T(struct sigaction)
    T(pthread_attr_t) T(struct sockaddr_in6) T(struct dirent) T(struct tm)
    M(struct epoll_event, data) M(struct stat, st_size) M(FILE, _fileno) M(struct sigaction, sa_flags)
    M(struct sockaddr_in6, sin6_scope_id) M(struct dirent, d_name) M(struct tm, tm_zone)
    return 0;
}
"""


def test_layouts_match_the_c_compiler(tmp_path):
    """Struct sizes, alignments and offsets plyc computes from pycparser's
    parse are those gcc computes (packed epoll_event, FILE, sigaction)."""
    src = tmp_path / "sizes.c"
    src.write_text(SIZES_C)
    subprocess.run(["gcc", "-o", str(tmp_path / "sizes"), str(src)], check=True)
    want = subprocess.run([str(tmp_path / "sizes")], capture_output=True, text=True, check=True).stdout
    from plyc.frontends.argdist.lower import Context
    dom = Context("x86_64").user()
    got = []
    for line in want.splitlines():
        kind, name, *rest = line.split("|")
        lay = dom.layout(CType("record", key=name) if " " in name else dom.named(name))
        if kind == "T":
            got.append(f"T|{name}|{lay.size}|{lay.align}")
        else:
            got.append(f"M|{name}|{rest[0]}|{lay.find(rest[0], dom.headers)[0]}")
    assert "\n".join(got) + "\n" == want


@pytest.mark.parametrize("target", TARGETS)
def test_header_layouts_are_the_compilers(target):
    """The headers' records, attributes and all, as the target's compiler
    lays them out: test_layout.py's tricky structs, whose layouts it checks
    against clang and gcc, read through argdist's own header parsing."""
    from test_layout import TRICKY, tricky
    h = Headers(abi(target), TRICKY)
    for rec in tricky(abi(target)):
        lay = h.layout(CType("record", key=rec.tag))
        assert (lay.size, lay.align) == (rec.layout.size, rec.layout.align), rec.definition
        named = [(m.name, off) for m, off in zip(rec.members, rec.layout.offsets) if m.name]
        assert [(n, lay.find(n, h)[0]) for n, _ in named] == named, rec.definition


@pytest.mark.parametrize("expr,value", [
    ("(1 << 5) | 0x800", 2080), ("~0U", 0xFFFFFFFF), ("-1", -1), ("(unsigned char)300", 44),
    ("1 ? 2 : 3", 2), ("'A' + 1", 66), ("010", 8), ("sizeof(long) * 2", 16), ("7 / -2", -3),
])
def test_constant_expressions(expr, value):
    h = Headers(abi("x86_64"))
    p = parse_expr(expr, set())
    assert evaluate(p.node, h.abi, lambda n: None, lambda t: h.complete(h.resolve(t))) == value


# --- builds -------------------------------------------------------------------------

ARGDIST_EXAMPLES = [
    ["-C", "p:c:malloc(size_t size):size_t:size", "-C", "r:c:malloc()", "-z", "32", "-c"],
    ["-C", "p:c:nanosleep(struct timespec *req):s64,u64:req->tv_sec,req->tv_nsec"],
    ["-C", "t:syscalls:sys_enter_openat():char*:filename:flags & O_CREAT", "-I", "linux/fcntl.h"],
]


@pytest.mark.parametrize("argv", ARGDIST_EXAMPLES, ids=[" ".join(a)[:40] for a in ARGDIST_EXAMPLES])
def test_argdist_examples_build(argv, tmp_path):
    out = tmp_path / "t"
    proc = cli(*argv, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_cli_error_is_argdist_quality(tmp_path):
    proc = cli("-C", "p:c:malloc", "-o", str(tmp_path / "t"))
    assert proc.returncode == 1
    assert proc.stderr == ("plyc argdist: -C #1:5: error: function signature 'malloc' has an invalid format\n"
                           "p:c:malloc\n"
                           "    ^~~~~~\n")


def test_missing_include_header_is_a_warning_when_unused(tmp_path):
    proc = cli("-I", "kernel/sched/sched.h", "-C", "p::__account_cfs_rq_runtime(struct cfs_rq *cfs_rq):s64:"
               "cfs_rq->runtime_remaining", "-o", str(tmp_path / "t"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("plyc argdist: warning: -I kernel/sched/sched.h: no such header (nothing in the "
                           "specifiers needed it: kernel types come from BTF)\n")


@pytest.mark.bpf
def test_versioned_libc_function_latency(tmp_path, workload):
    """glibc exports clock_nanosleep twice (@GLIBC_2.2.5 and the default
    @@GLIBC_2.17): argdist's return probe on it builds, attaches to the
    default version and sees every call."""
    out = tmp_path / "t"
    spec = 'r:c:clock_nanosleep():u64:$latency>0:STRCMP("plyc-work", $COMM)#sleeps'
    proc = subprocess.run([sys.executable, "-m", "plyc", "argdist", "-C", spec, "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(out), "-c", f"{workload} waits 4"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert run.stdout.split("\n")[1:] == ["sleeps", "\tCOUNT      EVENT", "\t4          $latency>0 = 1", ""]


@pytest.mark.bpf
def test_device_errors_name_the_specifier(tmp_path):
    """The tracer's own messages about a probe name the -C/-H it came from,
    as typed, never a line of the script it was lowered to."""
    out = tmp_path / "t"
    proc = cli("-C", "p:c:no_such_function_x()", "-H", "p:c:malloc(size_t size):size_t:size", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    listing = subprocess.run([str(out), "-h"], capture_output=True, text=True).stdout
    assert "  -C #1: p:c:no_such_function_x()\n  -H #1: p:c:malloc(size_t size):size_t:size\n" in listing
    run = subprocess.run([str(out), "-d", "1"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert run.stderr.startswith("-C #1: error: p:c:no_such_function_x(): no function no_such_function_x in ")
    assert "argdist.ply" not in run.stderr


@pytest.mark.bpf
def test_json_report(tmp_path, workload):
    """-f json: one object a line per report, the text's fields (docs/argdist.md):
    the time, then each section, counts first: its label, its rows as the text
    orders them (count ascending, the top -T), each event an object of the
    expressions' values (a char* a JSON string, its control characters
    escaped), "total calls" for a specifier without one; a log2 section's
    buckets as the text's rows (low, high, count). Once failed: the tracer
    took -f json and printed text."""
    import json
    import re
    out = tmp_path / "t"
    comm = 'STRCMP("plyc-work", $COMM)'
    proc = cli("-C", f"t:syscalls:sys_enter_openat():char*,int:filename,flags:{comm}#opens",
               "-C", f"t:syscalls:sys_enter_read():u64,u64:count,count:{comm}",
               "-C", f"p:{workload}:main()",
               "-H", f"t:syscalls:sys_enter_read():u64:count:{comm}",
               "-T", "2", "-i", "30", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    cmd = (f"{workload} open \"$(printf '/nonexistent/a\\033[31m\\nb')\" 4; "
           f"{workload} read 3 16; {workload} read 1 5; {workload} read 2 3000")
    run = subprocess.run([str(out), "-f", "json", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (0, "")
    lines = run.stdout.splitlines()
    assert len(lines) == 1, run.stdout
    report = json.loads(lines[0])
    assert re.fullmatch(r"\d\d:\d\d:\d\d", report.pop("time"))
    read_spec = f"t:syscalls:sys_enter_read():u64,u64:count,count:{comm}"
    assert report == {"sections": [
        {"label": "opens", "type": "counts",
         "rows": [{"count": 3, "event": {"filename": "/dev/zero", "flags": 0}},      # each read's
                  {"count": 4, "event": {"filename": "/nonexistent/a\x1b[31m\nb", "flags": 0}}]},
        {"label": read_spec, "type": "counts",
         "rows": [{"count": 2, "event": {"count": 3000}}, {"count": 3, "event": {"count": 16}}]},
        {"label": f"p:{workload}:main()", "type": "counts",
         "rows": [{"count": 4, "event": "total calls"}]},
        {"label": "count", "type": "log2",
         "buckets": [{"low": 0, "high": 1, "count": 0}, {"low": 2, "high": 3, "count": 0},
                     {"low": 4, "high": 7, "count": 1}, {"low": 8, "high": 15, "count": 0},
                     {"low": 16, "high": 31, "count": 3}, {"low": 32, "high": 63, "count": 0},
                     {"low": 64, "high": 127, "count": 0}, {"low": 128, "high": 255, "count": 0},
                     {"low": 256, "high": 511, "count": 0}, {"low": 512, "high": 1023, "count": 0},
                     {"low": 1024, "high": 2047, "count": 0}, {"low": 2048, "high": 4095, "count": 2}]},
    ]}
