"""Property-based tests of plyc argdist: whatever specifiers it is given,
it refuses them with argdist's rendered error under the specifier, or
builds them into a BPF program that clang compiles (as `plyc argdist -o`
does, loader aside: tests/cbuild.py); never a Python exception.

Inputs: mutations (delete / duplicate / insert a character or a token) of
specifiers that argdist's tests build, one or two to a command line.
Derandomized, so CI sees the same examples on every run."""
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from plyc import driver
from plyc.diag import PlycError
from plyc.commands.argdist import parse_args
from plyc.frontends.argdist import lower_args, probe_origin, render_plyc_error, render_spec_error
from plyc.frontends.argdist.spec import SpecError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cbuild import bpf_compile_error  # noqa: E402

# Specifiers argdist's tests (test_argdist*.py) build on this machine.
SEEDS = [
    "p:c:malloc(size_t size):size_t:size",
    "p:c:malloc(size_t size):u64,u64:size,size",
    "r:c:malloc(size_t size):u64:$latency/$entry(size):$entry(size) > 16#ns per byte",
    "p:c:open(char *path, int flags):int:flags:flags & O_CREAT && flags != AF_INET",
    "p:c:nanosleep(struct timespec *req):s64,u64:req->tv_sec,req->tv_nsec",
    "p:c:write(int fd):int:fd",
    "p:c:free(void *p):u64:p",
    "r:c:malloc():u64:$retval",
    "p::__kmalloc(size_t size, gfp_t flags):size_t:size:flags&GFP_ATOMIC",
    "p::vfs_read(struct file *file):u32:file->f_flags",
    "t:syscalls:sys_enter_openat():char*:filename:flags & 64",
    "t:syscalls:sys_enter_read():u64:args->count:args->count > 10 && args->fd == 0",
    "t:irq:irq_handler_entry():int:irq",
    "p:c:write(int fd, const void *buf, size_t count):size_t:count*2-(count>>1):fd == 1#bytes",
]
TOKENS = ["(", ")", "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "!", "~", "?", ":", ",", "#", "->",
          ".", "size", "count", "fd", "0", "1", "/0", "%0", "<<99", ">>-1", "0x10UL", "99999999999999999999",
          "$retval", "$entry(size)", "$latency", "$PID", "$COMM", "(u32)", "(char*)", "STRCMP(\"a\", path)",
          "'x'", '"s"', "u64", "char*", "struct file *", "\\", " ", "#label"]

FUZZ = settings(derandomize=True, deadline=None, database=None, max_examples=150,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def mutated(draw):
    src = draw(st.sampled_from(SEEDS))
    # Half the time only the expressions change (after the signature), so
    # that more of what is drawn gets as far as the C compiler.
    first = src.index(")") + 1 if draw(st.booleans()) else 0
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(min(first, len(src)), len(src)))
        op = draw(st.sampled_from(["delete", "dup", "insert", "token"]))
        if op == "delete" and src:
            src = src[:i] + src[i + 1:]
        elif op == "dup" and i < len(src):
            src = src[:i] + src[i] + src[i:]
        elif op == "insert":
            src = src[:i] + draw(st.characters(min_codepoint=32, max_codepoint=0x7e)) + src[i:]
        else:
            src = src[:i] + draw(st.sampled_from(TOKENS)) + src[i:]
    return src


@st.composite
def specifier_lines(draw):
    """An argdist command line: -C/-H and one or two specifiers."""
    argv = []
    for spec in draw(st.lists(mutated(), min_size=1, max_size=2)):
        argv += [draw(st.sampled_from(["-C", "-H"])), spec]
    return argv


def builds_or_is_refused_argdist(argv: list) -> bool:
    """`plyc argdist ARGV -o OUT` in-process up to clang: refused with its
    rendered error (on a specifier), or a BPF program that compiles."""
    try:
        lowered, _ = lower_args(parse_args([*argv, "-o", "x"]))
    except SpecError as err:
        text = render_spec_error(err)
        assert text.startswith("plyc argdist: ") and "error: " in text.split("\n")[0], text
        return False
    opts = driver.Options(strsize=80, origin=probe_origin(lowered))
    source = "\n".join(s.raw for s in lowered.spec_list)
    try:
        compiled = driver.compile_ir(lowered.program, source, "argdist", opts, "argdist")
    except PlycError as err:
        text = render_plyc_error(err, lowered)
        assert text.startswith("plyc argdist: ") and "error: " in text.split("\n")[0], text
        return False
    problem = bpf_compile_error(compiled)
    assert problem == "", f"generated code does not compile:\n--- argv: {argv!r}\n--- clang:\n{problem}"
    return True


def test_seeds_build():
    for spec in SEEDS:
        assert builds_or_is_refused_argdist(["-C", spec]), spec


@FUZZ
@given(specifier_lines())
def test_mutated_specifiers_build_or_are_refused(argv):
    builds_or_is_refused_argdist(argv)
