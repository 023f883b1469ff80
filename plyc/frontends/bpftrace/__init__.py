"""bpftrace's language as a plyc front end: text -> bpftrace AST (parser.py,
lexer.py, probes.py, ast.py) -> core IR (lower.py: bpftrace's rules and
types; specs.py: its probe specs in plyc's providers' spelling)."""
from __future__ import annotations

from .lower import lower
from .parser import parse

__all__ = ["lower", "parse"]
