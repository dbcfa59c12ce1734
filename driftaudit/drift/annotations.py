"""Does an sglang annotation accept a value of a given type? Yes, no, or unknown.

The annotation is sglang's source text (`Optional[List[int]]`, `array[int]`,
`int | None`, `"ForwardMode"`); names in it are made canonical by the caller's
`resolve` (`array` -> `array.array`, `ForwardMode` -> its sglang path) and classes
described by `describe` (an enum and its bases). The value types are those of
`driftaudit.usage.valuetypes`. Only a definite "no" (False) is ever reported; any
construct this does not know (a TypeVar, a Protocol, a type alias) answers None.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

# annotation name -> the value types it accepts (None: everything, e.g. Any)
_BUILTINS: dict[str, set[str] | None] = {
    "int": {"int", "bool"},
    "float": {"float", "int", "bool"},
    "complex": {"complex", "float", "int", "bool"},
    "bool": {"bool"},
    "str": {"str"},
    "bytes": {"bytes"},
    "list": {"list"},
    "List": {"list"},
    "MutableSequence": {"list"},
    "dict": {"dict"},
    "Dict": {"dict"},
    "Mapping": {"dict"},
    "MutableMapping": {"dict"},
    "set": {"set"},
    "Set": {"set"},
    "MutableSet": {"set"},
    "frozenset": {"frozenset"},
    "FrozenSet": {"frozenset"},
    "AbstractSet": {"set", "frozenset"},
    "tuple": {"tuple"},
    "Tuple": {"tuple"},
    "Sequence": {"list", "tuple", "str", "bytes", "array.array"},
    "array.array": {"array.array"},
    "torch.Tensor": {"torch.Tensor"},
    "numpy.ndarray": {"numpy.ndarray"},
    "None": {"None"},
    "NoneType": {"None"},
    "Any": None,
    "object": None,
}
_COLLECTIONS = {"list", "dict", "set", "frozenset", "tuple", "array.array", "torch.Tensor"}
_SCALARS = {"int", "float", "bool", "complex", "str", "bytes", "None"}
_BUILTIN_VALUES = _SCALARS | _COLLECTIONS | {"numpy.ndarray"}
# Iterable and friends: any container or string, no scalar
_ITERABLES = {"Iterable", "Collection", "Iterator", "Container", "Reversible"}

Resolve = Callable[[str], "str | None"]
Describe = Callable[[str], "tuple[bool, list[str]] | None"]  # (is_enum, bases) of a class


def accepts(
    annotation: str | None, value: str, resolve: Resolve, describe: Describe
) -> bool | None:
    if not annotation:
        return None
    try:
        node = ast.parse(annotation.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    return _accepts(node, value, resolve, describe, 0)


def _accepts(node: ast.expr, value: str, resolve, describe, depth: int) -> bool | None:
    if depth > 6:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return value == "None"
        if isinstance(node.value, str):  # a forward reference
            return accepts(node.value, value, resolve, describe)
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([node.left, node.right], value, resolve, describe, depth)
    if isinstance(node, ast.Subscript):
        head = _name(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        tail = (head or "").rpartition(".")[2]
        if tail == "Optional":
            return _union([*args, ast.Constant(None)], value, resolve, describe, depth)
        if tail == "Union":
            return _union(args, value, resolve, describe, depth)
        if tail == "Annotated":
            return _accepts(args[0], value, resolve, describe, depth + 1)
        if tail == "Literal":
            return _literal(args, value)
        return _accepts(node.value, value, resolve, describe, depth + 1)  # List[int] -> List
    name = _name(node)
    if name is None:
        return None
    return _named(name, value, resolve, describe)


def _union(parts, value, resolve, describe, depth) -> bool | None:
    answers = [_accepts(p, value, resolve, describe, depth + 1) for p in parts]
    if any(a is True for a in answers):
        return True
    if all(a is False for a in answers):
        return False
    return None


def _literal(args: list[ast.expr], value: str) -> bool | None:
    kinds = set()
    for arg in args:
        if not isinstance(arg, ast.Constant):
            return None
        kinds.add("None" if arg.value is None else type(arg.value).__name__)
    if value in kinds:
        return None  # the type fits; the literal value itself is not known here
    return False if value in _BUILTIN_VALUES else None


def _named(name: str, value: str, resolve, describe) -> bool | None:
    tail = name.rpartition(".")[2]
    if name in _BUILTINS or (tail in _BUILTINS and name.startswith("typing.")):
        allowed = _BUILTINS[name if name in _BUILTINS else tail]
        return True if allowed is None or value in allowed else _definite(value)
    if tail in _ITERABLES:
        if value in _COLLECTIONS or value in ("str", "bytes", "numpy.ndarray"):
            return True
        return False if value in _SCALARS else None
    path = resolve(name)
    if path is None:
        return None
    if path.startswith(("typing.", "typing_extensions.", "collections.abc.")):
        path = path.rpartition(".")[2]
        if path in _ITERABLES:
            return _named(path, value, resolve, describe)
    if path in _BUILTINS:
        allowed = _BUILTINS[path]
        return True if allowed is None or value in allowed else _definite(value)
    if path == value:
        return True
    info = describe(path)
    if info is None:
        return None  # not a class of the tree: a type alias, a TypeVar, another package
    is_enum, bases = info
    if value not in _BUILTIN_VALUES:
        return None  # an sglang instance: a subclass relation this does not follow
    if is_enum and any(b.rpartition(".")[2] in ("str", "int", "StrEnum", "IntEnum") for b in bases):
        return None  # a str/int enum: a plain value often still compares equal
    return False


def _definite(value: str) -> bool | None:
    """A builtin annotation rejects a value only when the value's type is a builtin too."""
    return False if value in _BUILTIN_VALUES else None


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def widens(old: str | None, new: str | None) -> bool:
    """Does annotation `new` accept every value `old` accepts (`int -> Optional[int]`,
    `int -> int | float`, `List[int] -> Sequence[int]`)? Member by member of the old
    union: the same text in the new one, or a builtin whose every value type the new
    annotation accepts (with the same type arguments, when both have them)."""
    old_parts, new_parts = _members(old), _members(new)
    if not old_parts or not new_parts:
        return False
    texts = {ast.unparse(p) for p in new_parts}
    for part in old_parts:
        if ast.unparse(part) in texts:
            continue
        head = part.value if isinstance(part, ast.Subscript) else part
        name = _name(head) or ""
        allowed = _BUILTINS.get(name.removeprefix("typing."))
        if not allowed:  # not a builtin (or Any): nothing to compare value by value
            return False
        if isinstance(part, ast.Subscript) and not any(
            isinstance(p, ast.Subscript) and ast.unparse(p.slice) == ast.unparse(part.slice)
            for p in new_parts
        ):
            return False
        if not all(_union(new_parts, value, _plain, _no_class, 0) is True for value in allowed):
            return False
    return True


def _members(annotation: str | None) -> list[ast.expr]:
    """The members of an annotation's union (`Optional[X]` is `X | None`)."""
    try:
        node = ast.parse((annotation or "").strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return []
    return _flatten(node, 0)


def _flatten(node: ast.expr, depth: int) -> list[ast.expr]:
    if depth > 6:
        return [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flatten(node.left, depth + 1) + _flatten(node.right, depth + 1)
    if isinstance(node, ast.Subscript):
        tail = (_name(node.value) or "").rpartition(".")[2]
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if tail == "Optional":
            return [*_flatten(args[0], depth + 1), ast.Constant(None)]
        if tail == "Union":
            return [m for a in args for m in _flatten(a, depth + 1)]
        if tail == "Annotated":
            return _flatten(args[0], depth + 1)
    return [node]


def accepts_as_written(annotation: str | None, value: str) -> bool | None:
    """`accepts` with names taken as written and no class looked up: enough for builtin
    value types against builtin and typing annotations."""
    return accepts(annotation, value, _plain, _no_class)


def _plain(name: str) -> str | None:
    return name


def _no_class(path: str) -> None:
    return None  # only builtin members are compared value by value
