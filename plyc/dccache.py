"""dataclass()'s generated methods, compiled once and kept in plyc's cache.

dataclass() writes each class's __init__, __repr__, __eq__ (and a frozen
class's __setattr__, __delattr__, __hash__) as Python text and exec()s it:
compiling that text, some 250 small functions for the ~80 classes a
one-liner's build makes, was the largest single cost of plyc's start
(docs/performance.md, "At the desk"). install() gives the dataclasses
module an exec() that compiles each text once: the code objects are kept
in the cache (dataclasses-TAG.code: the text, and its code marshalled, each
unmarshalled when first used)
and compiled again only for a text not seen before. The functions are the
same: the text is dataclass()'s, compiled as exec() compiles it.

The file is code plyc runs: loaded only from a folder and a file only we
could have written (cachedir's checks), as the compiled templates are;
written only into a cache folder that is already there."""
import __future__
import builtins
import dataclasses
import marshal
import os
import sys
import types
from typing import Optional

NAME = f"dataclasses-{sys.implementation.cache_tag}.code"
# Texts kept at most (another plyc's classes, old versions': dropped first).
MAX = 2000

_codes: dict = {}
_used: set = set()
_path: Optional[str] = None
_changed = False


# The __future__ flags that change how Python 3 compiles a text, which
# exec() takes from its caller's code: a text is cached only when its caller
# has none, as dataclasses.py has none; it is compiled as before otherwise.
FUTURE_FLAGS = __future__.annotations.compiler_flag | __future__.barry_as_FLUFL.compiler_flag


def _exec(source, globals=None, locals=None, /):
    global _changed
    if isinstance(source, str):
        flags = sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
        if flags:
            # compiled here with the caller's flags (exec() below, called
            # from this module, would take this module's), not cached
            return builtins.exec(compile(source, "<string>", "exec", flags=flags, dont_inherit=True),
                                 globals, locals)
        code = _codes.get(source)
        if type(code) is bytes:          # as loaded: unmarshalled when first used
            try:
                code = _codes[source] = marshal.loads(code)
            except (EOFError, ValueError, TypeError):
                code = None
            if not isinstance(code, types.CodeType):
                code = None
        if code is None:
            # dont_inherit: as exec() compiles it for its caller (no
            # __future__ flags, above), not with this module's
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _codes[source] = code
            _changed = True
        _used.add(source)
        source = code
    return builtins.exec(source, globals, locals)


def _folder() -> Optional[str]:
    """plyc's cache folder when it is there and ours (nothing is made here)."""
    from .cachedir import CacheError, _base, trusted_dir
    from pathlib import Path
    try:
        folder = Path(_base()).absolute()
        if not folder.is_dir():
            return None
        trusted_dir(folder, "plyc's cache")
    except (CacheError, OSError):
        return None
    return str(folder)


def _load(path: str) -> dict:
    from pathlib import Path
    from .cachedir import untrusted_file
    if untrusted_file(Path(path)) is not None:
        return {}
    try:
        with open(path, "rb") as f:
            codes = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items() if isinstance(k, str) and isinstance(v, bytes)}


def install() -> None:
    """From now on, dataclass() compiles each method's text once (above)."""
    global _path
    if getattr(dataclasses, "exec", None) is _exec:
        return
    folder = _folder()
    if folder is not None:
        _path = os.path.join(folder, NAME)
        _codes.update(_load(_path))
    dataclasses.exec = _exec        # found before the builtin by dataclasses' own calls


def save() -> None:
    """The texts compiled in this process added to the file (at exit, and
    before plyc execs a tracer); nothing when none was new."""
    global _changed
    if not _changed or _path is None or not os.path.isdir(os.path.dirname(_path)):
        return
    keep = _codes if len(_codes) <= MAX else {k: _codes[k] for k in _used}
    # each code object marshalled apart: a run unmarshals only those it uses
    codes = {k: v if type(v) is bytes else marshal.dumps(v) for k, v in keep.items()}
    tmp = f"{_path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            marshal.dump(codes, f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, _path)
        _changed = False
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass         # a full or read-only cache: compiled again next time
