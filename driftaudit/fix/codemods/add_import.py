"""add-import: make `module.name` usable at the top of the file, under a free name.

`ImportNames` decides how the new code refers to an imported name, never shadowing one
the file binds: an existing top-level `from module import name [as x]` is reused, an
existing `import module` gives `module.name`, else `from module import name` is added
(`... import name as _name` when the file already uses `name` for something else).
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from driftaudit.fix.codemods.base import NameSites, Param, Primitive, code


class AddImport(Primitive[cst.Module]):
    kind = "add-import"
    node_type = cst.Module
    parameters = {"module": Param("dotted"), "name": Param("identifier")}

    def apply(self, node: cst.Module) -> cst.Module:
        self.reference(self.params["module"], self.params["name"])
        return node


class _Names(NameSites, cst.CSTVisitor):
    """Every identifier the file uses (conservatively: any Name node that is not an
    attribute or keyword), and how often each is bound."""

    def __init__(self):
        super().__init__()
        self.used: set[str] = set()
        self.bound: Counter[str] = Counter()

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        target = node.asname.name if node.asname else node.name
        while isinstance(target, cst.Attribute):  # `import a.b` binds `a`
            target = target.value
        if isinstance(target, cst.Name):
            self.bound[target.value] += 1
            self.used.add(target.value)

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._not_names:
            self.used.add(node.value)

    def _bind(self, target) -> None:
        if isinstance(target, cst.Name):
            self.bound[target.value] += 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        if not isinstance(node.name, cst.Name):
            self._bind(node.name)  # `with x as (a, b)`

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind(node.name.name)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name)


class ImportNames:
    """How the fixed file refers to `module.name`, and the imports it needs for that."""

    def __init__(self, module: cst.Module):
        names = _Names()
        module.visit(names)
        self.used, self.bound = names.used, names.bound
        self.from_imports: dict[tuple[str, str], str] = {}  # (module, name) -> local name
        self.module_imports: dict[str, str] = {}  # module -> how it is spelled here
        for statement in module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                self._read(small)
        self.new: list[tuple[str, str, str]] = []  # (module, name, local) to add

    def _read(self, small) -> None:
        if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            if small.module is None or small.relative:
                return
            source = code(small.module)
            for alias in small.names:
                if isinstance(alias.name, cst.Name):
                    local = alias.asname.name.value if alias.asname else alias.name.value
                    self.from_imports.setdefault((source, alias.name.value), local)
        elif isinstance(small, cst.Import):
            for alias in small.names:
                dotted = code(alias.name)
                if alias.asname and isinstance(alias.asname.name, cst.Name):
                    self.module_imports.setdefault(dotted, alias.asname.name.value)
                elif not alias.asname:
                    self.module_imports.setdefault(dotted, dotted)

    def _reaches(self, local: str, scope) -> bool:
        """Does `local` at this place name the module-level import? It does when nothing
        else binds it in the file or, knowing the place's scope, at module level or in a
        scope between (a parameter or local of the same name would shadow it)."""
        root = local.split(".")[0]
        if self.bound[root] == 1:
            return True
        if scope is None or len(scope.globals.assignments[root]) != 1:
            return False
        while scope is not scope.globals:
            if scope.assignments[root]:
                return False
            scope = scope.parent
        return True

    def reference(self, module: str, name: str, scope=None) -> str:
        """The expression that names `module.name` at a place of this file (`scope`,
        libcst's, when known; without it, a name bound twice anywhere is not reused)."""
        local = self.from_imports.get((module, name))
        if local and self._reaches(local, scope):
            return local
        spelled = self.module_imports.get(module)
        if spelled and self._reaches(spelled, scope):
            return f"{spelled}.{name}"
        for source, imported, local in self.new:
            if (source, imported) == (module, name):
                return local
        local, counter = name, 0
        while local in self.used:
            counter += 1
            local = f"_{name}" if counter == 1 else f"_{name}_{counter}"
        self.used.add(local)
        self.new.append((module, name, local))
        return local


def insert_imports(module: cst.Module, imports: list[tuple[str, str, str]]) -> cst.Module:
    """Add `from m import n [as local]` lines after the module's leading imports."""
    if not imports:
        return module
    body = list(module.body)
    index = 0
    for position, statement in enumerate(body):
        if _is_docstring(statement, position) or _is_import(statement):
            index = position + 1
        else:
            break
    new = [
        cst.parse_statement(
            f"from {source} import {name}" + (f" as {local}" if local != name else "") + "\n"
        )
        for source, name, local in imports
    ]
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
