"""sglang objects a consumer builds without their `__init__` and fills by hand.

`obj = object.__new__(Cls)` or `obj = Cls.__new__(Cls)` with `Cls` an sglang class:
the consumer sets the attributes it thinks the code it runs needs (`obj.x = ...`,
`setattr(obj, "x", ...)`) and calls methods on the object. When the object is built in
a helper that returns it (`def make(): s = object.__new__(C); ...; return s`), the
calls on the helper's result in the same file count too.

A stand-in is the other shape: `ns = SimpleNamespace(x=..., y=...)` (and `ns.z = ...`)
handed to an sglang function (`f(ns)`, `f(server_args=ns)`) where it expects one of
its classes.

Only files that mention `__new__(` or `SimpleNamespace` and import sglang are parsed
(a text test first).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from driftaudit.astwalk import own_nodes, walk_statements
from driftaudit.pysource import any_within, dotted, lines_spelling, statements
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.model import Usage


@dataclass
class BypassUsage(Usage):
    """`symbol` is the sglang class built without `__init__`."""

    variable: str = ""
    attributes: list[str] = field(default_factory=list)  # set by hand, anywhere on it
    calls: list[tuple[str, int, int]] = field(default_factory=list)  # (method, line, column)


@dataclass
class StandInUsage(Usage):
    """`symbol` is the sglang function a `SimpleNamespace` is handed to."""

    argument: str = ""  # its position ("0") or keyword in the call
    attributes: list[str] = field(default_factory=list)  # the namespace's keywords and stores


def collect_bypasses(files: ConsumerFiles, only: set[str] | None = None) -> list[Usage]:
    """`only`: the consumer files (relative paths) known to reach sglang, to look at no
    other (their trees are the index's: nothing is read or parsed again)."""
    found: list[Usage] = []
    for file in files.python():
        if only is not None and file.rel not in only:
            continue
        text = file.text
        if text is None or "sglang" not in text:
            continue
        if "__new__(" not in text and "SimpleNamespace" not in text:
            continue
        found += file.derived("bypasses", lambda file=file: _file_bypasses(file), list)
    return found


def _file_bypasses(file) -> list[Usage]:
    tree = file.tree
    if tree is None:
        return []  # reported as DA001 by the usage collector
    return _FileBypasses(file.rel, tree, file.text or "").run()


class _FileBypasses:
    def __init__(self, relpath: str, tree: ast.Module, text: str):
        self.relpath, self.tree, self.text = relpath, tree, text
        self.names = _sglang_names(tree)

    def run(self) -> list[Usage]:
        found: list[Usage] = []
        functions = [
            node
            for node in walk_statements(self.tree)  # definitions are statements
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        # the lines that can matter, from the text (a superset of the calls' lines, and a
        # call lies in the scopes that span its text): read only the scopes that hold one,
        # whose statements are then judged from the tree
        new_lines = lines_spelling(self.text, ["__new__"])
        namespace_lines = lines_spelling(self.text, ["SimpleNamespace"])
        for scope in [self.tree, *functions]:
            if _holds(scope, new_lines):
                found += self._bypasses(scope, functions)
            if _holds(scope, namespace_lines):
                found += self._stand_ins(scope)
        return found

    def _bypasses(self, scope: ast.AST, functions: list) -> list[BypassUsage]:
        found = []
        for statement in _own_statements(scope):
            bypass = self._bypass(statement)
            if bypass is None:
                continue
            variable, cls = bypass
            usage = BypassUsage(
                self.relpath,
                statement.lineno,
                statement.col_offset + 1,
                cls,
                variable=variable,
            )
            self._uses(scope, variable, usage)
            if isinstance(scope, ast.FunctionDef) and _returns(scope, variable):
                for caller, name in self._results_of(scope.name, functions):
                    self._uses(caller, name, usage)
            found.append(usage)
        return found

    def _stand_ins(self, scope: ast.AST) -> list[StandInUsage]:
        namespaces: dict[str, list[str]] = {}
        for statement in _own_statements(scope):
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and self._namespace(statement.value)
            ):
                keywords = [k.arg for k in statement.value.keywords if k.arg]
                namespaces[statement.targets[0].id] = keywords
        for node in own_nodes(scope):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                holder = dotted(node.value)
                if holder in namespaces:
                    namespaces[holder].append(node.attr)
        found = []
        for node in own_nodes(scope):
            if not isinstance(node, ast.Call):
                continue
            callee = self._resolve(node.func)
            if callee is None:
                continue
            given = [(str(i), a) for i, a in enumerate(node.args)]
            given += [(k.arg, k.value) for k in node.keywords if k.arg]
            for key, value in given:
                if isinstance(value, ast.Starred):
                    break
                if self._namespace(value):
                    attributes = [k.arg for k in value.keywords if k.arg]
                elif isinstance(value, ast.Name) and value.id in namespaces:
                    attributes = namespaces[value.id]
                else:
                    continue
                found.append(
                    StandInUsage(
                        self.relpath,
                        node.lineno,
                        node.col_offset + 1,
                        callee,
                        argument=key,
                        attributes=list(attributes),
                    )
                )
        return found

    def _namespace(self, node: ast.expr) -> bool:
        """`SimpleNamespace(...)` / `types.SimpleNamespace(...)` without `**kwargs`."""
        return (
            isinstance(node, ast.Call)
            and (dotted(node.func) or "").rpartition(".")[2] == "SimpleNamespace"
            and not node.args
            and all(k.arg for k in node.keywords)
        )

    def _bypass(self, statement: ast.stmt) -> tuple[str, str] | None:
        """`x = object.__new__(C)` / `x = C.__new__(C)` -> ("x", sglang path of C)."""
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
        ):
            return None
        call = statement.value
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "__new__" and call.args):
            return None
        cls = self._resolve(call.args[0])
        owner = dotted(func.value)
        if cls is None or (owner != "object" and self._resolve(func.value) != cls):
            return None
        return statement.targets[0].id, cls

    def _resolve(self, node: ast.expr) -> str | None:
        name = dotted(node)
        if not name:
            return None
        first, _, rest = name.partition(".")
        base = self.names.get(first)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def _results_of(self, function: str, functions) -> list[tuple[ast.AST, str]]:
        """(scope, name) for each `name = function(...)` in the file."""
        found = []
        for scope in [self.tree, *functions]:
            for statement in _own_statements(scope):
                if (
                    isinstance(statement, ast.Assign)
                    and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)
                    and isinstance(statement.value, ast.Call)
                    and dotted(statement.value.func) == function
                ):
                    found.append((scope, statement.targets[0].id))
        return found

    def _uses(self, scope: ast.AST, variable: str, usage: BypassUsage) -> None:
        for node in own_nodes(scope):
            if isinstance(node, ast.Attribute) and dotted(node.value) == variable:
                if isinstance(node.ctx, ast.Store):
                    usage.attributes.append(node.attr)
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and dotted(func.value) == variable:
                    usage.calls.append((func.attr, node.lineno, node.col_offset + 1))
                elif dotted(func) == "setattr" and len(node.args) >= 2:
                    name = node.args[1]
                    if dotted(node.args[0]) == variable and isinstance(name, ast.Constant):
                        usage.attributes.append(str(name.value))


def _sglang_names(tree: ast.Module) -> dict[str, str]:
    """Names bound to sglang modules or classes by the file's imports (any scope)."""
    names: dict[str, str] = {}
    for node in statements(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "sglang" or node.module.startswith("sglang."):
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sglang":
                    if alias.asname:
                        names[alias.asname] = alias.name
                    else:
                        names["sglang"] = "sglang"
    return names


def _holds(scope: ast.AST, lines: list[int]) -> bool:
    """Does the scope span one of `lines` (ascending)? (the module spans every line)"""
    if not lines:
        return False
    if isinstance(scope, ast.Module):
        return True
    return any_within(lines, scope.lineno, scope.end_lineno or scope.lineno)


def _own_statements(scope: ast.AST):
    """The statements of a scope, nested blocks included, nested functions not."""
    for node in own_nodes(scope):
        if isinstance(node, ast.stmt):
            yield node


def _returns(function: ast.FunctionDef, variable: str) -> bool:
    return any(
        isinstance(n, ast.Return) and dotted(n.value) == variable for n in own_nodes(function)
    )
