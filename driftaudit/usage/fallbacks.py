"""Values that are never None, as the syntax shows: literals, displays, and None fallbacks.

`x or "auto"`, `x if x is not None else "auto"`, and a local name that such a fallback
guards (`if x is None: x = "auto"`, `x = x or "auto"`) or whose every assignment in the
function is such a value (`dtype_arg = torch_dtype if torch_dtype is not None else
"auto"`). A check that says "this argument must not be None" (a rule-pack advisory) uses
it to stay quiet where the consumer already falls back. Flow is not followed: a guard
anywhere in the function counts, as it is written to run before the use.
"""

from __future__ import annotations

import ast

from driftaudit.astwalk import own_nodes
from driftaudit.pysource import is_none

_DISPLAYS = (
    ast.List,
    ast.ListComp,
    ast.Dict,
    ast.DictComp,
    ast.Set,
    ast.SetComp,
    ast.Tuple,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.BinOp,  # arithmetic and `%` formatting: None would have raised
)
_BUILTINS = {"str", "int", "float", "bool", "list", "dict", "tuple", "set", "len", "repr"}
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_MAX_DEPTH = 8


class Fallbacks:
    """The names of one function body (or module) and what is assigned to them."""

    def __init__(self, scope: ast.AST):
        self.assigned: dict[str, list[ast.expr | None]] = {}  # None: a value not shown
        self.guarded: set[str] = set()
        args = getattr(scope, "args", None)
        if args is not None:
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    self.assigned.setdefault(arg.arg, []).append(None)
        for node in own_nodes(scope, _NESTED):  # a nested def itself matches no branch
            if isinstance(node, ast.If):
                self._guard(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
                        head, fallback = _falls_back(node.value)
                        if head == target.id and self.never_none(fallback, 1):
                            self.guarded.add(target.id)  # `x = x or "auto"`
                    else:
                        self._unknown(target)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._unknown(node.target)
            elif isinstance(node, (ast.AugAssign, ast.NamedExpr)):
                self._unknown(node.target)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                self._unknown(node.optional_vars)

    def _unknown(self, target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.assigned.setdefault(node.id, []).append(None)

    def _guard(self, node: ast.If) -> None:
        """`if x is None: x = <never None>` (also `if not x:`) with no `else`."""
        name = _tested_none(node.test)
        if name is None or node.orelse:
            return
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
                and self.never_none(statement.value, 1)
            ):
                self.guarded.add(name)

    def never_none(self, node: ast.expr | None, depth: int = 0) -> bool:
        if node is None or depth > _MAX_DEPTH:
            return False
        if isinstance(node, ast.Constant):
            return node.value is not None
        if isinstance(node, _DISPLAYS):
            return True
        if isinstance(node, ast.BoolOp):
            values = node.values if isinstance(node.op, ast.And) else node.values[-1:]
            return all(self.never_none(v, depth + 1) for v in values)
        if isinstance(node, ast.IfExp):
            head, fallback = _falls_back(node)
            if head is not None:
                return self.never_none(fallback, depth + 1)
            return self.never_none(node.body, depth + 1) and self.never_none(node.orelse, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id in _BUILTINS and node.func.id not in self.assigned
        if isinstance(node, ast.Name):
            if node.id in self.guarded:
                return True
            assigned = self.assigned.get(node.id)
            return bool(assigned) and all(
                v is not None and not _mentions(v, node.id) and self.never_none(v, depth + 1)
                for v in assigned or ()
            )
        return False


def _compared_to_none(test: ast.expr, ops: tuple[type, ...]) -> str | None:
    """`x <op> None` with `op` one of `ops`: the name compared."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ops)
        and is_none(test.comparators[0])
    ):
        return test.left.id
    return None


def _tested_none(test: ast.expr) -> str | None:
    """`x is None` or `not x`: the name tested."""
    if (name := _compared_to_none(test, (ast.Is, ast.Eq))) is not None:
        return name
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand.id if isinstance(test.operand, ast.Name) else None
    return None


def _falls_back(node: ast.expr) -> tuple[str | None, ast.expr | None]:
    """`x or D`, `x if x is not None else D`, `D if x is None else x`, `x if x else D`:
    (x, D); else (None, None)."""
    head = fallback = None
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
        head, fallback = node.values
    elif isinstance(node, ast.IfExp):
        tested, some = _tested_none(node.test), _tested_some(node.test)
        if tested is not None and _is_name(node.orelse, tested):
            head, fallback = node.orelse, node.body
        elif some is not None and _is_name(node.body, some):
            head, fallback = node.body, node.orelse
    if not isinstance(head, ast.Name):
        return None, None
    return head.id, fallback


def _tested_some(test: ast.expr) -> str | None:
    """`x is not None` or `x`: the name tested."""
    if isinstance(test, ast.Name):
        return test.id
    return _compared_to_none(test, (ast.IsNot, ast.NotEq))


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _mentions(node: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def never_none_arguments(call: ast.Call, fallbacks: Fallbacks) -> list[str]:
    """The arguments of a call, by position ("0") or keyword, whose value is never None."""
    found = [str(i) for i, a in enumerate(call.args) if fallbacks.never_none(a)]
    return found + [k.arg for k in call.keywords if k.arg and fallbacks.never_none(k.value)]
