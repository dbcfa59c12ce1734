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

Where the value is read, and under which conditions on the other parameters, is
`gates.py`'s (it reads the tree through `attribute_reads` and this module's `Flow`).
Hand-written: the forms are few and a data-flow library would not tell `x or D` apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.snapshot.surfaces._files import iter_sources

SELF = "self"


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
    node = find_definition(tree, lineno, name)
    if node is None:
        return None
    if isinstance(node, ast.ClassDef):
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        bodies = [methods[m] for m in ("__init__", "__post_init__") if m in methods]
        cls: ast.ClassDef | None = node
        # a generated constructor (a dataclass) has put the field on self already
        own = "__init__" in methods
        flow = Flow(default, param if own else None, None if own else param)
    else:
        bodies, cls = [node], owner_class(tree, node)
        flow = Flow(default, param, None)
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
    reads = elsewhere(snake(cls.name), flow.attr) if elsewhere is not None else []
    if reads is None:
        return flow.value
    holder = Flow(flow.value, None, flow.attr, snake(cls.name))
    for text in reads:
        read = parse_expr(text)
        used.add(None if read is None else holder._evaluate(read))
    return used.pop() if len(used) == 1 and None not in used else flow.value


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def tree_reads(root: Path, holder: str, attr: str, under: str = "sglang") -> list[str] | None:
    """The expressions of a tree's non-test sources below `under` that read
    `<...>.<holder>.<attr>` or `<holder>.<attr>`: the fallback around the read (`x.h.a
    or D`, a conditional expression testing it), else the read itself; None when one
    writes it."""
    reads = attribute_reads(root, holder, attr, under)
    if reads is None:
        return None
    return [ast.unparse(_around(node, parents)) for node, parents in reads]


def attribute_reads(
    root: Path, holder: str, attr: str, under: str
) -> list[tuple[ast.Attribute, dict[int, ast.AST]]] | None:
    """Each read of `<...>.<holder>.<attr>` or `<holder>.<attr>` in a tree's non-test
    sources below `under`, with its module's parent links (child id -> parent); None
    when one writes it."""
    needle = re.compile(rb"\b%s\.%s\b" % (re.escape(holder.encode()), re.escape(attr.encode())))
    flow = Flow("None", None, attr, holder)
    found = []
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
            found.append((node, parents))
    return found


def _around(node: ast.expr, parents: dict[int, ast.AST]) -> ast.expr:
    """The fallback expression a read sits in (`read or D`, `read if read is not None
    else D`), else the read."""
    parent = parents.get(id(node))
    if isinstance(parent, (ast.Compare, ast.UnaryOp)):  # the test of a conditional
        parent = parents.get(id(parent))
    return parent if isinstance(parent, (ast.BoolOp, ast.IfExp)) else node


def find_definition(
    tree: ast.Module, lineno: int, name: str
) -> ast.FunctionDef | ast.ClassDef | None:
    for node in walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first <= lineno <= node.lineno:
                return node
    return None


def owner_class(tree: ast.Module, function: ast.FunctionDef) -> ast.ClassDef | None:
    for node in walk(tree):
        if isinstance(node, ast.ClassDef) and function in node.body:
            return node
    return None


class Flow:
    """The parameter's value (source text) along a body, and where it is kept: the
    local name `local` and/or the attribute `self.<attr>`."""

    def __init__(self, value: str, local: str | None, attr: str | None, owner: str = SELF):
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
        if self.owner != SELF and isinstance(through, ast.Attribute):
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
            and t.value.id == SELF
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


def _mentions_not(flow: Flow, node: ast.expr) -> str | None:
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


UNKNOWN = object()
_EMPTY: dict[str, object] = {"dict": {}, "list": [], "set": set(), "tuple": ()}


def literal_value(text: str | None) -> object:
    try:
        return ast.literal_eval(text or "")
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        node = parse_expr(text)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and _factory(node):
            return _EMPTY[node.func.id]
        return UNKNOWN


def parse_expr(text: str | None) -> ast.expr | None:
    try:
        return ast.parse(text or "", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _truth(text: str | None) -> bool | None:
    value = literal_value(text)
    return None if value is UNKNOWN else bool(value)


def _is_none(text: str | None) -> bool | None:
    value = literal_value(text)
    if value is not UNKNOWN:
        return value is None
    node = parse_expr(text)  # a name may be a constant bound to None; a call builds a value
    return False if isinstance(node, (ast.Call, ast.Lambda)) else None


def _read_back(cls: ast.ClassDef, attr: str, value: str, done: set[int]) -> set | None:
    """The values the class's other methods use for `self.<attr>` holding `value`: a
    read's fallback when it sits in one (`self.x or D`), else `value`; None (an
    unknown value among them) when one writes it."""
    used: set[str | None] = set()
    flow = Flow(value, None, attr)
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
