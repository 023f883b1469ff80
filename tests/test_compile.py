"""Every example builds into a static tracer (clang and the C compiler run
with -Wall -Werror), and generated code is deterministic."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ply"))


def plyc(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "plyc", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, **kw)


@pytest.fixture(scope="module", params=["glibc", "musl"])
def libc(request):
    # musl's libraries are built on first use (once): not inside a build's timeout.
    if request.param == "musl":
        proc = plyc("sysroot", "--target", "x86_64", "--libc", "musl", timeout=900)
        assert proc.returncode == 0, proc.stderr
    return request.param


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_builds(example, libc, tmp_path):
    out = tmp_path / example.stem
    proc = plyc("build", "--libc", libc, example, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert (b"GLIBC" in out.read_bytes()) == (libc == "glibc")
    head = out.read_bytes()[:20]
    assert head[:4] == b"\x7fELF"
    # Statically linked: no program interpreter.
    readelf = subprocess.run(["readelf", "-l", str(out)], capture_output=True, text=True).stdout
    assert "INTERP" not in readelf
    help_out = subprocess.run([str(out), "-h"], capture_output=True, text=True)
    assert help_out.returncode == 0
    assert f"{example.name}:" in help_out.stdout


def test_generated_code_is_deterministic(tmp_path):
    example = ROOT / "examples" / "read-sizes.ply"
    first = plyc("emit", "--stage", "c", example)
    second = plyc("emit", "--stage", "c", example)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert str(ROOT) not in first.stdout and "/tmp" not in first.stdout


def test_the_tracer_is_the_same_from_any_folder(tmp_path):
    # Not only the C: the tracer's bytes, whatever folder plyc builds in
    # (a fresh temporary one each time, or --keep's) and is run from; the
    # BPF object's BTF names source files (tests/test_install.py: and
    # wherever plyc is installed).
    example = ROOT / "examples" / "read-sizes.ply"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = plyc("build", example, "-o", tmp_path / "a" / "read-sizes")
    second = subprocess.run([sys.executable, "-m", "plyc", "build", str(example), "-o", "read-sizes",
                             "--keep", "kept"], capture_output=True, text=True, cwd=tmp_path / "b",
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert (tmp_path / "a" / "read-sizes").read_bytes() == (tmp_path / "b" / "read-sizes").read_bytes()
    obj = (tmp_path / "b" / "kept" / "read_sizes.bpf.o").read_bytes()
    assert str(tmp_path).encode() not in obj and str(ROOT).encode() not in obj


def test_generated_c_compiles_with_all_warnings(tmp_path):
    """The generated files alone, with plain -Wall -Werror (no -Wno- flags)."""
    keep = tmp_path / "gen"
    proc = plyc("build", ROOT / "examples" / "interval.ply", "-o", tmp_path / "t", "--keep", keep)
    assert proc.returncode == 0, proc.stderr
    rt = ROOT / "runtime-c"
    bpf = subprocess.run(["clang", "-target", "bpf", "-D__TARGET_ARCH_x86", "-O2", "-g", "-Wall", "-Werror",
                          "-I", rt / "bpf", "-I", keep, "-c", keep / "t.bpf.c", "-o", tmp_path / "x.o"],
                         capture_output=True, text=True)
    assert bpf.returncode == 0, bpf.stderr
    loader = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-I", rt, "-I", keep,
                             "-c", keep / "t.c", "-o", tmp_path / "y.o"], capture_output=True, text=True)
    assert loader.returncode == 0, loader.stderr


# --- temporaries too large for the BPF stack (docs/design.md, "Temporaries") ---

CORPUS = ROOT.parent / "shared" / "corpus"

STRESS = {
    # The corpus opensnoop's shape, with more strings: kprobe and kretprobe
    # (each with its fentry/fexit twin).
    "kprobe-kretprobe": """
kprobe:do_sys_openat2
{
	path[kpid] = str(arg1);
	who[kpid] = comm;
	both[kpid, comm] = str(arg1, 200);
	@[str(arg1), comm] = count();
}

kretprobe:do_sys_openat2
{
	printf("%v %v %v %v %v :%d\\n", pid, comm, path[kpid], who[kpid], both[kpid, who[kpid]], retval);
	@rets[path[kpid], comm] = count();
	$p = path[kpid];
	if ($p == "/etc/passwd") {
		printf("%s again: %s\\n", $p, both[kpid, comm]);
	}
	delete path[kpid];
	delete who[kpid];
	delete both[kpid, comm];
}
""",
    "tracepoint": """
tracepoint:syscalls/sys_enter_openat
{
	a[kpid] = str(data->filename);
	b[kpid] = comm;
	c[kpid] = "a literal longer than thirty-two bytes";
	d[kpid, comm] = str(data->filename, 64);
	e[str(data->filename), comm] = "by file name and comm";
	f[comm, str(data->filename, 32)] = str(data->filename, 2000);
	$s = e[a[kpid], b[kpid]];
	printf("%s|%s|%s|%s|%s|%s|%s\\n", a[kpid], b[kpid], c[kpid], d[kpid, comm],
	       e[str(data->filename), comm], f[comm, str(data->filename, 32)], $s);
	printf("%d\\n",
	       (comm == "a0") + (comm == "a1") + (comm == "a2") + (comm == "a3") + (comm == "a4") +
	       (comm == "a5") + (comm == "a6") + (comm == "a7") + (comm == "a8") + (comm == "a9") +
	       (comm == "b0") + (comm == "b1") + (comm == "b2") + (comm == "b3") + (comm == "b4"));
}
""",
    "uprobe": """
uprobe:c:open
{
	upath[kpid] = str(arg0);
	if (arg1 > 100) {
		return;
	}
	tag[kpid] = "a tag longer than thirty-two bytes";
}

uretprobe:c:open
{
	printf("%s %s %s :%d\\n", comm, upath[kpid], tag[kpid], (int)retval);
	@[upath[kpid], comm] = count();
}
""",
    "profile-interval-begin-end": """
BEGIN
{
	names[0] = "a name longer than thirty-two bytes";
}

profile:99hz
{
	last[cpu] = comm;
	@[names[0], last[cpu], comm] = count();
}

interval:1s
{
	printf("%s %s\\n", names[0], last[0]);
}

END
{
	printf("%s\\n", names[0]);
}
""",
    # Many maps with string keys and values, across probes.
    "many-maps": "\n".join(
        f"""tracepoint:syscalls/sys_enter_{call}
{{
	k{i}[comm, str(data->filename)] = str(data->filename, {48 + 16 * i});
	v{i}[str(data->filename)] = comm;
	printf("%s %s %s\\n", k{i}[comm, str(data->filename)], v{i}[str(data->filename)], comm);
}}
""" for i, call in enumerate(["openat", "open", "newstat", "newlstat", "access", "chdir"])),
}


def stack_depths(obj: Path) -> dict:
    """The deepest stack offset each BPF program of an object touches."""
    out = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True,
                         text=True, check=True).stdout
    depths, prog, frame_regs = {}, None, set()
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(\w+)>:", line)
        if m and not m.group(1).startswith("LBB"):
            prog, frame_regs = m.group(1), set()
            depths[prog] = 0
            continue
        if prog is None:
            continue
        for n in re.findall(r"r10 - (\d+)", line):
            depths[prog] = max(depths[prog], int(n))
        m = re.search(r"\b(r\d+) = r10$", line)
        if m:
            frame_regs.add(m.group(1))
        m = re.search(r"\b(r\d+) \+= -(\d+)$", line)
        if m and m.group(1) in frame_regs:
            depths[prog] = max(depths[prog], int(m.group(2)))
    return depths


def check_temporaries(name: str, keep: Path):
    """Large temporaries are in the scratch slot, not on the stack, and each
    program leaves most of its 512 stack bytes unused."""
    bpf_c = (keep / f"{name}.bpf.c").read_text()
    bodies = bpf_c[bpf_c.index('\nSEC("'):]
    arrays = re.findall(r"^\t+char \w+\[(\d+)\]", bodies, re.M)
    assert arrays and all(int(n) <= 32 for n in arrays), arrays
    if shutil.which("llvm-objdump"):
        depths = stack_depths(keep / f"{name}.bpf.o")
        assert depths and max(depths.values()) <= 256, depths
    return bpf_c


@pytest.mark.parametrize("kind", sorted(STRESS))
def test_large_temporaries_build(kind, tmp_path):
    src = tmp_path / "stress.ply"
    src.write_text(STRESS[kind])
    keep = tmp_path / "gen"
    proc = plyc("build", src, "-o", tmp_path / "stress", "--keep", keep)
    assert proc.returncode == 0, proc.stderr
    bpf_c = check_temporaries("stress", keep)
    assert "plyc_scratch SEC(\".maps\")" in bpf_c
    # Only uprobes (preemptible) claim their slot; twins share theirs.
    assert ("scratch->busy = 1;" in bpf_c) == (kind == "uprobe")
    if kind == "kprobe-kretprobe":
        # One body for the kretprobe and its fexit twin, called by both.
        assert bpf_c.count("struct kretprobe_do_sys_openat2_scratch *scratch") == 1
        assert bpf_c.count("return kretprobe_do_sys_openat2_body(ctx, ") == 2


def test_corpus_opensnoop_builds(tmp_path):
    """ply's own scripts/opensnoop.ply: a 128-byte string from a plain map
    printed with comm in a kretprobe overflowed the BPF stack."""
    script = CORPUS / "ply" / "scripts-opensnoop.ply"
    if not script.exists():
        pytest.skip(f"no {script} (the shared corpus of published scripts)")
    keep = tmp_path / "gen"
    proc = plyc("build", script, "-o", tmp_path / "opensnoop", "--keep", keep)
    assert proc.returncode == 0, proc.stderr
    check_temporaries("opensnoop", keep)


def test_small_temporaries_stay_on_the_stack():
    """Hot paths keep their small keys and comm on the stack: no scratch
    lookup where nothing needs it."""
    for example in ("syscall-count.ply", "read-latency.ply"):
        proc = plyc("emit", "--stage", "c", ROOT / "examples" / example)
        assert proc.returncode == 0, proc.stderr
        assert "plyc_scratch" not in proc.stdout


def test_stress_code_is_deterministic(tmp_path):
    src = tmp_path / "stress.ply"
    src.write_text(STRESS["tracepoint"])
    first, second = plyc("emit", "--stage", "c", src), plyc("emit", "--stage", "c", src)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout


def test_scratch_slot_limit():
    """A probe whose temporaries outgrow a per-CPU slot (32 KiB) is told so."""
    body = " ".join(f"${v} = str(data->filename, 4096);" for v in "abcdefghi")
    proc = plyc("emit", "--stage", "c", "-e", f"tracepoint:syscalls/sys_enter_openat {{ {body} }}")
    assert proc.returncode == 1
    assert "needs 36864 bytes of temporaries" in proc.stderr and "Traceback" not in proc.stderr


def test_output_record_limit():
    """An output record that outgrows a per-CPU slot (32 KiB, less the
    perf-buffer path's 16-byte header) is told so at compile time; one at
    the limit builds."""
    def emit(last):
        args = ", ".join(["str(data->filename, 4096)"] * 7 + [f"str(data->filename, {last})"])
        return plyc("emit", "--stage", "c", "-e",
                    f'tracepoint:syscalls/sys_enter_openat {{ printf("{"%s" * 8}", {args}); }}')
    proc = emit(4080)
    assert proc.returncode == 1
    assert ("error: this printf sends a record of 32760 bytes, more than the 32752 an output record "
            "can have" in proc.stderr) and "Traceback" not in proc.stderr
    proc = emit(4072)
    assert proc.returncode == 0, proc.stderr
    assert "#define PLYC_EVENT_MAX 32752" in proc.stdout


def test_kstack_is_stack():
    """kstack, as published ply scripts spell it, compiles as stack does."""
    kstack = plyc("emit", "--stage", "c", "-e", "kprobe:schedule { @[kstack] = count(); }")
    stack = plyc("emit", "--stage", "c", "-e", "kprobe:schedule { @[stack] = count(); }")
    assert kstack.returncode == 0, kstack.stderr
    # The same C but for the comments that quote the script's line.
    quoted = re.compile(r"/\* <command-line>:1: .*\*/")
    assert quoted.sub("", kstack.stdout) == quoted.sub("", stack.stdout)


@pytest.mark.skipif(not Path("/sys/kernel/btf/vmlinux").exists(),
                    reason="this kernel has no BTF (/sys/kernel/btf/vmlinux): fentry twins need the build kernel's")
def test_fentry_twins_name_the_context_slots_they_read():
    """A kprobe's fentry/fexit twin tells the tracer which ctx slots it
    reads (bit n: ctx[n]; the return value is ctx[nargs], a syscall
    wrapper's arguments come from its pt_regs in ctx[0]): the tracer has the
    device's verifier check those reads before choosing the twin, as 5.10
    refuses an argument pointing to other than a struct."""
    p = plyc("emit", "--stage", "c", "-e", "kprobe:vfs_read { @[arg2] = count(); } "
             "kretprobe:vfs_read { @r = count(); } kretprobe:vfs_write { @w = quantize(retval); } "
             "kprobe:SyS_openat { @o[arg1] = count(); }")
    assert p.returncode == 0, p.stderr
    rows = re.findall(r'\.fentry_prog = "(\w+)",\n\t\.fentry_func = "(\w+)",\n'
                      r'\t\.fentry_nargs = (\d+),\n\t\.fentry_ctx = (0x[0-9a-f]+)ULL,', p.stdout)
    assert rows == [("fentry_vfs_read", "vfs_read", "4", "0x4"), ("fexit_vfs_read", "vfs_read", "4", "0x0"),
                    ("fexit_vfs_write", "vfs_write", "4", "0x10"),
                    ("fentry_SyS_openat", "__x64_sys_openat", "1", "0x1")]


def test_generated_code_errors_are_shown_once():
    """clang's BPF back end repeats some errors once per instruction: each
    is shown once, and located on the script once."""
    from plyc.toolchain import once_each, translate_c_error
    err = "x.bpf.c:70:3: error: Looks like the BPF stack limit of 512 bytes is exceeded."
    clang_out = "\n".join(
        ["x.bpf.c:57:5: error: Looks like the BPF stack limit of 512 bytes is exceeded.",
         "int plyc_p1(struct pt_regs *ctx)", "    ^",
         "x.bpf.c:57:5: note: could not determine the original source location for x.bpf.c:0:0"] * 8 +
        [err, "\t\t__builtin_memcpy(t4, p3->v, 128);", "\t\t^"] + [err] * 7 + ["16 errors generated."])
    shown = once_each(clang_out)
    assert shown.count("57:5: error") == 1 and shown.count("70:3: error") == 1
    assert shown.count("could not determine") == 1 and shown.endswith("16 errors generated.")
    linemap = [0] * 80
    linemap[69] = 13
    located = translate_c_error(clang_out, "x.bpf.c", linemap, "opensnoop.ply")
    assert located.splitlines() == ["opensnoop.ply:13: error: generated code does not compile: Looks like the BPF "
                                    "stack limit of 512 bytes is exceeded. (a plyc bug; please report it with the "
                                    "script)"]


def test_tp_direct_slots_match_the_runtime():
    """The compiler reads a tracepoint field by the rewritten load only in the
    slots the tracer rewrites: resources.TP_DIRECT_SLOTS is PLYC_TP_SLOTS of
    runtime-c/plyc_tp.h."""
    from plyc.codegen.resources import TP_DIRECT_SLOTS
    header = (ROOT / "runtime-c" / "plyc_tp.h").read_text()
    m = re.search(r"^#define PLYC_TP_SLOTS\s+(0x[0-9a-fA-F]+|\d+)\b", header, re.M)
    assert m, "no PLYC_TP_SLOTS in runtime-c/plyc_tp.h"
    assert TP_DIRECT_SLOTS == int(m.group(1), 0)


def test_names_follow_the_script():
    """Maps and programs carry the script's names, unique in C and in the
    15 characters the kernel keeps; clashes (with C, libc's builtins, plyc's
    names or cgen's locals) get a prefix or a number, deterministically."""
    p = plyc("emit", "--stage", "resources", "-e",
             "kprobe:vfs_read { @x[pid] = count(); x[kpid] = 1; @ = count(); key1[0] = 2; "
             "@plyc_stats = count(); @a_very_long_map_name_one = count(); "
             "@a_very_long_map_name_two = count(); @a_very_long_map_name_three = count(); @malloc = count(); } "
             "kretprobe:vfs_read { @n = count(); } uprobe:/bin/sh:malloc { @m = count(); } "
             "tracepoint:syscalls/sys_enter_read { @r = count(); } profile:99hz { @p = count(); }")
    assert p.returncode == 0, p.stderr
    maps = re.findall(r"^map (\S+) \((\w+)\)", p.stdout, re.M)
    assert maps == [("@x", "at_x"), ("x", "x"), ("@", "at"), ("key1", "map_key1"), ("@plyc_stats", "at_plyc_stats"),
                    ("@a_very_long_map_name_one", "a_very_long_map_name_one"),
                    ("@a_very_long_map_name_two", "at_a_very_long_map_name_two"),
                    ("@a_very_long_map_name_three", "a_very_long_m_2"), ("@malloc", "at_malloc"),
                    ("@n", "n"), ("@m", "m"), ("@r", "r"), ("@p", "p")]
    progs = re.findall(r'^probe (\w+) .*?(?:fentry_prog="(\w+)".*)?$', p.stdout, re.M)
    assert progs == [("vfs_read", "fentry_vfs_read"), ("kretprobe_vfs_read", "fexit_vfs_read"),
                     ("uprobe_malloc", ""), ("sys_enter_read", ""), ("profile_99hz", "")]
    cut = [n[:15] for _, n in maps] + [n[:15] for pr in progs for n in pr if n]
    assert len(cut) == len(set(cut))



def test_names_of_elf_sections_are_not_taken():
    """clang names each ELF section's symbol after it: a map or program of
    the name of a section the object has (license, kprobe, tracepoint...)
    was a symbol defined twice, C that did not compile. `kprobe:?` names
    its program after its provider alone."""
    from cbuild import bpf_compile_error
    from plyc import driver
    for src in ["BEGIN { @license[1] = count(); exit(); }",
                "kprobe:vfs_read { @kprobe[1] = count(); @kretprobe = count(); exit(); }",
                "tracepoint:syscalls:sys_enter_read { @tracepoint = count(); exit(); }",
                "kprobe:? { printf(\"x\\n\"); exit(); }",
                "uprobe:/bin/sh:? { @uprobe = count(); @uretprobe = count(); @usdt = count(); }",
                "profile:hz:99 { @perf_event = count(); @raw_tp = count(); @fentry = count(); @fexit = count(); }",
                # and libbpf's headers' enumerators (bpf_helpers.h)
                "BEGIN { @LIBBPF_PIN_NONE = count(); @LIBBPF_PIN_BY_NAME = count(); @TRI_NO = count(); "
                "@TRI_YES = count(); @TRI_MODULE = count(); exit(); }"]:
        compiled = driver.compile_source(src + "\n", "f.bt", driver.Options())
        assert bpf_compile_error(compiled) == "", src

def test_readable_c():
    """A latency script's C: its names, the key built once, an integer key as
    the integer, no casts that do nothing, the script's lines quoted."""
    p = plyc("emit", "--stage", "c", ROOT / "examples" / "read-latency.ply")
    assert p.returncode == 0, p.stderr
    bpf_c = p.stdout.split("/* ==== read_latency.h")[0]
    assert "\t__type(key, __u32);\n\t__type(value, struct start_val);\n} start SEC(\".maps\");" in bpf_c
    assert "\t__type(key, struct at_key);\n\t__type(value, struct at_hist);\n} at SEC(\".maps\");" in bpf_c
    body = bpf_c[bpf_c.index("int sys_exit_read(void *ctx)"):]
    assert body.count("bpf_get_current_pid_tgid()") == 1
    assert "\t__u32 key1 = (__u32)bpf_get_current_pid_tgid();\n" in body
    assert "\tbpf_map_delete_elem(&start, &key1);\n" in body
    # one lookup, for the predicate and the body; the predicate's failure returns at once
    assert body.count("bpf_map_lookup_elem(&start,") == 1
    assert "\tif (!(lookup1 ? lookup1->v : 0)) {\n\t\treturn 0;\n\t}\n" in body
    assert '__builtin_memcpy(key3.k0, "latency", 8);' in body
    assert "\t/* read-latency.ply:13: delete start[kpid]; */\n" in body
