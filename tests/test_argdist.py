"""plyc argdist: specifier parsing (argdist's errors), lowering to ply, and
that argdist's own examples build."""
import subprocess
import sys
from pathlib import Path

import pytest

from plyc.argdist import build_report, parser
from plyc.argdist.spec import SpecError, parse

ROOT = Path(__file__).resolve().parent.parent


def lower(*argv):
    return build_report(parser().parse_args([*argv, "-o", "x"]))[0]


@pytest.mark.parametrize("spec,message", [
    ("p:c", "at least the probe type, library, and function signature must be specified"),
    ("p:c:f():a:b:c:d", "extraneous ':'-separated parts detected"),
    ("x:c:malloc()", "probe type must be 'p', 'r', 't', or 'u' but got 'x'"),
    ("p:c:malloc", "function signature 'malloc' has an invalid format"),
    ("p:c:malloc(size_t size)::size", "no expr types specified"),
    ("p:c:malloc(size_t size):u64:", "no exprs specified"),
    ("p:c:malloc(size_t size):u64,u64:size", "mismatched # of exprs and types (1 exprs, 2 types)"),
    ("p:c:malloc(size_t size):u64:$entry(size)", "$entry() and $latency are only available in return probes (r)"),
    ("r:c:malloc(size_t size):u64:$entry(nope)", "$entry(nope): no such param"),
    ("p:c:malloc(size_t size):u64:$retval", "$retval is only available in return probes (r)"),
    ("p:c:malloc(size)", "parameter 'size' must be written 'type name'"),
    ("t::sched_switch()", "a tracepoint needs its category: t:category:event"),
])
def test_specifier_errors(spec, message):
    with pytest.raises(SpecError) as err:
        parse(spec, "freq")
    assert str(err.value) == f"error parsing probe '{spec}': {message}"


def test_histogram_specific_errors():
    with pytest.raises(SpecError, match="histograms can only have 1 expr"):
        parse("p:c:malloc(size_t size):u64,u64:size,size", "hist")
    with pytest.raises(SpecError, match="histograms must have expr"):
        parse("p:c:malloc(size_t size)", "hist")


def test_parameter_in_return_probe_needs_entry():
    with pytest.raises(SpecError, match=r"'size' is a parameter: in a return probe, read it with \$entry\(size\)"):
        lower("-C", "r:c:malloc(size_t size):u64:size")


def test_unknown_alias():
    with pytest.raises(SpecError, match=r"unknown alias '\$FOO'"):
        lower("-C", "p:c:malloc(size_t size):u64:$FOO")


def test_label_and_defaults():
    s = parse("p::vfs_read()#reads", "freq")
    assert (s.label, s.default_expr, s.types, s.exprs) == ("reads", True, ["u64"], ["1"])
    r = parse("r:c:malloc()", "freq")
    assert (r.types, r.exprs) == (["int"], ["$retval"])


def test_lowering_of_entry_values_and_filters():
    text = lower("-H", "r::__kmalloc(size_t size):u64:$latency/$entry(size):$entry(size) > 16#ns per byte")
    assert "kprobe:__kmalloc\n{\n\te0_size[kpid] = (u64)arg0;\n\te0__lat[kpid] = time;\n\te0__seen[kpid] = 1;\n}" in text
    assert "kretprobe:__kmalloc / e0__seen[kpid] /" in text
    assert "@s0 = _log2((time - e0__lat[kpid])/e0_size[kpid]);" in text
    assert "delete e0__seen[kpid];" in text


def test_lowering_of_struct_params_strings_and_aliases():
    text = lower("-C", "p::vfs_read(struct file *file, char __user *buf):char*:file->f_path.dentry->d_name.name:"
                 "$PID != 1 && STRCMP(\"bash\", $COMM)", "-t", "42")
    assert "@s0[str(((struct file *)arg0)->f_path.dentry->d_name.name, 80)] = count();" in text
    assert "pid != 1 && (strcmp(\"bash\", str(comm, 80)) == 0)" in text
    assert "kpid == 42" in text


ARGDIST_EXAMPLES = [
    ["-H", "p::__kmalloc(u64 size):u64:size"],
    ["-C", "p:c:malloc(size_t size):size_t:size:size==16"],
    ["-C", "r:c:gets():char*:(char*)$retval#snooped strings"],
    ["-H", "r::__kmalloc(size_t size):u64:$latency/$entry(size)#ns per byte"],
    ["-C", "r::__vfs_read(struct file *file, char *buf, size_t count):int:$retval:$retval < 0"],
    ["-C", "p:c:write(int fd):int:fd", "-T", "5"],
    ["-H", "t:block:block_rq_complete():u32:args->nr_sector"],
    ["-C", "t:irq:irq_handler_entry():int:args->irq"],
    ["-C", "p::vfs_read(struct file *file):char*:file->f_path.dentry->d_name.name"],
    ["-H", "p:c:write(int fd, const void *buf, size_t count):size_t:count:fd==1"],
    ["-C", "p:c:malloc(size_t size):size_t:size", "-C", "r:c:malloc()", "-z", "32", "-c"],
]


@pytest.mark.parametrize("argv", ARGDIST_EXAMPLES, ids=[" ".join(a)[:40] for a in ARGDIST_EXAMPLES])
def test_argdist_examples_build(argv, tmp_path):
    out = tmp_path / "t"
    proc = subprocess.run([sys.executable, "-m", "plyc", "argdist", *argv, "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_cli_error_is_argdist_quality(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "plyc", "argdist", "-C", "p:c:malloc", "-o", str(tmp_path / "t")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1
    assert proc.stderr == ("plyc argdist: error: error parsing probe 'p:c:malloc': "
                           "function signature 'malloc' has an invalid format\n")
