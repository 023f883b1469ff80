"""The IR of a few scripts (tests/golden/ir/*.ply), as `plyc emit --stage ir`
prints it (after the optimising passes), against the .ir file beside each.
After a change that means to alter the IR: `make golden` (python3 tests/test_golden.py --update), then
review the diff."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "ir"
ENV = {"WHO": "world"}      # the scripts' $NAME values


def ir_text(script: Path) -> str:
    sys.path.insert(0, str(ROOT))
    from plyc import driver
    from plyc.ir.dump import dump
    from plyc.ir.opt import optimize
    source = script.read_text()
    program = driver.parse(source, script.name)
    return dump(optimize(driver.analyze(program, source, script.name, driver.Options(env=ENV))))


@pytest.mark.parametrize("script", sorted(GOLDEN.glob("*.ply")), ids=lambda p: p.stem)
def test_ir_golden(script):
    want = script.with_suffix(".ir")
    assert want.exists(), f"no {want.name}: run make golden"
    assert ir_text(script) == want.read_text()


def update() -> None:
    for script in sorted(GOLDEN.glob("*.ply")):
        script.with_suffix(".ir").write_text(ir_text(script))
        print(f"wrote {script.with_suffix('.ir').relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python3 tests/test_golden.py --update")
    update()
