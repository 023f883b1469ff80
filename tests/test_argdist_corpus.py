"""Every argdist command line of bcc's own documentation (tools/argdist_example.txt,
man/man8/argdist.8 and the help text of tools/argdist.py, in the versions since
2016) builds into an x86_64 tracer, or is refused for the reason argdist itself
has. The lines are written down here, not read from bcc; kernel functions need
not exist on this machine (they are resolved on the device).

Where the outcome depends on the kernel whose BTF the build reads, the test
asks that BTF: d_iname left struct dentry in 6.14; the ___GFP_*_BIT
enumerators plyc computes GFP_ATOMIC from came in 6.10."""
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

BUILDS = "builds"


def refused(*lines):
    """The error output must contain these lines."""
    return lines


def _btf():
    from plyc import btf
    return btf.load(None)


def dentry_has_d_iname() -> bool:
    from plyc import btf as B
    b = _btf()
    return b.find_member(b.find(B.STRUCT, "dentry"), "d_iname") is not None


def kernel_has_gfp_bits() -> bool:
    return _btf().enumerator("___GFP_HIGH_BIT") is not None


SEMICOLON = "';' is not argdist's label separator: a label comes after '#'"

# (argdist's command line, expected outcome). Outcomes: BUILDS, or the lines
# (argdist's reason) the refusal prints; a callable decides at run time.
CORPUS = [
    # tools/argdist_example.txt
    ("-p 2420 -c -C 'p:c:malloc(size_t size):size_t:size'", BUILDS),
    ("-c -H 'p:c:write(int fd, void *buf, size_t len):size_t:len'", BUILDS),
    ("-c -H 'p:c:write(int fd, void *buf, size_t len):size_t:len:fd==1'", BUILDS),
    ("-i 3 -n 2 -H 'p::__kmalloc(size_t size):size_t:size'", BUILDS),
    ("-i 10 -n 1 -C 'p:c:puts(char *str):char*:str'", BUILDS),
    ("-i 10 -n 1 -C 'r:c:gets():char*:(char*)$retval:$retval!=0'", BUILDS),
    # -c takes no value in argdist either (argparse: "unrecognized arguments: 1").
    ("-i 10 -c 1 -H 'r:c:read()'", refused("plyc argdist: error: unrecognized arguments: 1")),
    ("-C 'r::__vfs_read():u32:$PID:$latency > 100000'", BUILDS),
    # The label after ';' is from the argdist of 2016; argdist's C compiler
    # refuses the ';' today.
    ("-H 'r:c:malloc(size_t size):u64:$latency/$entry(size);ns per byte' -n 1 -i 10",
     refused(f"plyc argdist: -H #1:50: error: {SEMICOLON}",
             "r:c:malloc(size_t size):u64:$latency/$entry(size);ns per byte",
             "                                                 ^",
             "note: write '#ns per byte'")),
    ("-c -C 'p::__kmalloc(size_t size, gfp_t flags):gfp_t,size_t:flags,size'", BUILDS),
    ("-C 't:net:net_dev_start_xmit():u16:args->protocol'", BUILDS),
    ("-c -H 'r:c:open(char *file):u64:$latency/1000:STRCMP(\"test.txt\",$entry(file))'", BUILDS),
    ("-c -C 'p:c:write():int:$PID;write per process' -n 2",
     refused(f"plyc argdist: -C #1:21: error: {SEMICOLON}", "note: write '#write per process'")),
    # The help text (in argdist_example.txt and tools/argdist.py)
    ("-H 'p::__kmalloc(u64 size):u64:size'", BUILDS),
    ("-p 1005 -C 'p:c:malloc(size_t size):size_t:size:size==16'", BUILDS),
    ("-C 'r:c:gets():char*:$retval#snooped strings'", BUILDS),
    ("-C 'r:c:gets():char*:(char*)$retval#snooped strings'", BUILDS),
    ("-H 'r::__kmalloc(size_t size):u64:$latency/$entry(size)#ns per byte'", BUILDS),
    ("-C 'p::__kmalloc(size_t size, gfp_t flags):size_t:size:flags&GFP_ATOMIC'",
     lambda: BUILDS if kernel_has_gfp_bits() else
     refused("plyc argdist: -C #1:58: error: 'GFP_ATOMIC' is not a parameter, a field or a constant plyc can find")),
    ("-C 'p::__kmalloc(size_t sz, gfp_t flags):size_t:sz:flags&GFP_ATOMIC'",
     lambda: BUILDS if kernel_has_gfp_bits() else
     refused("plyc argdist: -C #1:54: error: 'GFP_ATOMIC' is not a parameter, a field or a constant plyc can find")),
    ("-p 1005 -C 'p:c:write(int fd):int:fd' -T 5", BUILDS),
    ("-p 1005 -H 'r:c:read()'", BUILDS),
    # $COMM is a string (argdist: char name[...]); as a u32 key argdist's C
    # is an int-from-pointer conversion, an error for today's clang.
    ("-C 'r::__vfs_read():u32:$COMM:$latency > 100000'",
     refused("plyc argdist: -C #1:17: error: $COMM is a string: its type must be char*",
             "r::__vfs_read():u32:$COMM:$latency > 100000",
             "                ^~~")),
    ("-H 'r::__vfs_read(void *file, void *buf, size_t count):size_t:$entry(count):$latency > 1000000'", BUILDS),
    # tools/argdist.py wraps it over two lines; argdist takes the newline as C whitespace.
    ("-H 'r::__vfs_read(void *file, void *buf, size_t count):size_t:\n            $entry(count):$latency > 1000000'",
     BUILDS),
    ("-H 'p:c:write(int fd, const void *buf, size_t count):size_t:count:fd==1'", BUILDS),
    ("-C 'p:c:fork()#fork calls'", BUILDS),
    ("-H 't:block:block_rq_complete():u32:args->nr_sector'", BUILDS),
    ("-C 't:irq:irq_handler_entry():int:args->irq'", BUILDS),
    ("-C 'u:pthread:pthread_start():u64:arg2' -p 1337", BUILDS),
    ("-H 'p:c:sleep(u32 seconds):u32:seconds' -H 'p:c:nanosleep(struct timespec *req):long:req->tv_nsec'", BUILDS),
    ("-p 2780 -z 120 -C 'p:c:write(int fd, char* buf, size_t len):char*:buf:fd==1'", BUILDS),
    # The header is only in a kernel source tree; struct cfs_rq is in BTF.
    ("-I 'kernel/sched/sched.h' -C 'p::__account_cfs_rq_runtime(struct cfs_rq *cfs_rq):s64:"
     "cfs_rq->runtime_remaining'", BUILDS),
    # man/man8/argdist.8
    ("-C 'r:c:gets():char*:$retval'", BUILDS),
    ("-p 1005 -C 'p:c:write(int fd):int:fd'", BUILDS),
    ("-C 'p:c:fork():int:$PID;fork per process'",
     refused(f"plyc argdist: -C #1:20: error: {SEMICOLON}", "note: write '#fork per process'")),
    ("-H 't:block:block_rq_complete():u32:nr_sector'", BUILDS),
    ("-C 't:irq:irq_handler_entry():int:irq'", BUILDS),
    # The 2016 man page gave -H two specifiers; later ones repeat -H.
    ("-H 'p:c:sleep(u32 seconds):u32:seconds' 'p:c:nanosleep(struct timespec *req):long:req->tv_nsec'", BUILDS),
    ("-C 'p::__vfs_read(struct file *file, void *buf, size_t count):char*,size_t:"
     "file->f_path.dentry->d_iname,count:file->f_path.dentry->d_iname[0]!=0'",
     lambda: BUILDS if dentry_has_d_iname() else
     refused("plyc argdist: -C #1:128: error: struct dentry has no member 'd_iname'",
             " " * 127 + "^~~~~~~",
             "plyc argdist: -C #1:93: error: struct dentry has no member 'd_iname'")),
]


def run_argdist(argv: list, out: Path, *extra):
    return builds.run([sys.executable, "-m", "plyc", "argdist", *argv, *extra, "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=180)


@pytest.mark.parametrize("line,outcome", CORPUS, ids=[c[0][:60] for c in CORPUS])
def test_bcc_documented_line(line, outcome, tmp_path):
    if callable(outcome):
        outcome = outcome()
    out = tmp_path / "tracer"
    proc = run_argdist(shlex.split(line), out)
    if outcome is BUILDS:
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes()[:4] == b"\x7fELF"
        return
    assert proc.returncode != 0, "built, but argdist refuses it"
    lines = proc.stderr.splitlines()
    for want in outcome:
        assert want in lines, f"{want!r} not in:\n{proc.stderr}"
    assert not out.exists()


@pytest.fixture(scope="module")
def vmlinux_61(lab_kernel) -> Path:
    """Debian 12's kernel (6.1), from the VM lab: it has d_iname and no ___GFP_*_BIT."""
    return lab_kernel("x86_64", "6.1").vmlinux


def test_d_iname_builds_for_a_kernel_that_has_it(tmp_path, vmlinux_61):
    line = CORPUS[-1][0]
    proc = run_argdist(shlex.split(line), tmp_path / "t", "--btf", str(vmlinux_61))
    assert proc.returncode == 0, proc.stderr


def test_gfp_atomic_without_gfp_bits_says_which_header(tmp_path, vmlinux_61):
    """Kernels before 6.10 have no ___GFP_*_BIT enumerators: GFP_ATOMIC needs
    that kernel's headers, and the error says which."""
    line = "-C 'p::__kmalloc(size_t size, gfp_t flags):size_t:size:flags&GFP_ATOMIC'"
    proc = run_argdist(shlex.split(line), tmp_path / "t", "--btf", str(vmlinux_61))
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "note: GFP flags are macros of the kernel's include/linux/gfp_types.h: plyc computes those of them "
        "it knows from the kernel's ___GFP_*_BIT enumerators (kernels from 6.10 on); for this kernel give its "
        "headers with --kernel-headers DIR (Debian: linux-headers-VERSION) and -I linux/gfp.h")
