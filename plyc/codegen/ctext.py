"""C text the code generator's modules share: integer literals, memory
copies clang can inline in a BPF program, parentheses."""
from __future__ import annotations

from typing import Optional

from .cescape import c_int  # noqa: F401 (for the modules that take their C text from here)


# BPF programs can't call memcpy/memset: clang inlines them, in at most 128
# stores of the width the alignment allows. Larger ones are split.
MAX_STORES = 128
MEMSET_FENCE = 'asm volatile("" ::: "memory");\t/* or clang merges the memsets back */'


def words(size: int) -> int:
    return (size + 7) // 8 * 8


def alignment(offset: int, base: int = 8) -> int:
    """What clang knows of the alignment of `offset` bytes into an object
    aligned to `base` (at most 8)."""
    a = min(base, 8)
    while offset % a:
        a //= 2
    return a


def offset_ptr(ptr: str, off: int, align: int, const: bool = False) -> str:
    """`ptr` + `off` bytes, with the alignment clang can't see through the
    arithmetic (it would copy bytes one by one)."""
    p = f"(const char *){ptr} + {off}" if const else f"(char *){ptr} + {off}"
    return f"__builtin_assume_aligned({p}, {align})" if align > 1 else p


def copy_stmts(dst: str, dsize: int, src: str, ssize: int, offset: int = 0, base: int = 8) -> list:
    """Copy an 8-aligned array into `dst` (at `offset` in an object aligned
    to `base`), zero-padded."""
    n = min(dsize, ssize)
    stmts = mem_calls("memcpy", dst, src, n, alignment(offset, base))
    if dsize > n:
        tail = alignment(offset + n, base)
        stmts += mem_calls("memset", offset_ptr(dst, n, tail), None, dsize - n, tail)
    return stmts


def mem_calls(fn: str, dst: str, src: Optional[str], n: int, align: int = 8) -> list:
    """__builtin_memcpy (src, 8-aligned) or __builtin_memset (src None) of
    n bytes at dst (`align`-aligned), split so that clang inlines each piece."""
    chunk = MAX_STORES * align
    out = []
    for off in range(0, n, chunk):
        if off and src is None:
            out.append(MEMSET_FENCE)
        d = offset_ptr(dst, off, align) if off else dst
        arg = "0" if src is None else (offset_ptr(src, off, 8, True) if off else src)
        out.append(f"__builtin_{fn}({d}, {arg}, {min(chunk, n - off)});")
    return out


def bare(x: str) -> str:
    """x without the parentheses around all of it."""
    while x.startswith("(") and x.endswith(")"):
        depth = 0
        for i, ch in enumerate(x):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                break
        if i != len(x) - 1:
            break
        x = x[1:-1]
    return x
