"""sglang objects a consumer builds without their `__init__` and fills by hand.

`obj = object.__new__(Cls)` or `obj = Cls.__new__(Cls)` with `Cls` an sglang class:
the consumer sets the attributes it thinks the code it runs needs (`obj.x = ...`,
`setattr(obj, "x", ...)`) and calls methods on the object. When the object is built in
a helper that returns it (`def make(): s = object.__new__(C); ...; return s`), the
calls on the helper's result in the same file count too.

A stand-in is the other shape: an object the consumer builds by hand and hands to sglang
code where it expects one of its classes: an argument of a function (`f(ns)`,
`f(server_args=ns)`), of a constructor (`Cls(server_args=ns)`), of a method called on its
class (`Cls.method(fake_self, ...)`: the stand-in is `self`), or installed on an object
built without `__init__` (`obj.tree_cache = FakeCache()`, then `obj.method()`). It is a
`SimpleNamespace(x=..., y=...)` (its keywords and `ns.z = ...`; a keyword that is itself
a stand-in is kept as one), an instance of a hand-written class of the file with no base
(what its body defines and its methods set on `self`; none when it defines
`__getattr__`/`__getattribute__`), or a `Mock` with a spec (`Mock(spec=Cls)`,
`create_autospec(Cls)`: what the spec has, the keywords and `m.z = ...`). A mock without
a spec answers every read with a new mock: it never fails, and is no stand-in here. A
function of the file whose every return is a stand-in (`def make_args(): return
SimpleNamespace(...)`) builds one at each call (`f(make_args())`, `args = make_args()`).
A stand-in handed to a method called on a receiver (`runner.forward(ns)`,
`self.scheduler.process(fake)`) is kept with the method's name and the receiver's place:
the matcher types the receiver as it types any member use there (`match/bypass.py`).

Only files that mention `__new__(`, `SimpleNamespace`, `Mock` or a class statement and
import sglang are parsed (a text test first).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field, replace

from driftaudit.astwalk import own_nodes, walk_statements
from driftaudit.pysource import Columns, Span, any_within, dotted, lines_spelling, statements
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.usages import Usage


@dataclass
class Built:
    """What a stand-in has: `kind` names it in a message ("a SimpleNamespace", "an
    instance of `Fake`", "a Mock(spec=`Cls`)"); `spec` is the sglang class a mock's spec
    names (its class-level members exist on the mock too); `members`: the attributes that
    are stand-ins themselves."""

    kind: str
    attributes: list[str] = field(default_factory=list)
    spec: str = ""
    members: dict[str, Built] = field(default_factory=dict)
    at: Span | None = None  # where it is put in place (`obj.attr = ...`), when it is


@dataclass
class BypassUsage(Usage):
    """`symbol` is the sglang class built without `__init__`."""

    variable: str = ""
    attributes: list[str] = field(default_factory=list)  # set by hand, anywhere on it
    calls: list[tuple[str, int, int]] = field(default_factory=list)  # (method, line, column)
    # attribute -> every literal it is assigned (None: some assignment is not a literal)
    values: dict[str, list | None] = field(default_factory=dict)
    stand_ins: dict[str, Built] = field(default_factory=dict)  # attribute -> stand-in put there


@dataclass
class StandInUsage(Usage):
    """`symbol` is the sglang callable (a function, a class, a method named on its class)
    a stand-in is handed to."""

    argument: str = ""  # its position ("0") or keyword in the call
    attributes: list[str] = field(default_factory=list)  # the namespace's keywords and stores
    kind: str = "a SimpleNamespace"  # "a Mock(spec=`Cls`)", "an instance of `Fake`"
    spec: str = ""  # Built.spec
    members: dict[str, Built] = field(default_factory=dict)  # Built.members
    # a method called on a receiver the file does not name from an import: its name and
    # the receiver's start (line, column), where the usage visitor puts its `MemberUsage`;
    # `symbol` is empty until the matcher types the receiver
    method: str = ""
    receiver_at: tuple[int, int] = (0, 0)
    bound: bool = False  # `symbol` is a method the receiver binds `self` of


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


_SPELLINGS = ("__new__(", "SimpleNamespace", "Mock", "autospec", "class ")
_MOCKS = {"Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock"}
_AUTOSPEC = "create_autospec"
_DYNAMIC = {"__getattr__", "__getattribute__", "__slots__"}
# a mock's keywords that configure it rather than set an attribute
_MOCK_OPTIONS = {"spec", "spec_set", "side_effect", "return_value", "wraps", "name", "instance"}
_MOCK_OPTIONS |= {"unsafe", "new", "new_callable", "autospec", "_spec_class"}


class _FileBypasses:
    def __init__(self, relpath: str, tree: ast.Module, text: str):
        self.relpath, self.tree, self.text = relpath, tree, text
        self.names = _sglang_names(tree)
        self.fakes = _fake_classes(tree)
        self.columns = Columns(text)
        self.factories: dict[str, Built] = {}
        self.factories = self._factories()

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
        namespace_lines = lines_spelling(
            self.text, ["SimpleNamespace", "Mock", _AUTOSPEC, *self.fakes, *self.factories]
        )
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
        namespaces = self._namespaces(scope)
        found = []
        for node in own_nodes(scope):
            if not isinstance(node, ast.Call):
                continue
            callee = self._resolve(node.func)
            func = node.func
            if callee is None and not isinstance(func, ast.Attribute):
                continue
            given = [(str(i), a) for i, a in enumerate(node.args)]
            given += [(k.arg, k.value) for k in node.keywords if k.arg]
            places = None
            for key, value in given:
                if isinstance(value, ast.Starred):
                    break
                built = self._built(value, namespaces)
                if built is None:
                    continue
                places = places or self.columns.arguments(node)
                usage = StandInUsage(
                    self.relpath,
                    node.lineno,
                    node.col_offset + 1,
                    callee or "",
                    argument=key,
                    attributes=list(built.attributes),
                    kind=built.kind,
                    spec=built.spec,
                    members=dict(built.members),
                    focus=places.get(key),
                )
                if callee is None and isinstance(func, ast.Attribute):
                    usage.method = func.attr
                    usage.receiver_at = self.columns.start(func)
                found.append(usage)
        return found

    def _namespaces(self, scope: ast.AST) -> dict[str, Built]:
        """The stand-ins a scope binds to a name (`ns = SimpleNamespace(...)`), with the
        attributes it later stores on them (`ns.x = ...`)."""
        namespaces: dict[str, Built] = {}
        for statement in _own_statements(scope):
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
            ):
                built = self._built(statement.value, namespaces)
                if built is not None:
                    namespaces[statement.targets[0].id] = built
        for node in own_nodes(scope):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                holder = dotted(node.value)
                if holder in namespaces:
                    namespaces[holder].attributes.append(node.attr)
        return namespaces

    def _built(self, node: ast.expr, names: dict[str, Built] | None = None) -> Built | None:
        """The stand-in `node` builds (or, with `names`, a name bound to one), or None."""
        if isinstance(node, ast.Name) and names is not None:
            return names.get(node.id)
        if not isinstance(node, ast.Call):
            return None
        if self._namespace(node):
            members = {
                k.arg: inner
                for k in node.keywords
                if k.arg and (inner := self._built(k.value, names)) is not None
            }
            keywords = [k.arg for k in node.keywords if k.arg]
            return Built("a SimpleNamespace", keywords, members=members)
        callee = dotted(node.func) or ""
        name = callee.rpartition(".")[2]
        if name in _MOCKS or name == _AUTOSPEC:
            return self._mock(node, name)
        if callee in self.fakes:
            return Built(f"an instance of `{callee}`", sorted(self.fakes[callee]))
        if callee in self.factories:  # a copy: the caller may store more on its own
            return copy.deepcopy(self.factories[callee])
        return None

    def _factories(self) -> dict[str, Built]:
        """Module-level functions whose every return is a stand-in: name -> it (what
        the function stores on it before returning included), in definition order (a
        factory may call an earlier one)."""
        factories: dict[str, Built] = {}
        for node in self.tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            returns = [n for n in own_nodes(node) if isinstance(n, ast.Return)]
            if not returns or any(r.value is None for r in returns) or _fills(node):
                continue
            namespaces = self._namespaces(node)
            built = [self._built(r.value, namespaces) for r in returns if r.value is not None]
            first = built[0]
            if first is None or any(b is None or b.kind != first.kind for b in built):
                continue
            # several returns: what every one of them has
            shared = [a for a in first.attributes if all(a in b.attributes for b in built if b)]
            factories[node.name] = replace(first, attributes=shared, at=None)
            self.factories = factories  # seen by the functions defined after it
        return factories

    def _mock(self, node: ast.Call, name: str) -> Built | None:
        """A mock with a spec (`Mock(spec=C)`, `Mock(C)`, `create_autospec(C)`): what the
        spec has is there. Without one (or a spec not read here) it is no stand-in."""
        if not all(k.arg for k in node.keywords):
            return None
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        spec = keywords.get("spec", keywords.get("spec_set"))
        if spec is None and node.args:
            spec = node.args[0]
        if spec is None:
            return None
        attributes = [k for k in keywords if k not in _MOCK_OPTIONS]
        source = dotted(spec) or ""
        kind = f"a {name}(`{source}`)" if name == _AUTOSPEC else f"a {name}(spec=`{source}`)"
        if source in self.fakes:
            return Built(kind, sorted(self.fakes[source] | set(attributes)))
        cls = self._resolve(spec)
        if cls is None:
            return None
        return Built(kind, attributes, spec=cls)

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
        namespaces: dict[str, Built] | None = None
        for node in nodes:
            if isinstance(node, ast.Attribute) and dotted(node.value) == variable:
                if isinstance(node.ctx, ast.Store):
                    usage.attributes.append(node.attr)
                    value = assigned.get(id(node))
                    _value(usage, node.attr, value)
                    if isinstance(value, (ast.Call, ast.Name)):
                        if namespaces is None:
                            namespaces = self._namespaces(scope)
                        built = self._built(value, namespaces)
                        if built is not None:
                            at = self.columns.name_span(node)
                            usage.stand_ins[node.attr] = replace(built, at=at)
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


def _fills(function: ast.FunctionDef) -> bool:
    """Does the function store names it does not spell (`setattr(ns, key, value)`,
    `vars(ns).update(...)`, `ns.__dict__.update(...)`)? Then what it returns may have
    any attribute."""
    for node in own_nodes(function):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name == "setattr" and not (
                len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
            ):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "update":
                return True
    return False


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
