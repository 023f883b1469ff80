"""A C type name as a cast or sizeof writes it, in the core's terms: each
front end builds one from its own spelling (bpftrace's uint32 is u32)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TypeRef:
    words: tuple            # ("struct", "file"), ("unsigned", "long"), ("u32",)
    pointers: int = 0
    span: object = None

    def __str__(self) -> str:
        return " ".join(self.words) + (" " + "*" * self.pointers if self.pointers else "")
