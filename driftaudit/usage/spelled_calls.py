"""Calls and names a consumer spells indirectly, read back to what they reach:
`getattr(x, "name")` (as `x.name`), `importlib.import_module("sglang.x")` (the module),
`functools.partial(f, ...)` (a call of `f` with the rest later) and `f(**kwargs)` where
`kwargs` is a dict literal the scope builds and never touches again (its keys)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from driftaudit.astwalk import walk
from driftaudit.pysource import Columns, Span, dotted
from driftaudit.usage.scopes import PartialOf
from driftaudit.usage.usages import (
    CallShape,
    CallUsage,
    EnumLookupUsage,
    KeywordDictUsage,
    MemberUsage,
    ReferenceUsage,
    Usage,
)

if TYPE_CHECKING:
    from driftaudit.usage.scopes import Recorder

SGLANG = "sglang"


def literal_string(node) -> str | None:
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
    name = literal_string(node.args[1])
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
    module = literal_string(node.args[0])
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
        keys = [literal_string(k) for k in value.keys]
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


class SpelledCallsMixin:
    """Part of `UsageVisitor`: `f(**kwargs)`, `functools.partial(f, ...)` and a later call
    of the partial, `getattr(x, "name")`, `dict(a=..., ...)` and `dataclasses.replace`,
    recorded as the calls and reads they make (the visitor provides the rest)."""

    if TYPE_CHECKING:  # declared for the type checker; `UsageVisitor` defines them
        usages: Recorder
        columns: Columns
        _scope_node: ast.AST | None
        _partials: dict[int, tuple]

        def resolve_expr(self, node: ast.expr) -> str | None: ...
        def infer(self, node: ast.expr) -> Any: ...
        def _local_value(self, name: str) -> ast.expr | None: ...
        def _at(self, node: Any) -> tuple[str, int, int]: ...
        def _star_root(self, node: ast.expr) -> tuple[str, ...]: ...
        def _member(self, node: ast.Attribute, store: bool, call: CallShape | None) -> bool: ...

    def _spread(self, node: ast.Call, shape: CallShape) -> None:
        """`f(**kwargs)` with `kwargs` a dict literal of known keys the scope never touches
        again: the keys are the call's keywords (placed on the `**kwargs`)."""
        spreads = [k for k in node.keywords if k.arg is None]
        found: list[tuple[list[str], ast.keyword]] = []
        for spread in spreads:
            value: ast.expr | None = spread.value
            if isinstance(spread.value, ast.Name):
                name = spread.value.id
                value = self._local_value(name)
                scope = self._scope_node
                if value is None or scope is None or not untouched(scope, name):
                    return
            keys = dict_keys(value)
            if keys is None:
                return
            found.append((keys, spread))
        for keys, spread in found:
            for key in keys:
                shape.keywords.append(key)
                shape.spread.append(key)
                shape.places.setdefault(key, self.columns.span(spread))
        shape.star_kwargs = False

    def _partial(self, node: ast.Call) -> None:
        """`functools.partial(f, ...)`: the call of `f` it binds, judged for what it passes."""
        found = partial_call(node, self.columns)
        if found is None:
            return
        callee, shape = found
        symbol = self.resolve_expr(callee)
        if symbol is not None:
            self._partials[id(node)] = (symbol, shape)
            focus, star = self.columns.token(callee), self._star_root(callee)
            usage = CallUsage(*self._at(node), symbol, **shape.__dict__, focus=focus, star=star)
            self.usages.append(usage)
        elif isinstance(callee, ast.Attribute) and self._member(callee, False, shape):
            receiver = self.infer(callee.value)
            if receiver is not None:
                self._partials[id(node)] = ("", shape, receiver, callee.attr)

    def _partial_call(self, node: ast.Call, bound: PartialOf, shape: CallShape) -> None:
        """`bound(...)` of `bound = partial(f, ...)`: `f` with both sets of arguments."""
        first = bound.shape
        shape.settled = list(first.keywords)
        shape.settled_positional = first.positional
        shape.keywords = [*first.keywords, *shape.keywords]
        shape.places = {
            **{k: v for k, v in first.places.items() if not k.isdigit()},
            **{
                str(int(k) + first.positional) if k.isdigit() else k: v
                for k, v in shape.places.items()
            },
        }
        shape.positional += first.positional
        shape.star_args = shape.star_args or first.star_args
        shape.star_kwargs = shape.star_kwargs or first.star_kwargs
        focus = self.columns.token(node)
        usage: Usage
        if bound.symbol:
            usage = CallUsage(*self._at(node), bound.symbol, **shape.__dict__, focus=focus)
        else:
            usage = MemberUsage(
                *self._at(node), "", receiver=bound.receiver, member=bound.member, call=shape
            )
            usage.focus = focus
        self.usages.append(usage)

    def _special_call(self, node: ast.Call, name: str) -> None:
        """dict(a=1, ...), getattr(obj, "x"), dataclasses.replace(obj, x=...)."""
        if name == "dict" and isinstance(node.func, ast.Name) and len(node.keywords) >= 3:
            keys = [(k.arg, self.columns.token(k)) for k in node.keywords if k.arg]
            self.usages.append(KeywordDictUsage(*self._at(node), "", keys=keys))
        elif name in ("getattr", "replace") and node.args:
            # `getattr(x, "name")` raises if it is gone; with a default it is a guard
            named = (
                literal_string(node.args[1]) if len(node.args) == 2 and name == "getattr" else None
            )
            owner = self.resolve_expr(node.args[0])
            if owner is not None and named is not None:
                self.usages.append(ReferenceUsage(*self._at(node), f"{owner}.{named}"))
            elif owner is not None and len(node.args) == 2 and name == "getattr":
                if not isinstance(node.args[1], ast.Constant):  # by a run-time string
                    focus = self.columns.span(node.args[1])
                    self.usages.append(EnumLookupUsage(*self._at(node), owner, focus=focus))
            receiver = self.infer(node.args[0])
            if receiver is None:
                return
            # with a default too: a field read as None
            if (
                name == "getattr"
                and len(node.args) >= 2
                and (named := literal_string(node.args[1]))
            ):
                self.usages.append(
                    MemberUsage(
                        *self._at(node),
                        "",
                        receiver=receiver,
                        member=named,
                        focus=self.columns.span(node.args[1]),
                    )
                )
            elif name == "replace":
                for keyword in node.keywords:
                    if keyword.arg:
                        self.usages.append(
                            MemberUsage(
                                *self._at(keyword),
                                "",
                                receiver=receiver,
                                member=keyword.arg,
                                store=True,
                                focus=self.columns.token(keyword),
                            )
                        )
