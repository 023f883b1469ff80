"""pycparser's parse with its own failures as its ParseError. pycparser 3's
parser raises other exceptions on some text that is not C (two records as
one member's type, `struct { int b; } union { long d; };`: AttributeError),
where every caller reports a ParseError at the script's place."""
from __future__ import annotations

# what pycparser's parser raised from inside itself on text that is not C
INTERNAL = (AttributeError, TypeError, IndexError, KeyError, ValueError, AssertionError)


def parse(text: str, filename: str):
    """The c_ast.FileAST of text; c_parser.ParseError where it is not C."""
    from pycparser import c_parser
    try:
        return c_parser.CParser().parse(text, filename)
    except c_parser.ParseError:
        raise
    except INTERNAL as err:
        raise c_parser.ParseError(f"{filename}: {err}") from None
