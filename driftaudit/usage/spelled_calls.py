"""Calls and names a consumer spells indirectly, read back to what they reach:
`getattr(x, "name")` (as `x.name`), `importlib.import_module("sglang.x")` (the module),
`functools.partial(f, ...)` (a call of `f` with the rest later) and `f(**kwargs)` where
`kwargs` is a dict literal the scope builds and never touches again (its keys)."""

from __future__ import annotations

import ast

from driftaudit.astwalk import walk
from driftaudit.pysource import Columns, Span, dotted
from driftaudit.usage.usages import CallShape

SGLANG = "sglang"


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def literal_getattr(node: ast.expr) -> ast.Attribute | None:
    """`getattr(x, "name")` (no default: it raises when the name is gone) as the
    attribute `x.name` it reads, placed on the name inside the quotes."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) == 2
        and not node.keywords
    ):
        return None
    name = _string(node.args[1])
    if not name or not name.isidentifier():
        return None
    literal = node.args[1]
    attribute = ast.Attribute(value=node.args[0], attr=name, ctx=ast.Load())
    attribute.lineno, attribute.col_offset = node.lineno, node.col_offset
    attribute.end_lineno = literal.end_lineno
    attribute.end_col_offset = (literal.end_col_offset or 1) - 1  # before the closing quote
    return attribute


def string_import(node: ast.expr) -> str | None:
    """The sglang module `importlib.import_module("sglang.x")` returns."""
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return None
    if (dotted(node.func) or "").rpartition(".")[2] != "import_module":
        return None
    module = _string(node.args[0])
    if module and (module == SGLANG or module.startswith(SGLANG + ".")):
        return module
    return None


def call_root(node: ast.expr) -> tuple[ast.Call, list[str]] | None:
    """An attribute chain on a call (`import_module("m").f.g`): (the call, ["f", "g"])."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.insert(0, node.attr)
        node = node.value
    return (node, attrs) if isinstance(node, ast.Call) else None


def partial_call(node: ast.Call, columns: Columns) -> tuple[ast.expr, CallShape] | None:
    """`functools.partial(f, a, k=v)`: f, and the shape of the arguments it binds."""
    if not node.args or isinstance(node.args[0], ast.Starred):
        return None
    rest = node.args[1:]
    places: dict[str, Span] = {}
    for index, arg in enumerate(rest):
        if isinstance(arg, ast.Starred):
            break
        places[str(index)] = columns.span(arg)
    places.update((k.arg, columns.token(k)) for k in node.keywords if k.arg)
    shape = CallShape(
        positional=sum(1 for a in rest if not isinstance(a, ast.Starred)),
        keywords=[k.arg for k in node.keywords if k.arg is not None],
        star_args=any(isinstance(a, ast.Starred) for a in rest),
        star_kwargs=any(k.arg is None for k in node.keywords),
        places=places,
        partial=True,
    )
    return node.args[0], shape


def dict_keys(value: ast.expr | None) -> list[str] | None:
    """The keys of `{"a": ..., "b": ...}` or `dict(a=..., b=...)`, when all are known."""
    if isinstance(value, ast.Dict):
        keys = [_string(k) for k in value.keys]
        return keys if all(k is not None for k in keys) else None  # type: ignore[return-value]
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and not value.args
        and all(k.arg for k in value.keywords)
    ):
        return [k.arg for k in value.keywords if k.arg]
    return None


def untouched(scope: ast.AST, name: str) -> bool:
    """`name` is assigned once in `scope` and otherwise only spread (`f(**name)`): no
    later write, `.update()`, `.pop()` or hand-off can change its keys."""
    spread = {
        id(k.value)
        for node in walk(scope)
        if isinstance(node, ast.Call)
        for k in node.keywords
        if k.arg is None and isinstance(k.value, ast.Name)
    }
    stores = 0
    for node in walk(scope):
        if isinstance(node, ast.Name) and node.id == name:
            if not isinstance(node.ctx, ast.Load):
                stores += 1
            elif id(node) not in spread:
                return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    return stores == 1
