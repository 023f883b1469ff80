"""The kernel's fixed limits, held at build time (plyc/codegen/limits.py,
docs/language.md "Kernel limits"): a script past one is a located error
from `plyc check` and `plyc build`, before any C is compiled; one at the
limit builds, loads, attaches and counts right. Before, both built, and the
tracer failed at load ("the total number of maps per program has reached
the limit of 64") or at the 65th attach (E2BIG)."""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plyc import driver
from plyc.codegen import limits

ROOT = Path(__file__).resolve().parent.parent

# task:task_rename fires once per workload run (it names itself, WORKLOAD_COMM);
# no other test traces it, so no other tracer's program shares its array.
COMM = "plyc-limits"
EVENT = "tracepoint:task/task_rename"
FILTER = f'/ data->newcomm == "{COMM}" /'


def plyc(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "plyc", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def maps_script(n: int) -> str:
    body = "".join(f"\t@m{i} = count();\n" for i in range(n))
    return f"{EVENT} {FILTER}\n{{\n{body}}}\n"


def own_maps(source: str) -> list:
    """plyc's own maps in the first probe's program (limits.program_maps)."""
    c = driver.compile_source(source, "t.ply", driver.Options(env={}))
    return limits.program_maps(c.resources.probes[0])[1]


def room() -> int:
    """The most script maps one probe like maps_script's may use."""
    return limits.MAX_USED_MAPS - len(own_maps(maps_script(2)))


def counts(tmp_path: Path, text: str, workload: str, runs: int) -> dict:
    """The script built and run while the workload renames itself `runs`
    times: its key-less counts, by map name."""
    script = tmp_path / "t.ply"
    script.write_text(text)
    tracer = tmp_path / "tracer"
    p = plyc("build", script, "-o", tracer)
    assert p.returncode == 0, p.stderr
    cmd = "; ".join([f"WORKLOAD_COMM={COMM} {workload} exit 0"] * runs)
    r = subprocess.run([str(tracer), "-c", cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return dict(re.findall(r"^@(\w+): (\d+)$", r.stdout, re.M))


def test_too_many_maps_is_located_before_clang(tmp_path):
    n = room() + 1
    script = tmp_path / "maps.ply"
    script.write_text(maps_script(n))
    for cmd in (["check", script], ["build", script, "-o", tmp_path / "tracer"]):
        t0 = time.monotonic()
        p = plyc(*cmd)
        assert p.returncode == 1, p.stdout + p.stderr
        line = 3 + n - 1        # the map that is one too many
        assert re.match(rf".*/maps\.ply:{line}:2: error: probe {EVENT} \(line 1\) uses 65 BPF maps, more "
                        r"than the 64 the kernel lets one BPF program use \(MAX_USED_MAPS\); "
                        rf"@m{n - 1}, here, is its {n}", p.stderr), p.stderr
        assert f"\n\t@m{n - 1} = count();\n\t^" in p.stderr.expandtabs(8).replace(" " * 8, "\t"), p.stderr
        assert "split the probe" in p.stderr
        assert "Traceback" not in p.stderr
        # no clang ran: far quicker than a build (one takes seconds)
        assert time.monotonic() - t0 < 30
    assert not (tmp_path / "tracer").exists()


@pytest.mark.bpf
def test_the_most_maps_a_probe_may_use_loads(tmp_path, workload):
    n = room()
    assert counts(tmp_path, maps_script(n), workload, 2) == {f"m{i}": "2" for i in range(n)}


def tracepoint_script(n: int, lang: str = "ply") -> str:
    if lang == "bt":
        return "".join(f'tracepoint:task:task_rename /args->newcomm == "{COMM}"/ {{ @n = count(); @p{i % 3} = count(); }}\n'
                       for i in range(n))
    return "".join(f"{EVENT} {FILTER} {{ @n = count(); @p{i % 3} = count(); }}\n" for i in range(n))


def test_too_many_probes_on_a_tracepoint_is_located(tmp_path):
    for lang in ("ply", "bt"):
        script = tmp_path / f"tp.{lang}"
        script.write_text(tracepoint_script(300, lang))
        for cmd in (["check", script], ["build", script, "-o", tmp_path / "tracer"]):
            p = plyc(*cmd)
            assert p.returncode == 1, p.stdout + p.stderr
            spec = EVENT if lang == "ply" else "tracepoint:task:task_rename"
            assert re.match(rf".*/tp\.{lang}:65:1: error: probe {spec} \(line 65\) is the 65th on tracepoint "
                            r"task:task_rename; the kernel runs at most 64 BPF programs on one tracepoint "
                            r"\(BPF_TRACE_MAX_PROGS, every tracer's together\)\n", p.stderr), p.stderr
            assert p.stderr.count("error:") == 1, p.stderr
        assert not (tmp_path / "tracer").exists()


def test_a_glob_counts_on_each_event_it_matches(tmp_path):
    """A glob attaches a program to each event it matches (the build
    machine's tracefs says which): it counts on each of them."""
    script = tmp_path / "g.ply"
    script.write_text("tracepoint:task/task_re* { @a = count(); }\n" * 30 +
                      "tracepoint:task/task_rename { @b = count(); }\n" * 40)
    p = plyc("check", script)
    assert p.returncode == 1 and re.match(r".*/g\.ply:65:1: error: probe tracepoint:task/task_rename \(line 65\) "
                                          r"is the 65th on tracepoint task:task_rename", p.stderr), p.stderr


@pytest.mark.bpf
def test_the_most_probes_on_a_tracepoint_attach(tmp_path, workload):
    """64 programs on one tracepoint: all attach, each runs once per event."""
    assert counts(tmp_path, tracepoint_script(64), workload, 3) == \
        {"n": str(64 * 3), "p0": str(22 * 3), "p1": str(21 * 3), "p2": str(21 * 3)}


# Scripts whose programs name many kinds of plyc's own maps: output,
# stacks, scratch (long strings), loop caps, a for loop's callback, a
# tracepoint glob's cookies and fields.
KINDS = {
    "a.ply": 'tracepoint:task/task_rename { @s[stack] = count(); printf("%s %s\\n", comm, data->newcomm); }\n'
             'tracepoint:sched/sched_process_exit { @q = quantize(data->pid); }\n',
    "b.bt": 'tracepoint:task:task_rename { $i = 0; while ($i < 5) { @w[$i] = sum($i); $i++; } '
            '@k[kstack(3)] = count(); @h = hist(pid); }\n'
            'tracepoint:sched:sched_process_e* { @e[probe, args->pid] = count(); '
            'for ($kv : @w) { @x[$kv.0] = $kv.1; } }\n'
            'interval:s:1 { print(@w); }\n',
    "c.ply": 'tracepoint:task/task_rename { @big[comm, data->newcomm, data->oldcomm] = count(); '
             '$x = str(data->newcomm); @y[$x] = count(); }\n',
}


@pytest.mark.bpf
@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_count_is_never_below_the_kernels(tmp_path, name):
    """Each loaded program's maps, as the kernel lists them (bpftool, run by
    the tracer's -c once every probe is attached), are never more than
    plyc counts for it: a count below would let a tracer past the limit."""
    script = tmp_path / name
    script.write_text(KINDS[name])
    tag = f"lm{os.getpid() % 10000:04d}{sorted(KINDS).index(name)}"     # <= 8 characters: libbpf's map names
    tracer = tmp_path / tag
    p = plyc("build", script, "-o", tracer)
    assert p.returncode == 0, p.stderr
    # bpftool writes to files: on the tracer's stdout its text would
    # interleave with the tracer's own lines past a pipe buffer's size
    progs_json, maps_json = tmp_path / "progs.json", tmp_path / "maps.json"
    r = subprocess.run([str(tracer), "-c", f"bpftool -j prog show > {progs_json}; bpftool -j map show > {maps_json}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    progs, maps = json.loads(progs_json.read_text()), json.loads(maps_json.read_text())
    ours = {m["id"] for m in maps if m.get("name", "").startswith(f"{tag}.")}
    kernel = {p["name"]: len(p.get("map_ids", [])) for p in progs if ours & set(p.get("map_ids", []))}
    compiled = driver.compile_source(script.read_text(), str(script), driver.Options(env={}), tag)
    counted = {}
    for pr in compiled.resources.probes:
        mine, own = limits.program_maps(pr)
        for prog in (pr.prog, pr.twin):
            if prog:
                counted[prog] = len(mine) + len(own)
    assert kernel and set(kernel) <= set(counted), (kernel, counted)
    for prog, n in kernel.items():
        assert n <= counted[prog], (prog, n, counted[prog])


def test_kprobes_past_a_functions_trampoline_stay_kprobes(tmp_path):
    """At most BPF_MAX_TRAMP_LINKS (38) fentry/fexit programs on one kernel
    function: the kprobes past it lose their fentry twin and attach as
    kprobes, which have no such limit; kfuncs, which can't, are refused."""
    script = tmp_path / "k.ply"
    script.write_text("kprobe:vfs_read { @c = count(); }\n" * 30 + "kretprobe:vfs_read { @r = count(); }\n" * 10)
    c = driver.compile_source(script.read_text(), str(script), driver.Options(env={}))
    twins = [p.fentry["func"] for p in c.resources.probes if p.fentry]
    assert twins == ["vfs_read"] * 38
    assert [bool(p.fentry) for p in c.resources.probes] == [True] * 38 + [False] * 2
    assert "fentry_prog=NULL" in plyc("emit", "--stage", "resources", script).stdout

    bt = tmp_path / "f.bt"
    bt.write_text("kprobe:vfs_read { @k = count(); }\n" * 5 + "kfunc:vfs_read { @c = count(); }\n" * 39)
    p = plyc("check", bt)
    assert p.returncode == 1 and re.match(r".*/f\.bt:44:1: error: probe kfunc:vfs_read \(line 44\) is the 39th "
                                          r"fentry/fexit program on vfs_read; the kernel attaches at most 38 to "
                                          r"one function \(BPF_MAX_TRAMP_LINKS", p.stderr), p.stderr
    bt.write_text("kprobe:vfs_read { @k = count(); }\n" * 5 + "kfunc:vfs_read { @c = count(); }\n" * 38)
    c = driver.compile_source(bt.read_text(), str(bt), driver.Options(env={}))
    assert not any(p.fentry for p in c.resources.probes[:5])


def test_a_probe_past_the_bpf_stack_is_located(tmp_path):
    """80 $variables live at once: clang spills past the 512-byte BPF stack,
    which only it can tell. Before: "generated code does not compile ...
    (a plyc bug)"; now the probe, named, and the limit."""
    n = 80
    script = tmp_path / "s.bt"
    script.write_text("BEGIN { @x = 1; }\n"
                      "BEGIN {\n" + "".join(f"  $v{i} = nsecs * {i + 1};\n" for i in range(n)) +
                      '  printf("%d\\n", ' + " + ".join(f"$v{i}" for i in range(n)) + ");\n"
                      '  printf("%d\\n", ' + " * ".join(f"$v{i}" for i in range(21)) + ");\n  exit();\n}\n")
    p = plyc("build", script, "-o", tmp_path / "tracer")
    assert p.returncode == 1, p.stderr
    assert re.match(r".*/s\.bt:2:1: error: probe BEGIN \(line 2\) needs more than the 512 bytes of stack a "
                    r"BPF program has", p.stderr), p.stderr
    assert p.stderr.count("error:") == 1 and "plyc bug" not in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "tracer").exists()
