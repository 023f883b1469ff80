"""bpftrace's language as a plyc front end: parser (parser.py, lexer.py,
probes.py) into a tree of its own (ast.py)."""
from .parser import parse  # noqa: F401
