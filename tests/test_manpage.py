"""`man plyc` and plyc's bash completion (plyc/manpage.py writes both from
the argument parsers; the package installs them, tests/test_install.py):
the files in the checkout are what the parsers say now (rewrite them with
`python3 -m plyc.manpage`), the page renders without a warning and names
every command and option, and the completion completes commands, options,
their choices and, for `plyc list`, this machine's probes through `plyc list`
itself."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from plyc import manpage
from plyc.cli import parser

ROOT = Path(__file__).resolve().parent.parent


def test_the_files_are_what_the_parsers_say():
    for path, text in manpage.outputs().items():
        assert (ROOT / path).read_text() == text, \
            f"{path} is stale: python3 -m plyc.manpage writes it again from the parsers"


def test_the_page_renders_and_names_every_option():
    if not shutil.which("groff"):
        pytest.fail("groff is not installed (man-db's dependency)")
    proc = subprocess.run(["groff", "-man", "-Tutf8", "-wall", str(ROOT / manpage.MAN_PAGE)],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, LC_ALL="C.UTF-8"))
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    text = subprocess.run(["col", "-bx"], input=proc.stdout, capture_output=True, text=True).stdout
    ap = parser()
    for name, p in ap.commands.items():
        assert f"plyc {name} -" in text, name
        for a in p._actions:
            for opt in a.option_strings:
                assert opt in text, (name, opt)
    assert "--dry-run" in text and "FILES" in text


def complete(line: str) -> list:
    """What the completion offers after `line` (the cursor at its end), as
    bash would call it: COMP_WORDS split at spaces and at ':' (bash's
    COMP_WORDBREAKS)."""
    words = line.replace(":", " : ").split(" ")
    script = f"""
source {ROOT / manpage.COMPLETION}
plyc() {{ {sys.executable} -m plyc "$@"; }}
COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=({' '.join(repr(w) for w in words)})
COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
_plyc
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    # from an empty folder: the checkout's own files (a `build/` of `pip install .`) are
    # replies too where a script name may go
    with tempfile.TemporaryDirectory() as cwd:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [x for x in proc.stdout.splitlines() if x]


def test_completion_of_commands_options_and_choices():
    assert complete("plyc bu") == ["build"]
    assert "--target" in complete("plyc build --t")
    assert complete("plyc build --target aa") == ["aarch64"]
    assert complete("plyc build --libc m") == ["musl"]
    assert set(complete("plyc list --")) >= {"--btf", "--details"}
    assert set(complete("plyc ")) >= {"build", "run", "list", "check"}


def test_completion_of_a_script_to_list(tmp_path):
    """`plyc list trace.bt` lists the script's probes: its file completes."""
    (tmp_path / "trace.bt").write_text("BEGIN { }\n")
    (tmp_path / "other.txt").write_text("")
    assert complete(f"plyc list {tmp_path}/") == [f"{tmp_path}/trace.bt"]


def test_completion_of_file_names_with_spaces_and_globs(tmp_path):
    """COMPREPLY from compgen's lines, one reply each: a name with a
    space is one reply, a name with `*` is not expanded as a glob (was:
    COMPREPLY=($(compgen -f ...)), split at spaces and globbed)."""
    for name in ("my trace.bt", "a*.bt", "ab.bt", "abc.ply"):
        (tmp_path / name).write_text("BEGIN { }\n")
    for cmd in ("plyc build", "plyc", "plyc build -o", "plyc list"):
        assert complete(f"{cmd} {tmp_path}/my") == [f"{tmp_path}/my trace.bt"], cmd
        assert sorted(complete(f"{cmd} {tmp_path}/a")) == sorted(f"{tmp_path}/{n}" for n in ("a*.bt", "ab.bt", "abc.ply")), cmd
    # `plyc list`: a folder on the way to a script completes too
    (tmp_path / "sub dir").mkdir()
    assert complete(f"plyc list {tmp_path}/su") == [f"{tmp_path}/sub dir"]
    # a glob character in the word typed is a character: no other file matches
    assert complete(f"plyc build {tmp_path}/a*") == [f"{tmp_path}/a*.bt"]


def test_completion_of_probes_asks_plyc_list():
    """The pattern past bash's split at ':'; the replies are the part after
    the last ':' (bash keeps the rest of the word)."""
    assert complete("plyc list tracep") == ["tracepoint:"]
    assert complete("plyc list tracepoint:syscalls:sys_enter_opena") == ["sys_enter_openat", "sys_enter_openat2"]
    assert "syscalls:sys_enter_openat" in complete("plyc list tracepoint:sysc")


def test_the_page_names_every_option_a_tracer_takes(tmp_path):
    """The tracer's options (its -h, from runtime-c/load/loader.c) all in
    the page's "THE TRACER'S OPTIONS"."""
    import re
    from test_tracer import build
    page = (ROOT / manpage.MAN_PAGE).read_text().replace("\\-", "-")
    section = page.split(".SH THE TRACER'S OPTIONS", 1)[1].split(".SH", 1)[0]
    for suffix in (".ply", ".bt"):
        tracer = build(tmp_path, "BEGIN { exit(); }\n" if suffix == ".bt" else "BEGIN { exit(0); }\n",
                       suffix=suffix, name=f"t{suffix[1:]}")
        helptext = subprocess.run([tracer, "-h"], capture_output=True, text=True, timeout=60).stdout
        options = set(re.findall(r"^\s+(-\w|--[\w-]+)", helptext, re.M))
        assert options, helptext
        missing = sorted(o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", section))
        assert not missing, f"the tracer's {missing} are not in the man page"
