"""docs/output.md's "Flame graphs from stacks": its awk program, taken from
the page as it stands, folds a tracer's stack counts into the lines
flamegraph.pl and speedscope read (root first, `;` between frames, the
count last), and folds bpftrace 0.27's dump of the same script into the
same lines."""
import re
import subprocess
from pathlib import Path

import pytest

from test_tracer import build

ROOT = Path(__file__).resolve().parent.parent


def fold_program() -> str:
    text = (ROOT / "docs" / "output.md").read_text()
    section = text.split("## Flame graphs from stacks", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"```awk\n(.*?)```", section, re.S)
    assert m, "docs/output.md's flame graph section has no ```awk block"
    return m.group(1)


def fold(text: str) -> list:
    proc = subprocess.run(["awk", fold_program()], input=text, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


# The workload's frames (frame pointers kept: `workload stack`), named while
# it lives: the maps are printed from its plyc_stack_done, before it exits.
SCRIPT = """\
uprobe:{w}:plyc_stack_leaf {{ @[ustack] = count(); @k[comm, ustack(3)] = count(); }}
uprobe:{w}:plyc_stack_done {{ print(@); print(@k); clear(@); clear(@k); exit(); }}
"""
WANT = [r"main\+\d+;plyc_stack_run\+\d+;plyc_stack_outer\+\d+;plyc_stack_leaf\+0 3",
        r"plyc-work;plyc_stack_run\+\d+;plyc_stack_outer\+\d+;plyc_stack_leaf\+0 3"]


def test_fold_made_up_dumps():
    """Any map's name, a key's values before the stack as the root, two
    stacks in a key (the kernel's after the user's, as they ran), blank and
    perf-mode lines, a dump's other maps and lines left alone."""
    dump = ("Attaching 1 probe...\n@x: 3\n@[\n    leaf+0\n    mid+4\n    root+9\n]: 12\n"
            "@by_comm[bash, \n        vfs_read+0\n        ksys_read+5\n, \n"
            "        read+20\n        main+7\n]: 2\n"
            "@p[\n\tffffffff81000000 vfs_read+0 ([kernel.kallsyms])\n\n]: 1\n@n[1]: 4\n")
    assert fold(dump) == ["root+9;mid+4;leaf+0 12",
                          "bash;main+7;read+20;ksys_read+5;vfs_read+0 2",
                          "ffffffff81000000 vfs_read+0 ([kernel.kallsyms]) 1"]


@pytest.mark.bpf
def test_fold_a_tracers_stacks(tmp_path, workload):
    tracer = build(tmp_path, SCRIPT.format(w=workload), suffix=".bt")
    proc = subprocess.run([tracer, "-c", f"{workload} stack 3 500"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    folded = fold(proc.stdout)
    assert len(folded) == 2 and all(re.fullmatch(w, x) for w, x in zip(WANT, folded)), proc.stdout


@pytest.mark.bpf
def test_fold_as_bpftrace_027s_dump(tmp_path, workload, bpftrace27):
    script = tmp_path / "stacks.bt"
    script.write_text(SCRIPT.format(w=workload))
    tracer = build(tmp_path, script.read_text(), suffix=".bt")
    ours = subprocess.run([tracer, "-c", f"{workload} stack 3 500"], capture_output=True, text=True, timeout=60)
    theirs = subprocess.run(bpftrace27(["-c", f"{workload} stack 3 500", str(script)]), capture_output=True,
                            text=True, timeout=120)
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    assert fold(ours.stdout) == fold(theirs.stdout)
    assert len(fold(theirs.stdout)) == 2
