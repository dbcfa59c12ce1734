"""The shape of a primitive: which node type it edits, and how."""

from __future__ import annotations

import string

import libcst as cst


class Primitive:
    """Edits one node of type `node_type` found at the edit's position.

    `apply` returns the replacement node. Statement-level primitives may also ask for
    statements to be added after the statement holding the node (`after`) or for
    module-level imports (`imports`), which the composer inserts.
    """

    kind = ""
    node_type: type[cst.CSTNode] = cst.CSTNode
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
        self.imports: list[tuple[str, str]] = []  # (module, name) to import at the top

    def apply(self, node: cst.CSTNode) -> cst.CSTNode:
        raise NotImplementedError


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def fill(template: str, **values: cst.CSTNode) -> str:
    """`{receiver}.fill_len` with receiver=<node> -> "req.fill_len"."""
    return template.format(**{k: code(v) for k, v in values.items()})


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
