"""The shape of a primitive: which node type it edits, and how."""

from __future__ import annotations

import string
from collections.abc import Callable

import libcst as cst


class Primitive:
    """Edits one node of type `node_type` found at the edit's position.

    `apply` returns the replacement node. Statement-level primitives may also ask for
    statements to be added after the statement holding the node (`after`). A primitive
    that needs an imported name asks `reference(module, name)` for the spelling to use:
    the composer's `ImportNames` picks a free one and adds the import.
    """

    kind = ""
    node_type: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...] = cst.CSTNode
    required: tuple[str, ...] = ()  # parameters the primitive needs
    templates: dict[str, set[str]] = {}  # template parameter -> the {fields} it may name

    def __init__(self, params: dict):
        missing = [p for p in self.required if p not in params]
        if missing:
            raise ValueError(f"{self.kind}: missing parameter(s) {', '.join(missing)}")
        for name, fields in self.templates.items():
            _check_templates(self.kind, name, params.get(name), fields)
        self.params = params
        self.after: list[cst.BaseStatement] = []
        self.names = None  # the composer's ImportNames, set before apply
        self.scope = None  # libcst's scope of the node being edited, set before apply

    def apply(self, node: cst.CSTNode) -> cst.CSTNode:
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


def _check_templates(kind: str, name: str, value, fields: set[str]) -> None:
    """A template (or list of them) names only `fields`, with well-formed braces."""
    for template in value if isinstance(value, list) else [] if value is None else [value]:
        if not isinstance(template, str):
            raise ValueError(f"{kind}: `{name}` must be a string template")
        try:
            named = {field for _, field, _, _ in string.Formatter().parse(template) if field}
        except ValueError as exc:
            raise ValueError(f"{kind}: `{name}` template {template!r}: {exc}") from None
        if unknown := named - fields:
            raise ValueError(
                f"{kind}: `{name}` template names {sorted(unknown)}; it may use {sorted(fields)}"
            )
