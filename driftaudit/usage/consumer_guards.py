"""Guards: consumer code that already handles an sglang name being absent.

The visitor keeps a stack of the guards around the code it reads and stamps each usage
with it; the matcher (`match/guards.py`) decides whether a guard covers a finding.
A guard is a plain tuple:

- ("has", name, line): `if hasattr(X, "name"):` or `if getattr(X, "name", None):` (the
  body runs only when the name exists; the `else` of `if not hasattr(...)` alike);
- ("except", names, line): the body of a `try` whose handlers catch `names`
  (AttributeError, ImportError...);
- ("fallback", imported, line): the handler of `except ImportError`, whose `try` imports
  `imported` (sglang paths by the name they bind): it runs only if one of them fails;
- ("own", name, line): a read of `obj.name` after the consumer assigned `obj.name` in
  the same function (its own value, whatever sglang has);
- ("version", op, version, line): a branch taken only when `sglang.__version__ <op>
  version` (op already negated for an `else`).
"""

from __future__ import annotations

import ast

from driftaudit.pysource import dotted, is_none

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def branch_guards(test: ast.expr) -> tuple[tuple | None, tuple | None]:
    """The guards of an `if`'s body and of its `else`."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # `if A and B:` runs its body only where every part holds: any part's guard
        guard = next(filter(None, map(condition_guard, test.values)), None)
        if guard is None:
            return None, None
        return (None, guard) if negated else (guard, None)  # `not (A and B)`: its else
    guard = condition_guard(test)
    if guard is None:
        return None, None
    if guard[0] == "version":
        other = ("version", _NEGATE[guard[1]], *guard[2:])
        return (other, guard) if negated else (guard, other)
    return (None, guard) if negated else (guard, None)


def condition_guard(test: ast.expr) -> tuple | None:
    """The guard a condition sets up for what runs only when it holds: the body of an
    `if`, or the later operands of `A and B` (`parse(sglang.__version__) < parse("0.5")
    and args.x`)."""
    return _has_guard(test) or _version_guard(test)


def _has_guard(test: ast.expr) -> tuple | None:
    """hasattr(X, "n"); getattr(X, "n", None) [is not None]; "n" in dir(X)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.IsNot) and is_none(test.comparators[0]):
            test = test.left
    if not isinstance(test, ast.Call) or not isinstance(test.func, ast.Name):
        return None
    args = test.args
    name = args[1].value if len(args) >= 2 and isinstance(args[1], ast.Constant) else None
    if not isinstance(name, str):
        return None
    if test.func.id == "hasattr" or (test.func.id == "getattr" and len(args) == 3):
        return ("has", name, test.lineno)
    return None


def _version_guard(test: ast.expr) -> tuple | None:
    """`sglang.__version__ >= "0.5.10"`, `Version(sglang.__version__) < Version("0.5")`."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or type(test.ops[0]) not in _OPS:
        return None
    op = _OPS[type(test.ops[0])]
    left, right = _unwrap(test.left), _unwrap(test.comparators[0])
    if _is_version(left) and isinstance(right, str):
        return ("version", op, right, test.lineno)
    if _is_version(right) and isinstance(left, str):
        flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
        return ("version", flipped, left, test.lineno)
    return None


def _unwrap(node: ast.expr):
    """A version string, the `__version__` name, through `parse(...)`/`Version(...)`."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return node


def _is_version(node) -> bool:
    name = dotted(node) if isinstance(node, ast.expr) else None
    return name is not None and (name.endswith("__version__") or name.endswith("SGLANG_VERSION"))


def caught(handlers: list[ast.ExceptHandler]) -> frozenset[str]:
    """The exception names a try's handlers catch (a bare except: BaseException)."""
    names: set[str] = set()
    for handler in handlers:
        if handler.type is None:
            names.add("BaseException")
            continue
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names.update((dotted(t) or "").rpartition(".")[2] for t in types)
    return frozenset(names)


def imported_in(body: list[ast.stmt], resolve) -> frozenset[tuple[str, str]]:
    """(bound name, sglang path) of each `from sglang... import` directly in `body`."""
    found = set()
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            for alias in statement.names:
                path = resolve(statement.module, alias.name)
                if path is not None:
                    found.add((alias.asname or alias.name, path))
    return frozenset(found)
