"""The ply front end: text -> ply AST (parser.py, grammar.lark) -> core IR
(lower.py: ply's rules and types)."""
from __future__ import annotations

from .lower import lower
from .parser import parse

__all__ = ["lower", "parse"]
