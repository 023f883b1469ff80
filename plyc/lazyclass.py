"""@node: dataclass(eq=False), made the first time the class is instantiated.

The IR (ir/nodes.py) and the bpftrace AST (frontends/bpftrace/ast.py) are
~100 dataclasses, and dataclass() writes and compiles each one's __init__
and __repr__ when its module is imported: about 0.5 ms a class, most of
`plyc check`'s import time, for classes a one-liner mostly never makes
(docs/performance.md, "At the desk"). A class decorated here is a plain
class until its first instance: then dataclass(eq=False) makes it (its
bases first), and the instance is made by the generated __init__. What
needs the dataclass before any instance exists (dataclasses.fields() of
the class itself, a field's default read from the class) must call
made(cls) first.

A class that defines its own __init__ is made at once (the stub would be
its __init__)."""
from __future__ import annotations

import threading
from dataclasses import dataclass

_lock = threading.RLock()
_pending: set = set()


def made(cls: type) -> type:
    """cls (a @node class) made into its dataclass now, its @node bases first."""
    if cls not in _pending:
        return cls
    with _lock:
        if cls in _pending:
            for base in reversed(cls.__mro__[1:]):
                made(base)
            del cls.__init__          # the stub: dataclass() sets no __init__ a class already has
            _pending.discard(cls)
            if not cls.__doc__:
                # dataclass() would write one from inspect.signature (a tenth
                # of a ms a class, most of a node's making now that its methods'
                # code comes from the cache, plyc/dccache.py): nothing reads it
                cls.__doc__ = cls.__name__
            dataclass(eq=False)(cls)
    return cls


def node(cls: type) -> type:
    """dataclass(eq=False)(cls), made when cls is first instantiated. A
    subclass must be a @node too (a plain dataclass() of it would not see
    the fields of a base not made yet)."""
    if "__init__" in cls.__dict__:
        return dataclass(eq=False)(cls)

    def __init__(self, *args, **kwargs):
        # the stub, until made(cls) replaces it; self may be a subclass's
        made(cls)
        cls.__init__(self, *args, **kwargs)

    cls.__init__ = __init__
    _pending.add(cls)
    return cls
