"""What the C templates' compiled code runs on, instead of jinja2's runtime.

jinja2 compiles a template into Python (a `root(context)` generator of the
output's pieces) that calls into jinja2.runtime; importing any of jinja2
imports all of it, its compiler and lexer included: a tenth of a new
one-liner's `plyc run` (docs/performance.md, "At the desk"). The templates
are still compiled by jinja2 (templates.py, once, into plyc's cache); this
module runs the compiled code of the few constructs plyc's templates use:
variables, attribute and item access, `if`, `for` with loop.index0 and the
like, the `length` and `default` filters, and the environment's finalize.

supported() reads compiled code and says whether it uses only these;
anything else (a macro, an include, another filter, loop.cycle) keeps the
template on jinja2 itself. An undefined variable, or anything at render
time this module does not do as jinja2 would, raises Unsupported, and the
caller renders with jinja2 instead: the output is jinja2's, or jinja2's
error."""
from __future__ import annotations

import ast
import re
from typing import Callable

# What compiled code this runtime runs: part of the compiled templates'
# cache key (templates.py), raised when supported() lets more through.
ABI = 1


class Unsupported(Exception):
    """Compiled code did something this runtime leaves to jinja2."""


class Undefined:
    """A name or attribute that is not there: jinja2's StrictUndefined fails
    on any use of one; here any use ends the fast render (Unsupported), and
    jinja2 renders the template again and reports it."""

    def __init__(self, hint=None, obj=None, name=None, exc=None):
        self._name = name

    def _fail(self, *args, **kwargs):
        raise Unsupported(f"undefined {self._name!r} used")

    __str__ = __iter__ = __len__ = __bool__ = __eq__ = __ne__ = __hash__ = __contains__ = _fail
    __getattr__ = __getitem__ = __call__ = __add__ = __radd__ = __sub__ = __rsub__ = _fail
    __mul__ = __rmul__ = __lt__ = __le__ = __gt__ = __ge__ = __int__ = __float__ = __neg__ = _fail


class _Missing:
    """A variable the context does not have (jinja2's `missing`)."""

    def __repr__(self):
        return "missing"


missing = _Missing()


class TemplateRuntimeError(Exception):
    """Raised by compiled code for a filter the environment lacks."""


def internalcode(f):
    return f


def str_join(pieces) -> str:
    """`a ~ b`: each piece as str(), joined."""
    return "".join(map(str, pieces))


class LoopContext:
    """A `for` loop's `loop`: its items listed first, so that `last` and
    `length` are known. The attributes are the ones LOOP_ATTRS lists."""

    def __init__(self, iterable, undefined, recurse=None, depth0=0):
        if isinstance(iterable, Undefined) or recurse is not None:
            raise Unsupported("a loop over an undefined value, or a recursive loop")
        self._items = list(iterable)
        self.length = len(self._items)
        self.index0 = -1

    def __iter__(self):
        for i, item in enumerate(self._items):
            self.index0 = i
            yield item, self

    @property
    def index(self):
        return self.index0 + 1

    @property
    def revindex0(self):
        return self.length - self.index

    @property
    def revindex(self):
        return self.length - self.index0

    @property
    def first(self):
        return self.index0 == 0

    @property
    def last(self):
        return self.index == self.length


LOOP_ATTRS = frozenset({"index0", "index", "revindex0", "revindex", "first", "last", "length"})


def _default(value, default_value="", boolean=False):
    if isinstance(value, Undefined) or (boolean and not value):
        return default_value
    return value


FILTERS = {"length": len, "default": _default}


class Environment:
    """The part of jinja2's Environment compiled code calls: finalize,
    attribute and item access as jinja2 does them (an attribute, else an
    item, and the other way round), the undefined type, the filters."""

    undefined = Undefined
    filters = FILTERS

    def __init__(self, finalize: Callable):
        self.finalize = finalize

    @staticmethod
    def concat(pieces) -> str:
        return "".join(pieces)

    def getattr(self, obj, attribute: str):
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return Undefined(obj=obj, name=attribute)

    def getitem(self, obj, argument):
        try:
            return obj[argument]
        except (AttributeError, TypeError, LookupError):
            if isinstance(argument, str):
                try:
                    return getattr(obj, argument)
                except AttributeError:
                    pass
            return Undefined(obj=obj, name=argument)


class Context:
    """The variables render() was given (the templates use no globals)."""

    def __init__(self, variables: dict):
        self.vars = variables

    def resolve_or_missing(self, key: str):
        return self.vars.get(key, missing)


# The names compiled code imports from jinja2.runtime that this module
# provides; the others (Macro, Markup, escape, ...) it must not use.
RUNTIME = {"LoopContext": LoopContext, "Undefined": Undefined, "missing": missing,
           "internalcode": internalcode, "TemplateRuntimeError": TemplateRuntimeError, "str_join": str_join}
JINJA_RUNTIME_NAMES = frozenset({"LoopContext", "Macro", "Markup", "Namespace", "TemplateNotFound",
                                 "TemplateReference", "TemplateRuntimeError", "Undefined", "escape",
                                 "identity", "internalcode", "markup_join", "missing", "str_join",
                                 "cond_expr_undefined", "context"})
ENVIRONMENT_ATTRS = frozenset({"finalize", "getattr", "getitem", "undefined", "concat", "filters"})
LOOP_NAME = re.compile(r"l_\d+_loop")


def _const(node) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def supported(source: str) -> bool:
    """Whether jinja2's compiled source (Environment.compile(raw=True))
    uses only what this module runs."""
    tree = ast.parse(source)
    body = tree.body
    if not body or not isinstance(body[0], ast.ImportFrom) or body[0].module != "jinja2.runtime":
        return False
    for stmt in body[1:]:
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["blocks"]:
            if not (isinstance(stmt.value, ast.Dict) and not stmt.value.keys):
                return False        # blocks: template inheritance
    allowed_uses = set()
    for node in ast.walk(ast.Module(body=body[1:], type_ignores=[])):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Lambda)):
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = node.value.id
            if owner == "environment" and node.attr not in ENVIRONMENT_ATTRS:
                return False
            if owner == "context":
                if node.attr != "resolve_or_missing":
                    return False
                allowed_uses.add(id(node.value))
            if LOOP_NAME.fullmatch(owner):
                return False
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "filters" and getattr(node.value.value, "id", None) == "environment":
            if _const(node.slice) not in FILTERS:
                return False
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "getattr" and node.args \
                    and isinstance(node.args[0], ast.Name) and LOOP_NAME.fullmatch(node.args[0].id):
                if len(node.args) != 2 or _const(node.args[1]) not in LOOP_ATTRS:
                    return False
                allowed_uses.add(id(node.args[0]))
            elif isinstance(func, ast.Name) and (LOOP_NAME.fullmatch(func.id) or func.id == "LoopContext"
                                                 and (len(node.args) != 2 or node.keywords)):
                return False        # a recursive loop
    for node in ast.walk(ast.Module(body=body[1:], type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in JINJA_RUNTIME_NAMES and node.id not in RUNTIME and id(node) not in allowed_uses:
                return False
            if LOOP_NAME.fullmatch(node.id) and id(node) not in allowed_uses:
                return False        # loop itself used (passed on, printed)
    return True


def executable(source: str, name: str):
    """supported() compiled source as a code object, its jinja2 import left out."""
    body = ast.parse(source).body[1:]
    return compile(ast.Module(body=body, type_ignores=[]), f"<template {name}>", "exec")


def renderer(code, finalize: Callable) -> Callable[[dict], str]:
    """The render function of an executable() template."""
    namespace = dict(RUNTIME, environment=Environment(finalize), __name__="plyc_template")
    exec(code, namespace)
    root = namespace["root"]

    def render(variables: dict) -> str:
        return "".join(root(Context(variables)))
    return render
