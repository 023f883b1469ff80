"""The range of every size option, from what the tracer can use and the
kernel can allocate (docs/safety.md): a value outside is refused at
build time, naming the option, instead of a compiler running for minutes
or a tracer that cannot load."""
from __future__ import annotations

import math
from typing import Optional

# Default sizes; `plyc build --map-entries/--buffer-size/--stack-entries`
# change them (codegen/resources.py uses them; here so that the command
# line needs nothing of the code generator to state them).
DEFAULT_MAP_ENTRIES = 4096
DEFAULT_HIST_ENTRIES = 1024      # a quantize value is 520 bytes (resources.storage(): shared, or per CPU)
DEFAULT_BUFFER = 1 << 20         # ring buffer bytes
DEFAULT_STACK_ENTRIES = 4096

# A string is held whole in a per-CPU scratch slot, at most 32 KiB
# (codegen/render.py: SCRATCH_SLOT_MAX).
STRSIZE = (1, 32768)
# A map's entries: the kernel takes a u32, but a hash map's memory is
# allocated at load: 2^24 entries of small keys is already about 1 GiB.
MAP_ENTRIES = (1, 1 << 24)
# A quantize/lquantize entry is 512 bytes or more, per CPU.
HIST_ENTRIES = (1, 1 << 20)
# A stack map's entry holds up to 127 frames (about 1 KiB each).
STACK_ENTRIES = (1, 1 << 18)
# The output ring buffer: a power of two from one page to 1 GiB.
BUFFER_SIZE = (4096, 1 << 30)
# argdist: seconds between reports and the number of reports (the
# runtime's int), a pid or tid (the kernel's PID_MAX_LIMIT).
INTERVAL = (1, 86400 * 366)
COUNT = (1, (1 << 31) - 1)
PID = (1, 1 << 22)


def check(option: str, value, bounds: tuple) -> Optional[str]:
    """None when value is in bounds, else the message naming option and range."""
    low, high = bounds
    if isinstance(value, float) and not math.isfinite(value):
        return f"{option} must be a finite number from {low} to {high}"
    if not low <= value <= high:
        return f"{option} must be from {low} to {high}, not {value}"
    return None


def check_buffer(option: str, value: int) -> Optional[str]:
    return check(option, value, BUFFER_SIZE) or (
        f"{option} must be a power of two, not {value}" if value & (value - 1) else None)
