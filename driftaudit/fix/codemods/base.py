"""The shape of a primitive: which node type it edits, how, and the parameters it takes."""

from __future__ import annotations

import keyword
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import libcst as cst

if TYPE_CHECKING:
    from libcst.metadata import Scope

    from driftaudit.fix.codemods.add_import import ImportNames


@dataclass(frozen=True)
class Param:
    """A parameter of a primitive, declared once in its `parameters`: the type its value
    must have (`TYPES`), whether it may be left out, and for a template the `{fields}` it
    may name. Pack codemod steps are checked against it when the pack is loaded."""

    type: str
    optional: bool = False
    fields: frozenset[str] = frozenset()


def _identifier(value) -> bool:
    return isinstance(value, str) and value.isidentifier() and not keyword.iskeyword(value)


def _dotted(value) -> bool:
    return isinstance(value, str) and all(_identifier(part) for part in value.split("."))


def _line(value) -> bool:
    return isinstance(value, str) and "\n" not in value and "\r" not in value


def _slot(value) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


# type -> (what a value must be, as an error says it; its check)
TYPES: dict[str, tuple[str, Callable[[object], bool]]] = {
    "identifier": ("a Python identifier", _identifier),
    "dotted": ("a dotted Python name (`package.module`)", _dotted),
    "text": ("a non-empty string on one line", lambda v: _line(v) and v != ""),
    "line": ("a string on one line", _line),
    "flag": ("true or false", lambda v: isinstance(v, bool)),
    "expression": ("a template of an expression", lambda v: isinstance(v, str)),
    "statements": (
        "a list of templates of statements",
        lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v),
    ),
    "slots": (
        "a non-empty list of value indexes (integers from 0)",
        lambda v: isinstance(v, list) and bool(v) and all(_slot(s) for s in v),
    ),
    "imports": (
        "a list of [module, name] pairs",
        lambda v: (
            isinstance(v, list)
            and all(
                isinstance(pair, list)
                and len(pair) == 2
                and _dotted(pair[0])
                and _identifier(pair[1])
                for pair in v
            )
        ),
    ),
}


def check_parameters(kind: str, parameters: dict[str, Param], params: dict) -> None:
    """ValueError naming the first parameter that is missing, unknown or of the wrong
    type (a template: also one that names a field it may not use)."""
    missing = [name for name, param in parameters.items() if not param.optional]
    missing = [name for name in missing if name not in params]
    if missing:
        raise ValueError(f"{kind}: missing parameter(s) {', '.join(missing)}")
    for name in params:
        if not isinstance(name, str) or name not in parameters:
            raise ValueError(
                f"{kind}: unknown parameter {name!r} (it takes {', '.join(parameters)})"
            )
    for name, value in params.items():
        param = parameters[name]
        what, valid = TYPES[param.type]
        if not valid(value):
            raise ValueError(f"{kind}: parameter `{name}` must be {what}, not {value!r}"[:300])
        if param.type in ("expression", "statements"):
            _check_templates(kind, name, value, param)


N = TypeVar("N", bound=cst.CSTNode)  # the node type a primitive edits


class Primitive(Generic[N]):
    """Edits one node of type `node_type` found at the edit's position.

    `apply` returns the replacement node. Statement-level primitives may also ask for
    statements to be added after the statement holding the node (`after`). A primitive
    that needs an imported name asks `reference(module, name)` for the spelling to use:
    the composer's `ImportNames` picks a free one and adds the import.
    """

    kind = ""
    node_type: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...] = cst.CSTNode
    parameters: dict[str, Param] = {}  # what the primitive takes (its only declaration)

    def __init__(self, params: dict):
        check_parameters(self.kind, self.parameters, params)
        self.params = params
        self.after: list[cst.BaseStatement] = []
        self.names: ImportNames | None = None  # the composer's, set before apply
        self.scope: Scope | None = None  # libcst's scope of the node being edited, set before apply

    def apply(self, node: N) -> cst.CSTNode:
        raise NotImplementedError

    def reference(self, module: str, name: str) -> str:
        if self.names is None:
            return name
        return self.names.reference(module, name, self.scope)


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


class NameSites:
    """For a libcst visitor: the `Name` nodes that are not references to a name (an
    attribute's name, a keyword argument's name)."""

    def __init__(self):
        super().__init__()
        self._not_names: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_names.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_names.add(id(node.keyword))


class _Substitute(NameSites, cst.CSTTransformer):
    def __init__(self, nodes: dict[str, cst.CSTNode], names: dict[str, str]):
        super().__init__()
        self.nodes, self.names = nodes, names

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self._not_names:
            return updated
        if original.value in self.nodes:
            return self.nodes[original.value]
        if self.names.get(original.value, original.value) != original.value:
            return cst.parse_expression(self.names[original.value])
        return updated


def build(
    template: str,
    parse: Callable[[str], cst.CSTNode] = cst.parse_expression,
    names: dict[str, str] | None = None,
    **values: cst.CSTNode,
) -> cst.CSTNode:
    """`{receiver}.fill_len` with receiver=<node> -> the node of `req.fill_len`.

    The values are put in as nodes (their formatting kept); `names` respells the
    template's own names (`array` -> `_array` when the import had to take another name).
    """
    holders = {f"__driftaudit_{key}__": node for key, node in values.items()}
    parsed = parse(template.format(**{key: f"__driftaudit_{key}__" for key in values}))
    return parsed.visit(_Substitute(holders, names or {}))


def _check_templates(kind: str, name: str, value, param: Param) -> None:
    """A template (or list of them) names only the fields it may use, plainly (no
    conversion or format spec), with well-formed braces, and parses as its kind of code."""
    fields = sorted(param.fields)
    for template in value if isinstance(value, list) else [value]:
        try:
            parts = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise ValueError(f"{kind}: `{name}` template {template!r}: {exc}") from None
        named = {field for _, field, _, _ in parts if field is not None}
        if unknown := named - param.fields:
            raise ValueError(
                f"{kind}: `{name}` template names {sorted(unknown)}; it may use {fields}"
            )
        if any(spec or conversion for _, field, spec, conversion in parts if field is not None):
            raise ValueError(f"{kind}: `{name}` template {template!r}: a field takes no ! or :")
        parse = cst.parse_statement if param.type == "statements" else cst.parse_expression
        try:
            parse(template.format(**{field: f"__driftaudit_{field}__" for field in named}))
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            what = "a statement" if param.type == "statements" else "an expression"
            raise ValueError(f"{kind}: `{name}` template {template!r} is not {what}") from None
