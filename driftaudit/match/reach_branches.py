"""Lost reach behind a branch the consumer never takes (DA702).

In 0.5.16 `OpenAIServingChat._process_messages` reached `render_inkling_messages` only
`if self.chat_encoding_spec == "inkling"`; a test that builds the object itself and sets
`chat_encoding_spec` to None, "dsv32" or "dsv4" never ran that code in either release, so
its loss is nothing to this consumer. A lost callee is dropped when one guard on its old
path (see `snapshot.branch_conditions`) names a value the consumer controls and every value the
consumer gives it fails the guard:

- `self.<attr>` of the entry's object: the file of the call assigns the attribute on an
  object of the entry's class (`obj.attr = ...` with `obj` of a known sglang type, as an
  object built without `__init__` and filled by hand is), and every assignment of that
  attribute name in its sglang files is a literal (any other value, an augmented
  assignment or a `setattr(obj, "<attr>", ...)` makes it unknown; a `setattr` with a
  computed name is not followed);
- `param:<name>` of the entry: the call passes a literal for it, or leaves it out and
  its default (old tree) is one.

Anything unknown keeps the finding: only values the consumer wrote down are judged.
"""

from __future__ import annotations

import ast

from driftaudit.astwalk import walk
from driftaudit.drift.reach_changes import ReachLost
from driftaudit.snapshot.api_model import Function
from driftaudit.snapshot.branch_conditions import satisfied
from driftaudit.usage import CallUsage, MemberUsage, UsageSet

UNKNOWN = object()


class ConsumerValues:
    """The literal values a consumer gives sglang attributes and arguments."""

    def __init__(self, usages: UsageSet, types, files: dict[str, tuple[str, ast.Module]], old):
        self.files = files
        self.old = old
        # (file, class, attribute): the file sets the attribute on an object of the class
        self.set_on: set[tuple[str, str, str]] = set()
        for usage in usages.usages:
            if isinstance(usage, MemberUsage) and usage.store:
                cls = types.class_of(usage.receiver)
                if cls is not None:
                    self.set_on.add((usage.path, cls, usage.member))
        self._assigned: dict[str, list | object] = {}

    def attribute(self, path: str, cls: str | None, attr: str) -> list | object:
        """Every value the consumer assigns `attr`, when the file `path` sets it on an
        object of `cls`; else UNKNOWN (the object's own code sets it)."""
        if cls is None or (path, cls, attr) not in self.set_on:
            return UNKNOWN
        if attr not in self._assigned:
            self._assigned[attr] = self._scan(attr)
        return self._assigned[attr]

    def _scan(self, attr: str) -> list | object:
        values = []
        spelling = getattr(self.files, "spelling", None)  # a file not naming it sets none
        pairs = spelling(attr) if spelling is not None else self.files.values()
        for _, tree in pairs:
            for node in walk(tree):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(_names(t, attr) for t in targets):
                        value = _literal(node.value)
                        if value is UNKNOWN:
                            return UNKNOWN
                        values.append(value)
                elif isinstance(node, ast.AugAssign) and _names(node.target, attr):
                    return UNKNOWN
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "setattr"
                    and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value == attr
                ):
                    return UNKNOWN
        return values

    def argument(self, calls: list, entry: str, name: str) -> list | object:
        """The values the consumer's calls of `entry` pass for parameter `name`."""
        found = self.old.resolve(entry)
        function = found.obj if found is not None else None
        if not isinstance(function, Function) or function.param(name) is None:
            return UNKNOWN
        param = function.param(name)
        positions = [p.name for p in function.params if "positional" in p.kind]
        if positions and positions[0] in ("self", "cls"):
            positions = positions[1:]
        index = positions.index(name) if name in positions else None
        values = []
        for usage in calls:
            call = self._call_node(usage)
            if (
                call is None
                or any(isinstance(a, ast.Starred) for a in call.args)
                or any(k.arg is None for k in call.keywords)
            ):
                return UNKNOWN
            given = [k.value for k in call.keywords if k.arg == name]
            if index is not None and index < len(call.args):
                given.append(call.args[index])
            if given:
                value = _literal(given[0])
            else:
                value = _literal_text(param.default)
            if value is UNKNOWN:
                return UNKNOWN
            values.append(value)
        return values

    def _call_node(self, usage) -> ast.Call | None:
        if not isinstance(usage, (CallUsage, MemberUsage)) or usage.path not in self.files:
            return None
        for node in ast.walk(self.files[usage.path][1]):
            if isinstance(node, ast.Call) and _calls_at(node, usage.line, usage.column):
                return node
        return None


def never_taken(change: ReachLost, cls: str | None, calls: list, values: ConsumerValues) -> bool:
    """Is one guard on the lost callee's old path failed by every value the consumer
    gives its subject?"""
    for subject, op, accepted in change.guards:
        if subject.startswith("self."):
            given = values.attribute(calls[0].path, cls, subject[5:])
        elif subject.startswith("param:"):
            given = values.argument(calls, change.symbol, subject[6:])
        else:
            continue
        if given is not UNKNOWN and given and not any(satisfied(op, accepted, v) for v in given):
            return True
    return False


def _names(target: ast.expr, attr: str) -> bool:
    return isinstance(target, ast.Attribute) and target.attr == attr


def _literal(node: ast.expr | None) -> object:
    if isinstance(node, ast.Constant) and isinstance(
        node.value, (str, int, float, bool, type(None))
    ):
        return node.value
    return UNKNOWN


def _literal_text(text: str | None) -> object:
    try:
        return _literal(ast.parse(text, mode="eval").body) if text else UNKNOWN
    except (SyntaxError, ValueError):
        return UNKNOWN


def _calls_at(call: ast.Call, line: int, column: int) -> bool:
    """The call a usage at (line, column) records (1-based): it starts there, or its
    called attribute does (`obj.meth(...)` recorded at `meth`)."""
    func, column = call.func, column - 1
    if func.lineno == line and func.col_offset == column:
        return True
    if isinstance(func, ast.Attribute) and func.end_lineno == line:
        return func.end_col_offset - len(func.attr) == column
    return False
