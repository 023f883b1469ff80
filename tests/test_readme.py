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


def test_readme_installs_into_a_venv():
    """Debian 12's python3 refuses a bare `pip install .` (externally managed)."""
    section = README.read_text().split("## Install\n", 1)[1].split("\n## ", 1)[0]
    commands = [line.split("#")[0].strip() for line in section.split("```sh\n", 1)[1].split("```")[0].splitlines()]
    assert commands[0].startswith("python3 -m venv ")
    venv = commands[0].split()[-1]
    assert all(c.startswith(f"{venv}/bin/") for c in commands[1:] if c), commands
    assert "externally-managed-environment" in section and "pipx install" in section


# --- sizes: quoted in one place, held to what a build makes --------------------

SIZE = re.compile(r"\d{1,3}(?:,\d{3})+|\d{4,}")


def quoted_sizes() -> dict:
    """docs/toolchain.md's "Sizes" table: target -> (glibc, musl) bytes."""
    text = (ROOT / "docs" / "toolchain.md").read_text().split("\n## Sizes\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    def size(cell):     # "—": no build with that C library (armv6's glibc)
        return None if cell.strip() == "—" else int(cell.strip().replace(",", ""))
    return {r[0].split()[0]: tuple(size(c) for c in r[1:3]) for r in rows[1:]}


def sizes_in(text: str) -> list:
    """(as written, bytes) of each size the prose of a page gives: 1,466,568
    (bytes), 423 KB, 1.4 MB."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    out = [(m, int(m.replace(",", ""))) for m in re.findall(r"\b\d{1,3}(?:,\d{3})+\b", text)]
    for number, unit in re.findall(r"\b(\d+(?:\.\d+)?) ?(KB|kB|KiB|MB|MiB)\b", text):
        out.append((f"{number} {unit}", float(number) * (1000 if unit[0] in "kK" else 1000 ** 2)))
    return out


def test_sizes_are_quoted_in_one_place():
    """A tracer's size appears in docs/toolchain.md's table only: no other
    page gives one near any of its numbers (performance.md's dated
    measurements, as measured then, aside)."""
    quoted = quoted_sizes()
    sys.path.insert(0, str(ROOT))
    from plyc.arch import ARCHES
    assert set(quoted) == set(ARCHES)
    sizes = [n for pair in quoted.values() for n in pair if n is not None]
    for page in (README, ROOT / "docs" / "usage.md", ROOT / "docs" / "install.md"):
        near = [w for w, n in sizes_in(page.read_text()) if any(abs(n - s) <= s * 0.1 for s in sizes)]
        assert not near, f"{page.name} quotes a tracer's size: {near} (link to docs/toolchain.md#sizes instead)"


def test_the_quoted_sizes_are_what_a_build_makes(tmp_path):
    """This machine's quoted sizes (x86_64's) are within 5% of a build of
    today (the musl libraries: built once into plyc's cache, as
    tests/test_musl.py's)."""
    sys.path.insert(0, str(ROOT))
    from plyc.arch import host_target
    glibc, musl = quoted_sizes()[host_target() or "x86_64"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for libc, quoted in (("glibc", glibc), ("musl", musl)):
        out = tmp_path / libc
        proc = subprocess.run([sys.executable, "-m", "plyc", "build", "--libc", libc, "examples/syscall-count.ply",
                               "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stderr
        size = out.stat().st_size
        assert abs(size - quoted) <= quoted * 0.05, \
            f"{libc}: a build makes {size:,} bytes, docs/toolchain.md says {quoted:,}: measure and update it"


# --- setup: the demo's packages, the tests' packages ---------------------------

SETUP = ROOT / "scripts" / "setup.sh"


def setup_list(name: str) -> list:
    return re.search(rf'^{name}="([^"]*)"', SETUP.read_text(), re.M).group(1).split()


def test_make_demo_installs_only_what_the_demo_needs():
    demo, test = setup_list("DEMO_APT"), setup_list("TEST_APT")
    test_only = re.compile(r"qemu|-linux-gnu|-cross$|prometheus|debootstrap|bpftrace|dwarves|systemtap|bpftool")
    assert not [p for p in demo if test_only.search(p)], demo
    assert {"qemu-system-x86", "prometheus", "debootstrap", "bpftrace", "gcc-aarch64-linux-gnu"} <= set(test)
    # what docs/install.md says a build for this machine needs
    needed = re.search(r"`apt-get install ([^`]*)`", (ROOT / "docs" / "install.md").read_text()).group(1).split()
    assert set(needed) <= set(demo), set(needed) - set(demo)
    assert not {"pytest", "hypothesis", "ziglang"} & {p.split(">")[0] for p in setup_list("DEMO_PY")}
    make = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "scripts/setup.sh demo" in make.stdout and "setup.sh test" not in make.stdout, make.stdout
    make = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "scripts/setup.sh test" in make.stdout, make.stdout


def test_setup_demo_is_idempotent():
    """On a machine set up already: nothing installed, one line."""
    for _ in range(2):
        proc = subprocess.run(["sh", str(SETUP), "demo"], capture_output=True, text=True, timeout=300)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "setup: ok (demo)\n", ""), proc.stdout + proc.stderr


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
