"""The value of a default's source text, where it is a literal in disguise.

`ast.literal_eval` reads displays and constants; sglang's defaults also name module
constants (`ENCODER_TRANSFER_BACKEND_CHOICES[0]`), copy them (`list(DEFAULTS)`), or call
a factory (`(lambda: list(DEFAULTS))()`, `list()`). Hand-written because literal_eval
stops at the first name or call; anything else is unknown (`UNKNOWN`), never guessed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

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


def under_defaults(text: str, field: Callable[[str], object], constants: dict[str, str]):
    """The value of `text` (a resolution's value or condition) where every `x.<name>` it
    reads holds its default (`field(name)`, UNKNOWN when not known): conditions of `and`,
    `or`, `not`, comparisons with literals and conditional expressions; else UNKNOWN."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return UNKNOWN
    return _under(node, field, constants)


def _under(node: ast.expr, field, constants: dict[str, str]) -> object:
    if isinstance(node, ast.Attribute):
        return field(node.attr)
    if isinstance(node, ast.IfExp):
        test = _under(node.test, field, constants)
        if test is UNKNOWN:
            return UNKNOWN
        return _under(node.body if test else node.orelse, field, constants)
    if isinstance(node, ast.BoolOp):
        values = [_under(v, field, constants) for v in node.values]
        decided = isinstance(node.op, ast.Or)  # the value that decides: True for `or`
        if any(v is not UNKNOWN and bool(v) == decided for v in values):
            return decided
        return UNKNOWN if any(v is UNKNOWN for v in values) else not decided
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _under(node.operand, field, constants)
        return UNKNOWN if value is UNKNOWN else not value
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left = _under(node.left, field, constants)
        right = _under(node.comparators[0], field, constants)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        return _compare(node.ops[0], left, right)
    return _value(node, constants, 0)


def _compare(op: ast.cmpop, left: object, right: object) -> object:
    try:
        if isinstance(op, (ast.Eq, ast.Is)):
            return left == right
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return left != right
        if isinstance(op, ast.In):
            return left in right
        if isinstance(op, ast.NotIn):
            return left not in right
    except TypeError:
        pass
    return UNKNOWN
