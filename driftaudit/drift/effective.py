"""The value a function ends up using for a parameter the caller leaves out.

A new default is not a new behaviour when the code replaces it by what the old default
was: `def f(x=None): x = x or {}` against `def f(x={})`; `sampling_seed=None` with
`if self.sampling_seed is None: self.sampling_seed = 42` against `sampling_seed=42`.
Read statically from the function's source (`ast`), in the order its body runs:

- at the top level of the body (of `__init__`, then of `__post_init__` for a class),
  assignments to the parameter, or to the attribute of `self` it was stored in, whose
  value is the parameter itself, `x or D`, `D if x is None else x` (and the other
  spellings of a None or truth test), and `if x is None: x = D` (`if not x:`, with an
  `else` that keeps it or sets another value);
- then every read of that attribute in the class's other methods: when each read is the
  same None (or truth) fallback, `self.x if self.x is not None else D`, `self.x or D`,
  the value used is D.

Anything else that writes the parameter or the attribute (a nested assignment, an
augmented one, a call in a test) makes the value unknown (None): the change is then kept.

Where the value is read, and under which conditions on the other parameters
(`read_conditions`): in the callable, in its class's methods, and through the tree
(`tree_conditions`), following a setting a component copies onto itself.
Hand-written: the forms are few and a data-flow library would not tell `x or D` apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.snapshot.surfaces._files import iter_sources

_SELF = "self"


Reads = Callable[[str, str], "list[str] | None"]


def effective_default(
    source: str, lineno: int, name: str, param: str, default: str, elsewhere: Reads | None = None
) -> str | None:
    """The source text of the value the callable `name` defined at `lineno` of `source`
    (a function, or a class whose constructor it is) ends up using for `param` when a
    call leaves it out at `default`; None when it cannot tell. `elsewhere(holder, attr)`:
    the tree's reads of `<...>.<holder>.<attr>` (see `tree_reads`), for the attribute
    the value is stored in, read through a name that spells its class."""
    tree = parsed(source)
    if tree is None:
        return None
    return effective_in(tree, lineno, name, param, default, elsewhere)


def parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def effective_in(
    tree: ast.Module,
    lineno: int,
    name: str,
    param: str,
    default: str,
    elsewhere: Reads | None = None,
) -> str | None:
    """`effective_default` in a parsed module."""
    node = _find(tree, lineno, name)
    if node is None:
        return None
    if isinstance(node, ast.ClassDef):
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        bodies = [methods[m] for m in ("__init__", "__post_init__") if m in methods]
        cls: ast.ClassDef | None = node
        # a generated constructor (a dataclass) has put the field on self already
        own = "__init__" in methods
        flow = _Flow(default, param if own else None, None if own else param)
    else:
        bodies, cls = [node], _owner(tree, node)
        flow = _Flow(default, param, None)
    for body in bodies:
        if flow.value is None:
            return None
        flow.run(body.body)
    if flow.value is None or flow.attr is None or cls is None:
        return flow.value
    used = _read_back(cls, flow.attr, flow.value, {id(b) for b in bodies})
    if used is None:
        return flow.value
    # outside the class, an instance is read through a name that spells it
    # (`req.sampling_params.sampling_seed` for a `SamplingParams`)
    reads = elsewhere(_snake(cls.name), flow.attr) if elsewhere is not None else []
    if reads is None:
        return flow.value
    holder = _Flow(flow.value, None, flow.attr, _snake(cls.name))
    for text in reads:
        read = _parse(text)
        used.add(None if read is None else holder._evaluate(read))
    return used.pop() if len(used) == 1 and None not in used else flow.value


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def tree_reads(root: Path, holder: str, attr: str, under: str = "sglang") -> list[str] | None:
    """The expressions of a tree's non-test sources below `under` that read
    `<...>.<holder>.<attr>` or `<holder>.<attr>`: the fallback around the read (`x.h.a
    or D`, a conditional expression testing it), else the read itself; None when one
    writes it."""
    needle = re.compile(rb"\b%s\.%s\b" % (re.escape(holder.encode()), re.escape(attr.encode())))
    found: list[str] = []
    flow = _Flow("None", None, attr, holder)
    for _, text in iter_sources(root, needle, under):
        tree = parsed(text)
        if tree is None:
            continue
        parents = {id(c): n for n in walk(tree) for c in ast.iter_child_nodes(n)}
        for node in walk(tree):
            if not (isinstance(node, ast.Attribute) and flow.holds(node)):
                continue
            if not isinstance(node.ctx, ast.Load):
                return None
            around = _around(node, parents)
            found.append(ast.unparse(around))
    return found


def _around(node: ast.expr, parents: dict[int, ast.AST]) -> ast.expr:
    """The fallback expression a read sits in (`read or D`, `read if read is not None
    else D`), else the read."""
    parent = parents.get(id(node))
    if isinstance(parent, (ast.Compare, ast.UnaryOp)):  # the test of a conditional
        parent = parents.get(id(parent))
    return parent if isinstance(parent, (ast.BoolOp, ast.IfExp)) else node


def _find(tree: ast.Module, lineno: int, name: str) -> ast.FunctionDef | ast.ClassDef | None:
    for node in walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first <= lineno <= node.lineno:
                return node
    return None


def _owner(tree: ast.Module, function: ast.FunctionDef) -> ast.ClassDef | None:
    for node in walk(tree):
        if isinstance(node, ast.ClassDef) and function in node.body:
            return node
    return None


class _Flow:
    """The parameter's value (source text) along a body, and where it is kept: the
    local name `local` and/or the attribute `self.<attr>`."""

    def __init__(self, value: str, local: str | None, attr: str | None, owner: str = _SELF):
        self.value: str | None = value
        self.local, self.attr = local, attr
        self.owner = owner  # the name the attribute is read through: self, or `holder`

    def holds(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id == self.local
        if not isinstance(node, ast.Attribute) or node.attr != self.attr:
            return False
        through = node.value
        name = through.id if isinstance(through, ast.Name) else None
        if self.owner != _SELF and isinstance(through, ast.Attribute):
            name = through.attr  # `req.sampling_params.seed`: read through `holder`
        return name == self.owner

    def run(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if self.value is None:
                return
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets: list[ast.expr] = (
                    list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
                )
                self._assign(targets, stmt.value)
            elif isinstance(stmt, ast.If) and self._tests(stmt.test):
                self._branch(stmt)
            elif any(self._writes(n) for n in walk(stmt)):
                self.value = None  # written where this does not follow it

    def _assign(self, targets: list[ast.expr], value: ast.expr) -> None:
        mine = [t for t in targets if self.holds(t)]
        stored = [
            t.attr
            for t in targets
            if isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name)
            and t.value.id == _SELF
            and self.holds(value)
        ]
        if stored and self.attr is None:
            self.attr = stored[0]  # `self.x = x`: the value is kept on self from here
            return
        if not mine:
            if any(isinstance(t, (ast.Tuple, ast.List)) and self._writes(t) for t in targets):
                self.value = None
            return
        self.value = self._evaluate(value)

    def _writes(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            return any(self.holds(t) or self._writes(t) for t in targets)
        if isinstance(node, (ast.Tuple, ast.List)) and isinstance(node.ctx, ast.Store):
            return any(self.holds(e) or self._writes(e) for e in node.elts)
        if isinstance(node, (ast.For, ast.With)):
            targets = (
                [node.target]
                if isinstance(node, ast.For)
                else [i.optional_vars for i in node.items if i.optional_vars is not None]
            )
            return any(self.holds(t) or self._writes(t) for t in targets)
        return isinstance(node, ast.NamedExpr) and self.holds(node.target)

    def _evaluate(self, node: ast.expr) -> str | None:
        """The value of `node` where the parameter holds `self.value`."""
        if self.holds(node):
            return self.value
        if (
            isinstance(node, ast.BoolOp)
            and isinstance(node.op, ast.Or)
            and len(node.values) == 2
            and self.holds(node.values[0])
        ):
            truth = _truth(self.value)
            if truth is None:
                return None
            return self.value if truth else _mentions_not(self, node.values[1])
        if isinstance(node, ast.IfExp):
            holds = self._test(node.test)
            if holds is None:
                return None
            return self._evaluate(node.body if holds else node.orelse)
        return _mentions_not(self, node)

    def _tests(self, test: ast.expr) -> bool:
        return any(self.holds(n) for n in walk(test) if isinstance(n, ast.expr))

    def _test(self, test: ast.expr) -> bool | None:
        """Does `test` (a None or truth test of the parameter) hold for `self.value`?"""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._test(test.operand)
            return None if inner is None else not inner
        if self.holds(test):
            return _truth(self.value)
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and self.holds(test.left)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            is_none = _is_none(self.value)
            if is_none is None:
                return None
            return is_none if isinstance(test.ops[0], ast.Is) else not is_none
        return None

    def _branch(self, stmt: ast.If) -> None:
        holds = self._test(stmt.test)
        if holds is None:
            self.value = None
            return
        self.run(stmt.body if holds else stmt.orelse)


def _mentions_not(flow: _Flow, node: ast.expr) -> str | None:
    """`node`'s text when it does not read the parameter (a value of its own)."""
    if any(flow.holds(n) for n in walk(node) if isinstance(n, ast.expr)):
        return None
    if any(isinstance(n, ast.Call) for n in walk(node)) and not _factory(node):
        return None  # computed at run time
    return ast.unparse(node)


def _factory(node: ast.expr) -> bool:
    """`dict()`, `list()`, `set()`: an empty container, as a literal is."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("dict", "list", "set", "tuple")
        and not node.args
        and not node.keywords
    )


_UNKNOWN = object()
_EMPTY: dict[str, object] = {"dict": {}, "list": [], "set": set(), "tuple": ()}


def _literal(text: str | None) -> object:
    try:
        return ast.literal_eval(text or "")
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        node = _parse(text)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and _factory(node):
            return _EMPTY[node.func.id]
        return _UNKNOWN


def _parse(text: str | None) -> ast.expr | None:
    try:
        return ast.parse(text or "", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _truth(text: str | None) -> bool | None:
    value = _literal(text)
    return None if value is _UNKNOWN else bool(value)


def _is_none(text: str | None) -> bool | None:
    value = _literal(text)
    if value is not _UNKNOWN:
        return value is None
    node = _parse(text)  # a name may be a constant bound to None; a call builds a value
    return False if isinstance(node, (ast.Call, ast.Lambda)) else None


def _read_back(cls: ast.ClassDef, attr: str, value: str, done: set[int]) -> set | None:
    """The values the class's other methods use for `self.<attr>` holding `value`: a
    read's fallback when it sits in one (`self.x or D`), else `value`; None (an
    unknown value among them) when one writes it."""
    used: set[str | None] = set()
    flow = _Flow(value, None, attr)
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef) or id(method) in done:
            continue
        parents = {id(c): n for n in walk(method) for c in ast.iter_child_nodes(n)}
        for node in walk(method):
            if isinstance(node, ast.Attribute) and flow.holds(node):
                if not isinstance(node.ctx, ast.Load):
                    return None  # written again: its reads are not all of this value
                used.add(flow._evaluate(_around(node, parents)))
    return used


# ---- where the parameter is read: the conditions a call must meet to use it ----------


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
    node = None if tree is None else _find(tree, lineno, name)
    if tree is None or node is None:
        return None
    if isinstance(node, ast.ClassDef):
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        init = methods.get("__init__")
        cls: ast.ClassDef | None = node
        if init is None:
            return _field_conditions(node, param, elsewhere)
    else:
        init, cls = node, _owner(tree, node)
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
        flow = _Flow("None", param if function is init else None, attr)
        names = _Names(stored, params if function is init else set())
        found = _conditions(function.body, flow, [], names)
        if found is None or len(found) != _count(function, flow):
            return None  # a read this does not place (in a `with`, a decorator...)
        reads += found
    if attr is not None and cls is not None and elsewhere is not None:
        outside = elsewhere(_snake(cls.name), attr)
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
            node = _parse(text)
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
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == _SELF
    }
    settings = {f: f for f in fields - written}
    names = _Names(settings, set())
    flow = _Flow("None", None, field)
    reads: list[list[str]] = []
    for method in methods:
        found = _conditions(method.body, flow, [], names)
        if found is None or len(found) != _count(method, flow):
            return None
        reads += found
    if elsewhere is not None:
        outside = elsewhere(_snake(cls.name), field)
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
    needle = re.compile(rb"\b%s\.%s\b" % (re.escape(holder.encode()), re.escape(attr.encode())))
    flow = _Flow("None", None, attr, holder)
    found: list[list[str]] = []
    for _, text in iter_sources(root, needle, under):
        tree = parsed(text)
        if tree is None:
            continue
        parents = {id(c): n for n in walk(tree) for c in ast.iter_child_nodes(n)}
        for node in walk(tree):
            if not (isinstance(node, ast.Attribute) and flow.holds(node)):
                continue
            if not isinstance(node.ctx, ast.Load):
                return None
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
                copied = _Flow("None", None, copy)
                reads = _conditions(method.body, copied, [], names)
                if reads is None or len(reads) != _count(method, copied):
                    return None
                found += [own[0] + r for r in reads]
            further = tree_conditions(root, _snake(cls.name), copy, under, depth + 1)
            if further is None:
                return None
            found += [own[0] + r for r in further]
    return found


class _One(_Flow):
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
        return target.attr if target.value.id == _SELF else None
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
                    and target.value.id == _SELF
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
    args.discard(_SELF)
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
    node = _parse(text)
    return _UNKNOWN if node is None else _decide(node, values)


def _decide(node: ast.expr, values: dict[str, str]) -> object:
    """The value of a test over literals (comparisons, `and`, `or`, `not`); _UNKNOWN."""
    if isinstance(node, ast.Name):
        return _literal(values[node.id]) if node.id in values else _UNKNOWN
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        operand = _decide(node.operand, values)
        if operand is _UNKNOWN:
            return _UNKNOWN
        if isinstance(node.op, ast.Not):
            return not operand
        return _literal(ast.unparse(node)) if isinstance(node.op, ast.USub) else _UNKNOWN
    if isinstance(node, ast.BoolOp):
        parts = [_decide(v, values) for v in node.values]
        deciding = isinstance(node.op, ast.Or)  # a true part decides `or`, a false `and`
        if any(p is not _UNKNOWN and bool(p) is deciding for p in parts):
            return deciding
        return _UNKNOWN if _UNKNOWN in parts else not deciding
    if isinstance(node, ast.Compare):
        left = _decide(node.left, values)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _decide(right_node, values)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except (TypeError, KeyError):
                return _UNKNOWN
            left = right
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return _literal(ast.unparse(node))
    return _UNKNOWN


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


def _count(node: ast.AST, flow: _Flow) -> int:
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


def _storing(node: ast.AST, flow: _Flow) -> bool:
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
                and target.value.id == _SELF
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
    body: list[ast.stmt], flow: _Flow, outer: list[str], names: _Names
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
    node: ast.expr, flow: _Flow, conditions: list[str], names: _Names
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


def _value_test(node: ast.expr, flow: _Flow) -> bool:
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
            if isinstance(through, ast.Name) and through.id == _SELF and node.attr in stored:
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
