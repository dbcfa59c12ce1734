"""The value of a default's source text, where it is a literal in disguise.

`ast.literal_eval` reads displays and constants; sglang's defaults also name module
constants (`ENCODER_TRANSFER_BACKEND_CHOICES[0]`), copy them (`list(DEFAULTS)`), or call
a factory (`(lambda: list(DEFAULTS))()`, `list()`). Hand-written because literal_eval
stops at the first name or call; anything else is unknown (`UNKNOWN`), never guessed.
"""

from __future__ import annotations

import ast

UNKNOWN = object()
_COPIES = {"list": list, "tuple": tuple, "dict": dict, "set": set, "frozenset": frozenset}
_DEPTH = 8


def value_of(text: str | None, constants: dict[str, str], depth: int = 0) -> object:
    """The Python value `text` denotes (constants: NAME -> its source text)."""
    if text is None or depth > _DEPTH:
        return UNKNOWN
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return UNKNOWN
    return _value(node, constants, depth)


def _value(node: ast.expr, constants: dict[str, str], depth: int) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        pass
    if isinstance(node, ast.Name) and node.id in constants:
        return value_of(constants[node.id], constants, depth + 1)
    if isinstance(node, ast.Subscript):
        container = _value(node.value, constants, depth)
        index = _value(node.slice, constants, depth)
        if container is UNKNOWN or index is UNKNOWN:
            return UNKNOWN
        try:
            return container[index]
        except (IndexError, KeyError, TypeError):
            return UNKNOWN
    if isinstance(node, ast.Call) and not node.keywords:
        if isinstance(node.func, ast.Lambda) and not node.args:
            return _value(node.func.body, constants, depth)
        copy = _COPIES.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if copy is not None and len(node.args) <= 1:
            args = [_value(a, constants, depth) for a in node.args]
            if UNKNOWN in args:
                return UNKNOWN
            try:
                return copy(*args)
            except (TypeError, ValueError):
                return UNKNOWN
    return UNKNOWN


def branches(text: str) -> list[str]:
    """The values a conditional expression may take (`a if c else b` -> a, b), else
    the text itself."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return [text]
    found, stack = [], [node]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.IfExp):
            stack += [node.orelse, node.body]
        else:
            found.append(ast.unparse(node))
    return found
