"""sglang objects a consumer builds without their `__init__` and fills by hand.

`obj = object.__new__(Cls)` or `obj = Cls.__new__(Cls)` with `Cls` an sglang class:
the consumer sets the attributes it thinks the code it runs needs (`obj.x = ...`,
`setattr(obj, "x", ...)`) and calls methods on the object. When the object is built in
a helper that returns it (`def make(): s = object.__new__(C); ...; return s`), the
calls on the helper's result in the same file count too.

A stand-in is the other shape: an object the consumer builds by hand and hands to an
sglang function (`f(ns)`, `f(server_args=ns)`) where it expects one of its classes:
`SimpleNamespace(x=..., y=...)`, a `Mock`/`MagicMock` (its attributes: the keywords and
`m.z = ...`; an unset one reads as a new mock, not an error), or an instance of a
hand-written class of the file with no base (its attributes: what its body defines and
its methods set on `self`; none when it defines `__getattr__`/`__getattribute__`).

Only files that mention `__new__(`, `SimpleNamespace`, `Mock` or a class statement and
import sglang are parsed (a text test first).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from driftaudit.astwalk import own_nodes, walk_statements
from driftaudit.pysource import any_within, dotted, lines_spelling, statements
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.usages import Usage


@dataclass
class BypassUsage(Usage):
    """`symbol` is the sglang class built without `__init__`."""

    variable: str = ""
    attributes: list[str] = field(default_factory=list)  # set by hand, anywhere on it
    calls: list[tuple[str, int, int]] = field(default_factory=list)  # (method, line, column)
    # attribute -> every literal it is assigned (None: some assignment is not a literal)
    values: dict[str, list | None] = field(default_factory=dict)


@dataclass
class StandInUsage(Usage):
    """`symbol` is the sglang function a `SimpleNamespace` is handed to."""

    argument: str = ""  # its position ("0") or keyword in the call
    attributes: list[str] = field(default_factory=list)  # the namespace's keywords and stores
    kind: str = "a SimpleNamespace"  # "a MagicMock", "an instance of `Fake`"


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
        if not any(word in text for word in _SPELLINGS):
            continue
        found += file.derived("bypasses", lambda file=file: _file_bypasses(file), list)
    return found


def _file_bypasses(file) -> list[Usage]:
    tree = file.tree
    if tree is None:
        return []  # reported as DA001 by the usage collector
    return _FileBypasses(file.rel, tree, file.text or "").run()


_SPELLINGS = ("__new__(", "SimpleNamespace", "Mock", "class ")
_MOCKS = {"Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock"}
_DYNAMIC = {"__getattr__", "__getattribute__", "__slots__"}


class _FileBypasses:
    def __init__(self, relpath: str, tree: ast.Module, text: str):
        self.relpath, self.tree, self.text = relpath, tree, text
        self.names = _sglang_names(tree)
        self.fakes = _fake_classes(tree)

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
        namespace_lines = lines_spelling(self.text, ["SimpleNamespace", "Mock", *self.fakes])
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
        namespaces: dict[str, tuple[str, list[str]]] = {}  # name -> (kind, attributes)
        for statement in _own_statements(scope):
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
            ):
                built = self._built(statement.value)
                if built is not None:
                    namespaces[statement.targets[0].id] = built
        for node in own_nodes(scope):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                holder = dotted(node.value)
                if holder in namespaces:
                    namespaces[holder][1].append(node.attr)
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
                built = self._built(value)
                if built is None and isinstance(value, ast.Name):
                    built = namespaces.get(value.id)
                if built is None:
                    continue
                kind, attributes = built
                found.append(
                    StandInUsage(
                        self.relpath,
                        node.lineno,
                        node.col_offset + 1,
                        callee,
                        argument=key,
                        attributes=list(attributes),
                        kind=kind,
                    )
                )
        return found

    def _built(self, node: ast.expr) -> tuple[str, list[str]] | None:
        """(kind, attributes) of a stand-in built by `node`, or None."""
        if not isinstance(node, ast.Call):
            return None
        if self._namespace(node):
            return "a SimpleNamespace", [k.arg for k in node.keywords if k.arg]
        callee = dotted(node.func) or ""
        name = callee.rpartition(".")[2]
        if name in _MOCKS and not node.args and all(k.arg for k in node.keywords):
            if any(k.arg in ("spec", "spec_set") for k in node.keywords):
                return None  # specced: reads the spec's names, not a free-form object
            return f"a {name}", [k.arg for k in node.keywords if k.arg]
        if callee in self.fakes:
            return f"an instance of `{callee}`", list(self.fakes[callee])
        return None

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
        nodes = list(own_nodes(scope))
        assigned = {  # id of an assignment's target -> the value assigned
            id(target): node.value
            for node in nodes
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        }
        for node in nodes:
            if isinstance(node, ast.Attribute) and dotted(node.value) == variable:
                if isinstance(node.ctx, ast.Store):
                    usage.attributes.append(node.attr)
                    _value(usage, node.attr, assigned.get(id(node)))
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and dotted(func.value) == variable:
                    usage.calls.append((func.attr, node.lineno, node.col_offset + 1))
                elif dotted(func) == "setattr" and len(node.args) >= 2:
                    name = node.args[1]
                    if dotted(node.args[0]) == variable and isinstance(name, ast.Constant):
                        usage.attributes.append(str(name.value))
                        given = node.args[2] if len(node.args) > 2 else None
                        _value(usage, str(name.value), given)


def _value(usage: BypassUsage, attribute: str, node: ast.expr | None) -> None:
    """Record the literal `attribute` is assigned; anything else makes it unknown."""
    known = usage.values.get(attribute, [])
    if (
        known is not None
        and isinstance(node, ast.Constant)
        and isinstance(node.value, (str, int, float, bool, type(None)))
    ):
        usage.values[attribute] = [*known, node.value]
    else:
        usage.values[attribute] = None


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


def _fake_classes(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level classes with no base: name -> the attributes an instance has (the
    names its body binds, and `self.x` its methods store)."""
    fakes: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.bases or node.keywords:
            continue
        names: set[str] = set()
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(statement.name)
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            if isinstance(statement, ast.AnnAssign):
                targets = [statement.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(statement):
                    if (
                        isinstance(inner, ast.Attribute)
                        and isinstance(inner.ctx, ast.Store)
                        and isinstance(inner.value, ast.Name)
                        and inner.value.id == "self"
                    ):
                        names.add(inner.attr)
        decorated = any(
            (dotted(d.func if isinstance(d, ast.Call) else d) or "").rpartition(".")[2]
            != "dataclass"
            for d in node.decorator_list
        )  # a dataclass's fields are its annotated names; other decorators may add more
        if not names & _DYNAMIC and not decorated:
            fakes[node.name] = names
    return fakes


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
