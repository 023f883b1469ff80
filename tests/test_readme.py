"""The README is the front door: short, every docs/ page reachable from it,
every link in the docs resolving, and every command its examples show
working as shown (run here, their output held to the README's lines with
counts, times, bars and quoted labels masked), so the examples can't rot."""
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def markdown_links(path: Path):
    text = path.read_text()
    # Links inside code blocks are not links.
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return LINK.findall(text)


@pytest.mark.parametrize("page", [README, ROOT / "bench" / "README.md", *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in markdown_links(page):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{page.name}: links to nothing: {broken}"


def test_readme_links_every_docs_page():
    linked = {(ROOT / t.split("#")[0]).resolve() for t in markdown_links(README)}
    missing = [p.name for p in DOCS if p.resolve() not in linked]
    assert not missing, f"docs/ pages the README does not point to: {missing}"


def test_readme_is_short_and_keeps_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) < 150
    section = text.split("## The two commands\n", 1)[1].split("\n## ", 1)[0]
    commands = [line.split("#")[0].strip() for line in section.split("```sh\n", 1)[1].split("```")[0].splitlines()]
    assert [c for c in commands if c] == ["make demo", "make test"]
    # CI runs the README's test command.
    assert "make test" in (ROOT / ".ci" / "run").read_text().splitlines()


def test_testing_doc_says_how_skips_are_treated():
    # what CI=true does with a skip, and the allow-list, live in "## Skips"
    text = (ROOT / "docs" / "testing.md").read_text()
    skips = text.split("\n## Skips\n", 1)[1]
    assert "CI=true" in skips and "tests/skips.py" in skips


# --- the examples, run -------------------------------------------------------

def examples():
    """(commands, expected output lines) for each code block of README.md that
    shows commands (`$ ` lines): a command's output is the lines after it."""
    blocks, block = [], None
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            blocks, block = (blocks + [block], None) if block is not None else (blocks, [])
        elif block is not None:
            block.append(line)
    for block in blocks:
        steps = []
        for line in block:
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        if steps:
            yield steps


def shape(line: str) -> str:
    """What of a line does not depend on the run: counts, times and sizes
    masked, a histogram row's bucket and bar dropped, quoted labels emptied."""
    line = re.sub(r"^\s*\[[^\]]*\]", "[]", line)
    line = re.sub(r"┤[^│]*│", "┤│", line)
    line = re.sub(r'="[^"]*"', '=""', line)
    line = re.sub(r"\d+", "0", line)
    return " ".join(line.split())


def matches(expected: str, lines: list) -> bool:
    # "..." in a shown line stands for the part of it left out.
    pattern = re.compile(".*".join(re.escape(part) for part in shape(expected).split("...")))
    return any(pattern.fullmatch(shape(line)) for line in lines)


def shell_command(command: str, port: int) -> str:
    command = re.sub(r"^sudo ", "", command)
    command = re.sub(r"^plyc ", f"{sys.executable} -m plyc ", command)
    # curl is not among what setup installs: the same GET, from Python.
    command = re.sub(r"^curl -s (\S+)", lambda m: f"{sys.executable} -c \"import sys, urllib.request; "
                     f"sys.stdout.write(urllib.request.urlopen('http://{m.group(1)}').read().decode())\"", command)
    # The README's port may be taken here: a free one instead.
    return command.replace(":9100", f":{port}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tour_dir(tmp_path_factory):
    # One folder for the whole README, as a reader has: the metrics example
    # runs the tracer the musl example built beside its small twin.
    path = tmp_path_factory.mktemp("readme")
    (path / "examples").symlink_to(ROOT / "examples")
    return path


@pytest.mark.bpf
@pytest.mark.parametrize("steps", list(examples()), ids=lambda steps: steps[0][0].split(" -o ")[0][:60])
def test_readme_example_runs_as_shown(steps, tour_dir):
    tmp_path = tour_dir
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    port = free_port()
    background = []
    try:
        for command, expected in steps:
            cmd = shell_command(command, port)
            if cmd.endswith("&"):
                proc = subprocess.Popen(cmd[:-1], shell=True, cwd=tmp_path, env=env, text=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
                background.append(proc)
                line = proc.stderr.readline()   # the tracer says where it serves, once it does
                assert matches(expected[0], [line]), f"{command}: {line!r}"
                continue
            proc = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=900)
            assert proc.returncode == 0, f"{command}: exit {proc.returncode}\n{proc.stderr}"
            lines = (proc.stdout + proc.stderr).splitlines()
            missing = [e for e in expected if e.strip() != "..." and e.strip() and not matches(e, lines)]
            assert not missing, f"{command}: shown but not printed: {missing}\n--- printed:\n" + "\n".join(lines)
    finally:
        for proc in background:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=10)
