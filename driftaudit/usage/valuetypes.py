"""The type of a consumer expression's value, when it shows in the syntax alone.

Cheap on purpose: literals and f-strings, list/dict/set/tuple displays and
comprehensions, calls of builtins (`list(...)`, `sorted(...)`), `.tolist()` (numpy,
torch and `array` all return a list), a few tensor factories, and constructor calls of
sglang classes (`resolve` names them). Anything else is unknown (None): a type is only
ever reported where it is certain.

A type is a builtin name (`int`, `list`, `None`...), `array.array`, `torch.Tensor`, or
the dotted path of an sglang class.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

_CONSTANTS = {bool: "bool", int: "int", float: "float", complex: "complex", str: "str"}
_CONSTANTS[bytes] = "bytes"
_DISPLAYS = {
    ast.List: "list",
    ast.ListComp: "list",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
    ast.Tuple: "tuple",
    ast.JoinedStr: "str",
}
_BUILTIN_CALLS = {
    "list": "list",
    "sorted": "list",
    "dict": "dict",
    "set": "set",
    "frozenset": "frozenset",
    "tuple": "tuple",
    "str": "str",
    "repr": "str",
    "int": "int",
    "len": "int",
    "float": "float",
    "bool": "bool",
    "bytes": "bytes",
}
_METHOD_RESULTS = {"tolist": "list"}
# external callables (as the file imports them) whose result type is known
_EXTERNAL_CALLS = {
    "array.array": "array.array",
    "torch.tensor": "torch.Tensor",
    "torch.zeros": "torch.Tensor",
    "torch.ones": "torch.Tensor",
    "torch.empty": "torch.Tensor",
    "torch.full": "torch.Tensor",
    "torch.arange": "torch.Tensor",
    "torch.randn": "torch.Tensor",
}


def value_type(
    node: ast.expr | None,
    resolve: Callable[[ast.expr], str | None],
    external: Callable[[ast.expr], str | None],
) -> str | None:
    """`resolve`: the sglang path an expression names; `external`: the dotted path of
    a non-sglang callable as imported (`torch.tensor`), or a builtin's name when the
    file does not rebind it."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return "None"
        return _CONSTANTS.get(type(node.value))
    for kind, display in _DISPLAYS.items():
        if isinstance(node, kind):
            return display
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _METHOD_RESULTS and not node.args:
            return _METHOD_RESULTS[func.attr]
        path = resolve(func)
        if path is not None:
            return "sglang-call:" + path  # the matcher keeps it only if it names a class
        name = external(func)
        if name in _EXTERNAL_CALLS:
            return _EXTERNAL_CALLS[name]
        if name in _BUILTIN_CALLS:
            return _BUILTIN_CALLS[name]
    return None


def arguments(call: ast.Call, typed: Callable[[ast.expr], str | None]) -> dict[str, str]:
    """The known value types of a call's arguments: by position ("0", "1"...) up to the
    first `*args`, and by keyword."""
    found: dict[str, str] = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        kind = typed(arg)
        if kind:
            found[str(index)] = kind
    for keyword in call.keywords:
        if keyword.arg is not None:
            kind = typed(keyword.value)
            if kind:
                found[keyword.arg] = kind
    return found


def literal_arguments(call: ast.Call) -> dict[str, str]:
    """The arguments written as literals (`0`, `"greedy"`, `None`, `-1`, `(1, 2)`), as
    source text: by position ("0", "1"...) up to the first `*args`, and by keyword."""
    found: dict[str, str] = {}
    named = [(str(i), a) for i, a in enumerate(call.args)]
    stop = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), None)
    named = named[:stop] if stop is not None else named
    named += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    for name, node in named:
        try:
            ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue
        found[name] = ast.unparse(node)
    return found
