"""The bpftrace front end's tests lower a script named tool.bt: into IR,
or into the rendered text of the errors it is refused with."""
import pytest

from plyc import driver
from plyc.diag import PlycError


def lower(src: str, unsafe: bool = False, **options):
    """unsafe: bpftrace's front-end option (--unsafe)."""
    return driver.lower(src, "tool.bt", driver.Options(frontend={"unsafe": unsafe}, **options))


def err(src: str, **options) -> str:
    with pytest.raises(PlycError) as info:
        lower(src, **options)
    return info.value.render()
