"""`python3 -m plyc build|argdist ... -o OUT` for the tests, each distinct
build done once a test run: many tests build the same script the same way
(every runtime case again with old-kernel fallbacks, every guest case once
per kernel), and a tracer is a function of its inputs (plyc's output is
deterministic). A build's inputs are its arguments, with each file named
there by name and content, the output's name (the tracer's name) and the
environment; a successful build is kept under them in $PLYC_TEST_BUILDS
(made by conftest.py for the run) and copied to where the next identical
build asks for it, with the output plyc printed. Without
$PLYC_TEST_BUILDS, every build runs."""
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

# Environment entries that change from test to test, or from one xdist
# worker (or pytest run) to another, and reach no build: with them in the
# key, no build would be shared across workers or the two runs of make test.
VOLATILE = ("PYTEST_CURRENT_TEST", "PYTHONPATH")
VOLATILE_PREFIXES = ("PYTEST_XDIST_",)


def _key(cmd: list, cwd, env: dict):
    """The build's inputs as a hash, and the output's path; None for a
    command that is no build."""
    args = [str(a) for a in cmd]
    # --keep's folder of generated files is a product a copy would not give
    if "-o" not in args or not ({"build", "argdist"} & set(args)) or "--keep" in args:
        return None
    out = args.index("-o") + 1
    h = hashlib.sha256()
    for i, arg in enumerate(args):
        path = Path(cwd or ".", arg)
        if i == out:
            h.update(b"out\0" + Path(arg).name.encode())
        elif i > 0 and path.is_file():
            h.update(b"file\0" + path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
        else:
            h.update(b"arg\0" + arg.encode())
        h.update(b"\0")
    for name, value in sorted(env.items()):
        if name not in VOLATILE and not name.startswith(VOLATILE_PREFIXES):
            h.update(f"env\0{name}={value}\0".encode())
    return h.hexdigest()[:32], Path(args[out] if os.path.isabs(args[out]) else Path(cwd or ".", args[out]))


def run(cmd: list, *, cwd=None, env=None, **kw) -> subprocess.CompletedProcess:
    """subprocess.run(cmd, ...) for a plyc build, served from the builds
    already done when an identical one was."""
    store = os.environ.get("PLYC_TEST_BUILDS")
    found = _key(cmd, cwd, os.environ if env is None else env) if store else None
    if not found:
        return subprocess.run(cmd, cwd=cwd, env=env, **kw)
    key, out = found
    entry = Path(store) / key
    text = kw.get("text") or kw.get("universal_newlines")
    if (entry / "tracer").exists():
        shutil.copy2(entry / "tracer", out)
        stdout, stderr = ((entry / name).read_bytes() for name in ("stdout", "stderr"))
        if text:
            stdout, stderr = stdout.decode(), stderr.decode()
        return subprocess.CompletedProcess(cmd, 0, stdout, stderr)
    proc = subprocess.run(cmd, cwd=cwd, env=env, **kw)
    if proc.returncode == 0 and out.is_file() and kw.get("capture_output"):
        # Written aside and renamed into place whole: parallel test runs
        # (pytest-xdist) may build the same tracer at once.
        tmp = Path(f"{entry}.tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        for name, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            (tmp / name).write_bytes(data.encode() if isinstance(data, str) else data)
        shutil.copy2(out, tmp / "tracer")
        try:
            os.rename(tmp, entry)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)   # another worker kept it first
    return proc
