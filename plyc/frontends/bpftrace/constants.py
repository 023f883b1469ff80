"""Names bpftrace resolves that are neither variables nor the script's own
#defines: the kernel's enumerators through BTF (`TCP_SYN_SENT`,
`SKB_DROP_REASON_NOT_SPECIFIED`), which bpftrace 0.17 resolves without any
#include. The constants of the headers a script #includes are the C
compiler's (headers.py)."""
from __future__ import annotations

from typing import Optional

from ...btf import BTFError


def enumerator(name: str, ktypes) -> Optional[int]:
    """A kernel enumerator's value (None when the kernel's BTF has none of
    that name, or there is no BTF to read)."""
    found = enumerator_of(name, ktypes)
    return None if found is None else found[0]


def enumerator_of(name: str, ktypes) -> Optional[tuple]:
    """(value, enum type id) of a kernel enumerator, or None."""
    try:
        return ktypes.btf.enumerator(name)
    except (BTFError, OSError):
        return None
