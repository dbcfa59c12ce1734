"""One source file -> one `Module` of the API model, with griffe (statically, no import).

griffe's visitor gives classes, functions, signatures, class and instance attributes
(`self.x = ...`), `__all__` and import aliases. The `ReturnShapes` extension adds
what griffe does not keep: the tuple lengths the return statements give, because
sglang's annotations are not always true and the statements are.
"""

from __future__ import annotations

import ast
from pathlib import Path

import griffe

from driftaudit.astwalk import block_children, children, walk, walk_statements
from driftaudit.pysource import any_within, lines_spelling
from driftaudit.snapshot.api_model import Alias, Attribute, Class, Function, Module, Obj, Param

_MAX_VALUE = 120
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def return_shapes(
    node: ast.AST, may_yield: bool = True
) -> tuple[list[int], bool, list[str], bool, list[str]]:
    """For a function node: the tuple lengths it returns, whether it returns anything
    else, the source of each element of the last tuple returned (in line order), whether
    it returns `cls(...)` (an alternative constructor), and the functions whose result it
    returns as it is (`return helper(x)`, `return self.meth(x)`; "?" for any other
    expression), so that a return shape can be followed through them. `may_yield`
    False (no `yield` in its text): only statements are walked, expressions hold no
    return."""
    nodes = children if may_yield else block_children
    tuples: list[int] = []
    calls: list[str] = []
    other = False
    builds_cls = False
    last: tuple[int, list[str]] | None = None
    stack = nodes(node)
    while stack:
        child = stack.pop()
        if isinstance(child, _SCOPES):
            continue
        if isinstance(child, ast.Return) and child.value is not None:
            value = child.value
            if isinstance(value, ast.Tuple) and not any(
                isinstance(e, ast.Starred) for e in value.elts
            ):
                tuples.append(len(value.elts))
                if last is None or child.lineno > last[0]:
                    last = (child.lineno, [_text(ast.unparse(e)) for e in value.elts])
            elif not (isinstance(value, ast.Constant) and value.value is None):
                other = True
                callee = _dotted(value.func) if isinstance(value, ast.Call) else None
                calls.append(callee or "?")
                if (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name)
                    and value.func.id == "cls"
                ):
                    builds_cls = True
        elif isinstance(child, (ast.Yield, ast.YieldFrom)):
            other = True  # a generator: the call returns a generator object
        stack.extend(nodes(child))
    return tuples, other, last[1] if last else [], builds_cls, sorted(set(calls))


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def self_assignments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """`self.x = ...` anywhere in a method (griffe keeps only those in __init__)."""
    args = node.args.posonlyargs + node.args.args
    if not args:
        return {}
    me = args[0].arg
    found: dict[str, int] = {}
    for child in walk_statements(node):  # assignments are statements
        targets: list[ast.expr] = []
        if isinstance(child, ast.Assign):
            targets = child.targets
        elif isinstance(child, (ast.AnnAssign, ast.AugAssign)):
            targets = [child.target]
        for target in targets:
            for item in walk(target):
                if (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == me
                ):
                    found.setdefault(item.attr, item.lineno)
    return found


def canonical(expr) -> str | None:
    """An annotation with every name replaced by its canonical path."""
    if expr is None:
        return None
    if isinstance(expr, str):
        return expr
    if isinstance(expr, (griffe.ExprName, griffe.ExprAttribute)):
        return expr.canonical_path
    try:
        return "".join(canonical(part) or "" for part in expr.iterate(flat=False))
    except AttributeError:
        return str(expr)


def _value_type(value) -> str | None:
    """`Foo(...)` -> the canonical path of Foo (the caller checks it is a class)."""
    if isinstance(value, griffe.ExprCall):
        return canonical(value.function)
    return None


class SglangFacts(griffe.Extension):
    """What griffe's visitor does not keep: return shapes, and classes that a later
    module-level assignment rebinds (`ServerArgs = msgspec.defstruct(..., ServerArgs)`),
    whose members griffe would otherwise lose."""

    def __init__(self) -> None:
        self.classes: dict[str, griffe.Class] = {}
        self.registered: dict[str, int] = {}  # names passed to module-level calls
        self.yields = True  # has the module's text a `yield`
        self.lines: list[str] | None = None  # its lines, when they can tell which function
        self.setattr_lines: list[int] | None = []  # that spell `setattr` (None: unknown)
        self.tree: ast.Module | None = None  # the module's syntax tree, as griffe parsed it

    def on_module_node(self, *, node, agent, **kwargs) -> None:
        if isinstance(node, ast.Module):
            self.tree = node
            self.registered = registered_names(node)
            code = agent.code
            # "\r" ends a line for the parser and not for split: then every function may
            self.lines = code.split("\n") if "yield" in code and "\r" not in code else None
            self.yields = "yield" in code
            if "setattr" not in code:
                self.setattr_lines = []
            else:  # with a "\r", split does not number lines as the parser does
                self.setattr_lines = None if "\r" in code else lines_spelling(code, ["setattr"])

    def on_function_instance(self, *, node, func, agent, **kwargs) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func.extra["driftaudit"]["returns"] = return_shapes(node, self._may_yield(node))
            if func.parent is not None and func.parent.is_class:
                assigned = func.parent.extra["driftaudit"].setdefault("self_attrs", {})
                for name, lineno in self_assignments(node).items():
                    assigned.setdefault(name, lineno)

    def _may_yield(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Has the function's text (decorators included) a `yield`?"""
        if self.lines is None:
            return self.yields
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        end = node.end_lineno or len(self.lines)
        return any("yield" in line for line in self.lines[start - 1 : end])

    def on_class_instance(self, *, node, cls, agent, **kwargs) -> None:
        if cls.parent is not None and cls.parent.is_module:
            self.classes[cls.name] = cls
        # only a method whose lines spell `setattr` can call it (a cheap test)
        if isinstance(node, ast.ClassDef) and self.setattr_lines != []:
            if sets_own_attributes(node, self.setattr_lines):
                cls.extra["driftaudit"]["registry"] = self.registered


def registered_names(module: ast.Module) -> dict[str, int]:
    """`Cls.register("NONE")`, `register_algorithm("EAGLE", ...)` at module level: the
    names a registry class may set on itself (as given, and upper-cased)."""
    found: dict[str, int] = {}
    for statement in module.body:
        call = getattr(statement, "value", None)
        if not isinstance(call, ast.Call) or not call.args:
            continue
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            if first.value.isidentifier():
                found.setdefault(first.value, statement.lineno)
                found.setdefault(first.value.upper(), statement.lineno)
    return found


def sets_own_attributes(node: ast.ClassDef, lines: list[int] | None = None) -> bool:
    """A class method that calls `setattr(cls, ...)`: a registry adding members (`lines`:
    those that spell `setattr`, ascending; a method on no such line is not walked)."""
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        end = method.end_lineno or method.lineno
        if lines is not None and not any_within(lines, method.lineno, end):
            continue
        me = method.args.args[0].arg
        for call in walk(method):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "setattr"
                and call.args
                and isinstance(call.args[0], ast.Name)
                and call.args[0].id == me
            ):
                return True
    return False


def _text(value, limit: int = _MAX_VALUE) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _convert(obj: griffe.Object | griffe.Alias) -> Obj | None:
    if isinstance(obj, griffe.Alias):  # never resolved here: its target is only a path
        return Alias(obj.name, obj.alias_lineno, obj.target_path)
    if obj.is_function:
        shapes = obj.extra.get("driftaudit", {}).get("returns", ([], False, [], False, []))
        tuples, other, elements, builds_cls, calls = shapes
        params = [
            Param(p.name, p.kind.value, _text(p.default), _text(p.annotation))
            for p in obj.parameters
        ]
        labels = sorted(obj.labels)
        # whole up to 600 characters: canonical paths make `Tuple[A, B]` long, and the
        # return shape (its arity) is read from it
        returns = _text(canonical(obj.returns), 600)
        if returns is None and builds_cls and obj.parent is not None and obj.parent.is_class:
            returns = obj.parent.canonical_path  # `return cls(...)`: an instance of the class
        function = Function(obj.name, obj.lineno, params, labels, tuples, other, elements, returns)
        function.return_calls = calls
        return function
    if obj.is_class:
        bases = []
        for base in obj.bases:
            bases.append(getattr(base, "canonical_path", None) or str(base))
        members: dict[str, Obj] = {}
        for name, member in obj.members.items():
            converted = _convert(member)
            if converted is not None:
                members[name] = converted
        _add_slots(members, obj.lineno)
        facts = obj.extra.get("driftaudit", {})
        for name, lineno in facts.get("self_attrs", {}).items():
            if name not in members:
                members[name] = Attribute(name, lineno, labels=["instance-attribute"])
        if facts.get("registry"):
            for name, lineno in facts["registry"].items():
                if name not in members:
                    members[name] = Attribute(name, lineno, labels=["registered"])
        return Class(obj.name, obj.lineno, bases, members, sorted(obj.labels))
    if obj.is_attribute:
        type_ = canonical(obj.annotation) or _value_type(obj.value)
        return Attribute(
            obj.name,
            obj.lineno,
            _text(obj.annotation),
            _text(obj.value),
            sorted(obj.labels),
            _text(type_),
        )
    return None


def _add_slots(members: dict[str, Obj], lineno: int | None) -> None:
    """`__slots__ = ("a", "b")` declares instance attributes a and b."""
    slots = members.get("__slots__")
    if not isinstance(slots, Attribute) or not slots.value:
        return
    try:
        names = ast.literal_eval(slots.value)
    except (ValueError, SyntaxError):
        return
    if isinstance(names, str):
        names = [names]
    for name in names if isinstance(names, (list, tuple)) else []:
        if isinstance(name, str) and name not in members:
            members[name] = Attribute(name, slots.lineno or lineno, labels=["instance-attribute"])


def extract_module(
    module_name: str, relpath: str, code: str, trees: list[ast.Module] | None = None
) -> Module:
    """Parse one file into a `Module`; a file that does not parse gives parse_error. The
    syntax tree griffe visited (left as `ast.parse` gives it) is appended to `trees`, for
    the other readers of the module."""
    facts = SglangFacts()  # one per module: what it learns of the tree stays here
    module = Module(module_name, relpath)
    try:
        visited = griffe.visit(
            module_name,
            Path(relpath),
            code,
            extensions=griffe.load_extensions(facts),
            lines_collection=griffe.LinesCollection(),
            modules_collection=griffe.ModulesCollection(),
        )
    except (SyntaxError, ValueError, RecursionError) as exc:
        module.parse_error = f"{type(exc).__name__}: {exc}"
        return module
    except Exception as exc:  # noqa: BLE001 - griffe failed on code Python accepts
        module.parse_error = f"griffe could not read it: {type(exc).__name__}: {exc}"
        return module
    finally:
        if trees is not None and facts.tree is not None:
            trees.append(facts.tree)
    try:
        _add_members(module, visited, facts.classes)
        module.exports = _literal_exports(visited)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError, RecursionError) as exc:
        # a name the model cannot hold: the module stays, opaque (nothing is reported
        # about its names) rather than ending the run
        return Module(module_name, relpath, parse_error=f"{type(exc).__name__}: {exc}")
    return module


def _add_members(module: Module, visited: griffe.Module, rebound: dict) -> None:
    for name, member in visited.members.items():
        if member.is_alias and name.endswith("/*"):
            module.wildcards.append(member.target_path)
            continue
        # `is_alias` first: `is_class` on an alias resolves it, and an import griffe
        # cannot follow (a conditional re-binding, a name from outside sglang) would raise
        if name in rebound and not member.is_alias and not member.is_class:
            member = rebound[name]  # rebound class: keep the class and its members
        converted = _convert(member)
        if converted is not None:
            module.members[name] = converted


def _literal_exports(visited: griffe.Module) -> list[str] | None:
    """`__all__` when it is a literal list of names; None (unknown: every public name)
    when it is computed (`[n for n in globals() if ...]`) or extended dynamically."""
    exports = visited.exports
    if exports is None or not all(isinstance(e, str) for e in exports):
        return None
    declared = visited.members.get("__all__")
    value = getattr(declared, "value", None)
    if value is not None and not isinstance(value, str):
        try:
            ast.literal_eval(str(value))
        except (ValueError, SyntaxError):
            return None
    return list(exports)
