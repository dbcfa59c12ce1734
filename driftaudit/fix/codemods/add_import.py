"""add-import: `from module import name` at the top of the file, once."""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Primitive


class AddImport(Primitive):
    kind = "add-import"
    node_type = cst.Module
    required = ("module", "name")

    def apply(self, node: cst.Module) -> cst.Module:
        self.imports.append((self.params["module"], self.params["name"]))
        return node


def has_import(module: cst.Module, source: str, name: str) -> bool:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                module_name = (
                    cst.Module(body=[]).code_for_node(small.module) if small.module else ""
                )
                if module_name == source and any(
                    isinstance(a.name, cst.Name) and a.name.value == name and a.asname is None
                    for a in small.names
                ):
                    return True
    return False


def insert_imports(module: cst.Module, imports: list[tuple[str, str]]) -> cst.Module:
    """Add the missing `from m import n` lines after the module's leading imports."""
    missing = []
    for source, name in imports:
        if (source, name) not in missing and not has_import(module, source, name):
            missing.append((source, name))
    if not missing:
        return module
    body = list(module.body)
    index = 0
    for position, statement in enumerate(body):
        if _is_docstring(statement, position) or _is_import(statement):
            index = position + 1
        else:
            break
    new = [cst.parse_statement(f"from {source} import {name}\n") for source, name in missing]
    return module.with_changes(body=body[:index] + new + body[index:])


def _is_import(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def _is_docstring(statement, position: int) -> bool:
    return (
        position == 0
        and isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
