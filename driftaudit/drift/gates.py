"""Where a setting is read, and under which conditions on the other settings: a
default change counts only when the call can reach a read (`read_conditions`: in the
callable and its class's methods; `tree_conditions`: through the tree, following a
setting a component copies onto itself); `never_runs` decides them for a call's values.
The value each read ends up using is `effective.py`'s. Hand-written for the same reason.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.drift.effective import (
    SELF,
    UNKNOWN,
    Flow,
    attribute_reads,
    find_definition,
    literal_value,
    owner_class,
    parse_expr,
    parsed,
    snake,
)


def read_conditions(
    source: str | ast.Module,
    lineno: int,
    name: str,
    param: str,
    elsewhere: Gates | None = None,
) -> list[list[str]] | None:
    """For each read of `param` in the callable `name` at `lineno` of `source` (and of
    the attribute of `self` it is stored in, in the class's methods; a dataclass's field
    is its own attribute), the conditions (source text) that must all hold for the read
    to run: the tests of the `if`s and conditional expressions around it (negated in an
    `else`), and of the early exits (`if test: return`) before it, each naming only
    parameters of the callable (a `self.<attr>` stored from a parameter is written as
    that parameter); a read of that attribute elsewhere in the tree through a name that
    spells the class, with the conditions `elsewhere` gives it (see `tree_conditions`).
    None when a read cannot be followed."""
    tree = parsed(source) if isinstance(source, str) else source
    node = None if tree is None else find_definition(tree, lineno, name)
    if tree is None or node is None:
        return None
    if isinstance(node, ast.ClassDef):
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        init = methods.get("__init__")
        cls: ast.ClassDef | None = node
        if init is None:
            return _field_conditions(node, param, elsewhere)
    else:
        init, cls = node, owner_class(tree, node)
    params = {a.arg for a in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]}
    stored = _stored(init, params) if cls is not None else {}
    for method in cls.body if cls is not None else []:
        if isinstance(method, ast.FunctionDef) and method is not init:
            # set again elsewhere: the attribute no longer stands for the parameter, but
            # where a method sets it from its own arguments (a run-time reconfiguration)
            for write in walk(method):
                for target in _targets(write):
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr in stored
                        and not _from_arguments(method, getattr(write, "value", None))
                    ):
                        stored.pop(target.attr)
    reads: list[list[str]] = []
    functions = [init] + [
        m for m in (cls.body if cls is not None else []) if isinstance(m, ast.FunctionDef)
    ]
    attr = next((a for a, p in stored.items() if p == param), None)
    for function in dict.fromkeys(functions):
        flow = Flow("None", param if function is init else None, attr)
        names = _Names(stored, params if function is init else set())
        found = _conditions(function.body, flow, [], names)
        if found is None or len(found) != _count(function, flow):
            return None  # a read this does not place (in a `with`, a decorator...)
        reads += found
    if attr is not None and cls is not None and elsewhere is not None:
        outside = elsewhere(snake(cls.name), attr)
        if outside is None:
            return None
        reads += _in_terms(outside, stored)
    return reads


def _in_terms(reads: list[list[str]], settings: dict[str, str]) -> list[list[str]]:
    """Conditions on an object's attributes (`tree_conditions`) as conditions on the
    parameters they hold (attribute -> parameter); a condition naming an attribute that
    holds none (one the class sets itself) is dropped: it is not known."""
    kept: list[list[str]] = []
    for read in reads:
        conditions = []
        for text in read:
            node = parse_expr(text)
            leaves = [n for n in walk(node) if isinstance(n, ast.Name)] if node else []
            if node is None or not all(n.id in settings for n in leaves):
                continue
            for leaf in leaves:
                leaf.id = settings[leaf.id]
            conditions.append(ast.unparse(node))
        kept.append(conditions)
    return kept


def _field_conditions(
    cls: ast.ClassDef, field: str, elsewhere: Gates | None
) -> list[list[str]] | None:
    """`read_conditions` of a field of a class with a generated constructor (a
    dataclass): its reads as `self.<field>` in the class's methods, under tests of the
    fields no method writes, and its reads elsewhere in the tree."""
    fields = {
        s.target.id
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    }
    if field not in fields:
        return None
    methods = _methods(cls)
    written = {
        t.attr
        for m in methods
        for n in walk(m)
        for t in _targets(n)
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == SELF
    }
    settings = {f: f for f in fields - written}
    names = _Names(settings, set())
    flow = Flow("None", None, field)
    reads: list[list[str]] = []
    for method in methods:
        found = _conditions(method.body, flow, [], names)
        if found is None or len(found) != _count(method, flow):
            return None
        reads += found
    if elsewhere is not None:
        outside = elsewhere(snake(cls.name), field)
        if outside is None:
            return None
        reads += _in_terms(outside, settings)
    return reads


Gates = Callable[[str, str], "list[list[str]] | None"]
_COPIES = 2  # how many objects a setting is followed through (`self.y = server_args.y`)


def tree_conditions(
    root: Path, holder: str, attr: str, under: str = "sglang", depth: int = 0
) -> list[list[str]] | None:
    """For each read of `<...>.<holder>.<attr>` or `<holder>.<attr>` in a tree's non-test
    sources below `under`, the conditions it runs under, in terms of `<holder>`'s
    attributes (`if server_args.enable_x:` is `enable_x`): those of its function (see
    `read_conditions`); where it copies the setting onto the object a method runs on
    (`self.y = server_args.attr`), those of every read of `self.y` in that class, each
    also under the copy's own, a test of `self.z` copied from `server_args.z` being `z`
    (an attribute a method sets again stands for nothing, unless that method sets it
    from its own arguments: a run-time reconfiguration the caller asks for, not a
    setting). None when a read cannot be followed or one writes it."""
    reads = attribute_reads(root, holder, attr, under)
    if reads is None:
        return None
    found: list[list[str]] = []
    for node, parents in reads:
        function = _enclosing(node, parents)
        if function is None:
            found.append([])  # run at import or in a lambda: under no known setting
            continue
        cls = parents.get(id(function))
        cls = cls if isinstance(cls, ast.ClassDef) else None
        names = _Names(_copied(cls, holder) if cls is not None else {}, set(), holder)
        own = _conditions(function.body, _One(node), [], names)
        if own is None or len(own) != 1:
            return None
        copy = _copy_target(node, parents)
        if copy is None or cls is None:
            found += own
            continue
        if depth >= _COPIES:
            return None
        for method in _methods(cls):
            copied = Flow("None", None, copy)
            conditions = _conditions(method.body, copied, [], names)
            if conditions is None or len(conditions) != _count(method, copied):
                return None
            found += [own[0] + r for r in conditions]
        further = tree_conditions(root, snake(cls.name), copy, under, depth + 1)
        if further is None:
            return None
        found += [own[0] + r for r in further]
    return found


class _One(Flow):
    """A flow that follows one read (a node) only."""

    def __init__(self, node: ast.expr):
        super().__init__("None", None, None)
        self.node = node

    def holds(self, node: ast.expr) -> bool:
        return node is self.node


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _methods(cls: ast.ClassDef) -> list[Function]:
    return [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _enclosing(node: ast.AST, parents: dict[int, ast.AST]) -> Function | None:
    """The innermost function around `node` (None at module level, or in a lambda)."""
    parent = parents.get(id(node))
    while parent is not None and not isinstance(
        parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    ):
        parent = parents.get(id(parent))
    return parent if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _copy_target(node: ast.expr, parents: dict[int, ast.AST]) -> str | None:
    """`y` where the read is the whole value of `self.y = <read>`."""
    parent = parents.get(id(node))
    if not (isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1):
        return None
    target = parent.targets[0]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return target.attr if target.value.id == SELF else None
    return None


def _copied(cls: ast.ClassDef, holder: str) -> dict[str, str]:
    """attribute -> setting, for each `self.y = <...>.<holder>.z` in the class's methods
    whose other writes of `self.y` are the same copy or take the writing method's own
    arguments (a reconfiguration: `if obj.z is not None: self.y = obj.z`)."""
    copies: dict[str, str] = {}
    copying: set[int] = set()  # the methods that copy settings (a constructor)
    others: dict[str, list[tuple[Function, ast.expr | None]]] = {}
    for method in _methods(cls):
        for node in walk(method):
            for target in _targets(node):
                if not (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == SELF
                ):
                    continue
                value = getattr(node, "value", None)
                setting = _setting(value, holder) if isinstance(node, ast.Assign) else None
                if setting is not None and copies.get(target.attr, setting) == setting:
                    copies[target.attr] = setting
                    copying.add(id(method))
                else:
                    others.setdefault(target.attr, []).append((method, value))
    return {
        attr: setting
        for attr, setting in copies.items()
        if all(
            id(m) not in copying and not _reads_holder(v, holder) and _from_arguments(m, v)
            for m, v in others.get(attr, [])
        )
    }


def _reads_holder(value: ast.expr | None, holder: str) -> bool:
    """Does `value` read the object that holds the settings (`server_args.z and ...`)?"""
    return value is not None and any(
        (isinstance(n, ast.Name) and n.id == holder)
        or (isinstance(n, ast.Attribute) and n.attr == holder)
        for n in walk(value)
    )


def _setting(value: ast.AST | None, holder: str) -> str | None:
    """`z` for `<...>.<holder>.z` or `<holder>.z`."""
    if not isinstance(value, ast.Attribute):
        return None
    through = value.value
    name = through.id if isinstance(through, ast.Name) else None
    name = through.attr if isinstance(through, ast.Attribute) else name
    return value.attr if name == holder else None


def _from_arguments(method: Function, value: ast.expr | None) -> bool:
    """Does `value` read only the method's own arguments (not `self`)?"""
    args = {a.arg for a in [*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs]}
    args.discard(SELF)
    if value is None:
        return False
    leaves = [n for n in walk(value) if isinstance(n, ast.Name)]
    return (
        bool(leaves)
        and all(n.id in args for n in leaves)
        and not any(isinstance(n, ast.Call) for n in walk(value))
    )


@dataclass(frozen=True)
class _Names:
    """What a condition may name: `self.<attr>` stored from a parameter (attr ->
    parameter), the parameters themselves, and `<...>.<holder>.<setting>` (a setting
    read off the object that holds the parameters) as the setting."""

    stored: dict[str, str]
    params: set[str]
    holder: str | None = None


def never_runs(reads: list[list[str]] | None, values: dict[str, str]) -> bool:
    """Does every read fail one of its conditions where the parameters hold `values`
    (source text of literals; a parameter not in it is unknown)? False without reads."""
    return bool(reads) and all(
        any(_holds(c, values) is False for c in read) for read in reads or []
    )


def _holds(text: str, values: dict[str, str]) -> object:
    node = parse_expr(text)
    return UNKNOWN if node is None else _decide(node, values)


def _decide(node: ast.expr, values: dict[str, str]) -> object:
    """The value of a test over literals (comparisons, `and`, `or`, `not`); UNKNOWN."""
    if isinstance(node, ast.Name):
        return literal_value(values[node.id]) if node.id in values else UNKNOWN
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        operand = _decide(node.operand, values)
        if operand is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return not operand
        return literal_value(ast.unparse(node)) if isinstance(node.op, ast.USub) else UNKNOWN
    if isinstance(node, ast.BoolOp):
        parts = [_decide(v, values) for v in node.values]
        deciding = isinstance(node.op, ast.Or)  # a true part decides `or`, a false `and`
        if any(p is not UNKNOWN and bool(p) is deciding for p in parts):
            return deciding
        return UNKNOWN if UNKNOWN in parts else not deciding
    if isinstance(node, ast.Compare):
        left = _decide(node.left, values)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _decide(right_node, values)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except (TypeError, KeyError):
                return UNKNOWN
            left = right
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return literal_value(ast.unparse(node))
    return UNKNOWN


_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b if b is None or a is None else a == b,
    ast.IsNot: lambda a, b: a is not b if b is None or a is None else a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _count(node: ast.AST, flow: Flow) -> int:
    """The reads of the parameter (or its attribute) below `node`, but for storing it."""
    skipped = {id(n.value) for n in walk(node) if _storing(n, flow)}  # type: ignore[attr-defined]
    return sum(
        1
        for n in walk(node)
        if isinstance(n, (ast.Name, ast.Attribute))
        and flow.holds(n)
        and isinstance(n.ctx, ast.Load)
        and id(n) not in skipped
    )


def _storing(node: ast.AST, flow: Flow) -> bool:
    """`self.attr = param`, the attribute being the one followed."""
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and flow.holds(node.value)
        and flow.attr is not None
        and all(flow.holds(t) for t in node.targets)
    )


def _stored(init: ast.FunctionDef, params: set[str]) -> dict[str, str]:
    """attribute -> parameter, for `self.attr = param` in `__init__` with no other write
    of the attribute in the function."""
    stored: dict[str, str] = {}
    written: set[str] = set()
    for node in walk(init):
        for target in _targets(node):
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == SELF
            ):
                if target.attr in written:
                    stored.pop(target.attr, None)
                    continue
                written.add(target.attr)
                value = getattr(node, "value", None)
                if isinstance(value, ast.Name) and value.id in params:
                    stored[target.attr] = value.id
    return stored


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def _conditions(
    body: list[ast.stmt], flow: Flow, outer: list[str], names: _Names
) -> list[list[str]] | None:
    reads: list[list[str]] = []
    conditions = list(outer)
    for stmt in body:
        if isinstance(stmt, ast.If):
            found = _in_expr(stmt.test, flow, conditions, names)
            if found is None:
                return None
            reads += found
            test = _named(stmt.test, names)
            yes, no = _branches(stmt.test, conditions, names)
            for branch, within in ((stmt.body, yes), (stmt.orelse, no)):
                inner = _conditions(branch, flow, within, names)
                if inner is None:
                    return None
                reads += inner
            if test and not stmt.orelse and _exits(stmt.body):
                conditions = no  # what follows runs only when the test failed
            continue
        if _storing(stmt, flow):
            continue  # `self.attr = param`: the attribute's reads are followed instead
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if any(flow.holds(n) for n in walk(stmt) if isinstance(n, ast.expr)):
                return None  # read in a closure: when it runs is not followed
            continue
        nested = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if hasattr(stmt, f)]
        for handler in getattr(stmt, "handlers", []):
            nested.append(handler.body)
        for block in nested:
            inner = _conditions(block, flow, conditions, names)
            if inner is None:
                return None
            reads += inner
        for node in ast.iter_child_nodes(stmt):
            if isinstance(node, ast.expr):
                found = _in_expr(node, flow, conditions, names)
                if found is None:
                    return None
                reads += found
    return reads


def _in_expr(
    node: ast.expr, flow: Flow, conditions: list[str], names: _Names
) -> list[list[str]] | None:
    """The reads of the parameter in an expression, each under `conditions` and the
    tests of the conditional expressions around it."""
    if flow.holds(node):
        return [conditions] if isinstance(getattr(node, "ctx", None), ast.Load) else []
    if _value_test(node, flow):
        # `x is None`, `x != "none"`: a read that matters as the test's outcome (with x
        # None, `x is not None` keeps nothing running); itself when it names parameters
        own = _named(node, names)
        return [[*conditions, own] if own else conditions]
    reads: list[list[str]] = []
    if isinstance(node, ast.IfExp):
        yes, no = _branches(node.test, conditions, names)
        for part, within in ((node.test, conditions), (node.body, yes), (node.orelse, no)):
            found = _in_expr(part, flow, within, names)
            if found is None:
                return None
            reads += found
        return reads
    if isinstance(node, ast.BoolOp):  # each operand runs when the ones before did not decide
        within = list(conditions)
        for value in node.values:
            found = _in_expr(value, flow, within, names)
            if found is None:
                return None
            reads += found
            test = _named(value, names)
            if test:
                within = [*within, test if isinstance(node.op, ast.And) else f"not ({test})"]
        return reads
    if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
        return [conditions] * _count(node, flow)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            found_in = _in_expr(child, flow, conditions, names)
            if found_in is None:
                return None
            reads += found_in
    return reads


def _branches(test: ast.expr, conditions: list[str], names: _Names) -> tuple[list[str], list[str]]:
    """The conditions under the test's true branch (each conjunct that names only
    parameters) and under its false one (its negation, when all of it does)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    named = [_named(p, names) for p in parts]
    whole = _named(test, names)
    yes = [*conditions, *(n for n in named if n)]
    no = [*conditions, f"not ({whole})"] if whole else list(conditions)
    return yes, no


def _value_test(node: ast.expr, flow: Flow) -> bool:
    """A comparison of the parameter with literals (`x is None`, `x == "none"`,
    `x in ("a", "b")`)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and flow.holds(node.left)):
        return False
    try:
        ast.literal_eval(node.comparators[0])
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    return not isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))


def _named(test: ast.expr, names: _Names) -> str | None:
    """A test's text in terms of the callable's parameters (`self.t` stored from `t` is
    `t`, `server_args.t` is `t` with `server_args` the holder); None when it reads
    anything else (a global, a call, another attribute)."""
    stored = names.stored

    class Rename(ast.NodeTransformer):
        ok = True

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            through = node.value
            if isinstance(through, ast.Name) and through.id == SELF and node.attr in stored:
                return ast.Name(stored[node.attr], ast.Load())
            if names.holder is not None and _setting(node, names.holder) is not None:
                return ast.Name(node.attr, ast.Load())
            self.ok = False
            return node

        def visit_Name(self, node: ast.Name) -> ast.AST:
            self.ok = self.ok and node.id in names.params
            return node

        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.ok = False
            return node

    renamer = Rename()
    renamed = renamer.visit(ast.parse(ast.unparse(test), mode="eval"))
    return ast.unparse(renamed.body) if renamer.ok else None


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))
