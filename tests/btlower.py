"""The bpftrace front end's tests lower a script named tool.bt: into IR,
or into the rendered text of the errors it is refused with."""
import pytest

from plyc import driver
from plyc.diag import PlycError


def lower(src: str, **options):
    return driver.lower(src, "tool.bt", driver.Options(**options))


def err(src: str, **options) -> str:
    with pytest.raises(PlycError) as info:
        lower(src, **options)
    return info.value.render()
