"""Type references: what the consumer knows about the type of an expression.

A `TypeRef` is a small tuple, resolved later against the old sglang snapshot
(the usage layer never sees a snapshot):

    ("path", "sglang...Req")          an instance of the class the consumer names
    ("list", T)                       a container of T (List[Req], Sequence[Req] ...)
    ("attr", T, "reqs")               the type of attribute `reqs` of a T
    ("map", T)                        a mapping to T (Dict[str, Req], `{"a": req}` ...)
    ("elem", T)                       an item of T (`reqs[0]`, `by_id[rid]`: a list's
                                      element, a mapping's value)
    ("iter", T)                       what iterating T gives (`for req in batch.reqs`:
                                      a list's element; a mapping's keys are not typed)
    ("ret", T, "get_batch")           what method `get_batch` of a T returns
    ("call", "sglang...f")            what calling sglang `f` gives (class: an instance)
    ("self", (base, ...), own, key)   `self` in a consumer subclass of sglang classes;
                                      `own` holds the names the subclass defines itself
                                      (`super()`: the first base, `own` empty, no key);
                                      `key` names the class (module.Class) in the
                                      consumer's attribute table
    ("obj", key)                      an instance of a consumer class with no sglang base
    ("field", key, "runner")          attribute `runner` of an instance of consumer class
                                      `key`: the type its class gives it (an annotation,
                                      `self.runner = <typed value>`), read from the
                                      consumer's attribute table (`UsageSet.fields`) when
                                      the findings are matched: any method may assign it
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from driftaudit.pysource import dotted

TypeRef = tuple
TYPE_KINDS = {"path", "list", "map", "attr", "elem", "iter", "ret", "call", "self", "obj", "field"}

_CONTAINERS = {
    "List",
    "list",
    "Sequence",
    "MutableSequence",
    "Iterable",
    "Iterator",
    "Collection",
    "Set",
    "set",
    "FrozenSet",
    "frozenset",
    "AbstractSet",
    "Deque",
    "deque",
    "Generator",
    "AsyncIterator",
    "AsyncIterable",
    "tuple",
    "Tuple",
}
_MAPPINGS = {
    "Dict",
    "dict",
    "Mapping",
    "MutableMapping",
    "OrderedDict",
    "DefaultDict",
    "defaultdict",
}
_TRANSPARENT = {"Optional", "Final", "ClassVar", "Annotated", "Required", "NotRequired"}


def is_type(binding) -> bool:
    return isinstance(binding, tuple) and bool(binding) and binding[0] in TYPE_KINDS


def annotation_type(node: ast.expr | None, resolve: Callable[[ast.expr], str | tuple | None]):
    """A consumer (or sglang) annotation -> TypeRef, or None when it names nothing known.

    `resolve` maps a name or dotted expression to an sglang path, or to the TypeRef of an
    instance of a consumer class (or None).
    """
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
        return annotation_type(parsed, resolve)
    if isinstance(node, (ast.Name, ast.Attribute)):
        path = resolve(node)
        if isinstance(path, tuple):
            return path
        return ("path", path) if path else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_type(node.left, resolve) or annotation_type(node.right, resolve)
    if isinstance(node, ast.Subscript):
        head = _last_name(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in _TRANSPARENT:
            return annotation_type(args[0], resolve)
        if head == "Union":
            return next((t for t in (annotation_type(a, resolve) for a in args) if t), None)
        if head in _CONTAINERS:
            inner = annotation_type(args[0], resolve)
            return ("list", inner) if inner else None
        if head in _MAPPINGS and len(args) == 2:
            inner = annotation_type(args[1], resolve)
            return ("map", inner) if inner else None
    return None


def annotation_text_type(text: str | None) -> TypeRef | None:
    """An sglang annotation whose names are already canonical -> TypeRef."""
    if not text:
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None

    def resolve(expr: ast.expr) -> str | None:
        path = dotted(expr)
        return path if path is not None and path.startswith("sglang.") else None

    return annotation_type(node, resolve)


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""
