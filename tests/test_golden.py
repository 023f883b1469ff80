"""The IR of a few scripts in tests/golden/ir/, as `plyc emit --stage ir`
prints it (after the optimising passes), against the .ir file beside each: scripts of every front end in
the registry (*.ply, *.bt) and bcc argdist command lines (*.argdist: the
arguments of `plyc argdist` as shell words, lines starting with # left out). After a
change that means to alter the IR: `make golden` (python3
tests/test_golden.py --update), then review the diff."""
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plyc import driver  # noqa: E402
from plyc.frontends import registry  # noqa: E402
from plyc.ir.dump import dump  # noqa: E402
from plyc.ir.opt import optimize  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "ir"
ENV = {"WHO": "world"}      # the scripts' $NAME values
SUFFIXES = registry.suffixes() + (".argdist",)


def argdist_words(text: str) -> list:
    return shlex.split("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))


def ir_text(script: Path) -> str:
    source = script.read_text()
    if script.suffix == ".argdist":
        from plyc.commands.argdist import parse_args
        from plyc.frontends.argdist import lower_args
        lowered, _ = lower_args(parse_args(argdist_words(source)))
        return dump(optimize(lowered.program))
    program = driver.parse(source, script.name)
    return dump(optimize(driver.analyze(program, source, script.name, driver.Options(env=ENV))))


def scripts() -> list:
    return sorted(p for p in GOLDEN.iterdir() if p.suffix in SUFFIXES)


def test_every_language_has_goldens():
    assert {p.suffix for p in scripts()} == set(SUFFIXES)


@pytest.mark.parametrize("script", scripts(), ids=lambda p: p.name)
def test_ir_golden(script):
    want = script.with_suffix(".ir")
    assert want.exists(), f"no {want.name}: run make golden"
    assert ir_text(script) == want.read_text()


def test_no_golden_without_its_script():
    stems = {p.stem for p in scripts()}
    assert len(stems) == len(scripts()), "two scripts share a stem: their .ir would collide"
    assert {p.stem for p in GOLDEN.glob("*.ir")} == stems


def update() -> None:
    for script in scripts():
        script.with_suffix(".ir").write_text(ir_text(script))
        print(f"wrote {script.with_suffix('.ir').relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python3 tests/test_golden.py --update")
    update()
