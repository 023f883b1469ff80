"""The C templates (plyc/templates/*.j2), rendered.

Each is compiled by jinja2 once into plyc's cache (templates/NAME-KEY.code:
the compiled Python, marshalled) and run on jinjart's small runtime, so a
build imports no jinja2: its import was a tenth of a new one-liner's
`plyc run` (docs/performance.md, "At the desk"). A template whose compiled
code uses more than jinjart runs, a render jinjart gives up on (an
undefined variable: jinja2's error), or no usable cache: jinja2 renders it,
with its own compiled templates kept in the cache (bytecode)."""
from __future__ import annotations

import functools
import hashlib
import marshal
import os
import re
import sys
import types
from pathlib import Path
from typing import Callable, Optional

from .. import package_dir
from . import jinjart
from .cescape import C

# What a template may print as it is: a number, or a C identifier or
# number token; any other text must be C (cescape: c_string, c_comment, code).
TOKEN = re.compile(r"[A-Za-z0-9_]+")


class UnescapedText(Exception):
    pass


def finalize(value):
    """Every {{ }} of a C template: text from outside plyc reaches the C only
    through cescape, so a file name or label cannot end a string or comment."""
    if isinstance(value, (C, int, float)) or (isinstance(value, str) and TOKEN.fullmatch(value)):
        return value
    raise UnescapedText(f"a C template printed text that is not escaped: {value!r}")


# The environment's options: a compiled template is the same code only under
# the same ones (they are part of its cache key).
OPTIONS = dict(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


def _folder() -> Optional[Path]:
    """plyc's cache folder for compiled templates; None without a usable one."""
    from ..cachedir import CacheError, cache_dir, trusted_dir
    try:
        folder = cache_dir() / "templates"
        folder.mkdir(mode=0o700, exist_ok=True)
        trusted_dir(folder, "plyc's compiled templates folder")
    except (CacheError, OSError):
        return None
    return folder


@functools.lru_cache(maxsize=1)
def jinja_env():
    """jinja2's environment for the templates, its compiled templates kept in
    the cache (jinja2's bytecode cache: a file of our own only, as the
    grammar's, cachedir.untrusted_file)."""
    import jinja2

    class TemplateCache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket):
            from ..cachedir import untrusted_file
            if untrusted_file(Path(self._get_cache_filename(bucket))) is None:
                super().load_bytecode(bucket)

        def dump_bytecode(self, bucket):
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass        # a full or read-only cache: compiled again next time, not an error

    folder = _folder()
    loader = jinja2.FileSystemLoader(os.path.join(package_dir(), "templates"))
    return jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, finalize=finalize,
                              bytecode_cache=TemplateCache(str(folder)) if folder else None, **OPTIONS)


def _jinja_version() -> str:
    """The installed jinja2's version, read from its package without
    importing it (a new jinja2 may compile the templates otherwise)."""
    import importlib.util
    spec = importlib.util.find_spec("jinja2")
    try:
        with open(spec.origin, encoding="utf-8") as f:
            m = re.search(r'^__version__\s*=\s*["\']([^"\']+)', f.read(), re.M)
    except (OSError, AttributeError, TypeError):
        return "?"
    return m.group(1) if m else "?"


def _key(name: str, text: str) -> str:
    return hashlib.sha256(repr((name, text, sorted(OPTIONS.items()), jinjart.ABI, _jinja_version(),
                                sys.version)).encode()).hexdigest()[:20]


def _load(path: Path):
    from ..cachedir import untrusted_file
    if untrusted_file(path) is not None:
        return None          # absent, or not a file only we could have written: compiled again
    try:
        with open(path, "rb") as f:
            code = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def _compile(name: str, path: Optional[Path]):
    """jinja2's compiled code of template name, as jinjart runs it, kept at
    path; None when jinjart cannot run it."""
    env = jinja_env()
    source, filename, _ = env.loader.get_source(env, name)
    python = env.compile(source, name, filename, raw=True)
    if not jinjart.supported(python):
        return None
    code = jinjart.executable(python, name)
    if path is not None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            with open(tmp, "wb") as f:
                marshal.dump(code, f)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass        # a full or read-only cache: compiled again next time
    return code


@functools.lru_cache(maxsize=None)
def _renderer(name: str) -> Optional[Callable[[dict], str]]:
    with open(os.path.join(package_dir(), "templates", name), encoding="utf-8") as f:
        text = f.read()
    folder = _folder()
    path = folder / f"{name}-{_key(name, text)}.code" if folder else None
    code = _load(path) if path else None
    if code is None:
        code = _compile(name, path)
    return jinjart.renderer(code, finalize) if code is not None else None


def render(template: str, /, **variables) -> str:
    """The template rendered with variables: by its compiled code on
    jinjart, or by jinja2 (see the module's comment)."""
    fast = _renderer(template)
    if fast is not None:
        try:
            return fast(variables)
        except Exception:       # noqa: BLE001  (jinja2 renders it, or raises its own error)
            pass
    return jinja_env().get_template(template).render(**variables)
