"""Guards: consumer code that already handles an sglang name being absent.

The visitor keeps a stack of the guards around the code it reads and stamps each usage
with it; the matcher (`match/guards.py`) decides whether a guard covers a finding.
A guard is a plain tuple:

- ("has", name, line, path): `if hasattr(X, "name"):` or `if getattr(X, "name", None):`
  (the body runs only when the name exists; the `else` of `if not hasattr(...)` alike);
  `path` is the sglang path `X.name` names when X is an sglang module or class, else None;
- ("lacks", name, line, path): the other branch, for a known `path`: it runs only where
  the release lacks the name (the matcher asks each release);
- ("except", names, line): the body of a `try` whose handlers catch `names`
  (AttributeError, ImportError...);
- ("fallback", imported, line): the handler of `except ImportError`, whose `try` imports
  `imported` (sglang paths by the name they bind): it runs only if one of them fails;
- ("own", name, line): a read of `obj.name` after the consumer assigned `obj.name` in
  the same function (its own value, whatever sglang has);
- ("version", op, version, line): a branch taken only when `sglang.__version__ <op>
  version` (op already negated for an `else`).

A name stands for the value it was assigned, in this module or, imported from another
consumer module (`from .compat import SGLANG_GE_0_5`, `compat.IS_NEW`), in that one
(`stands_for`, read there with that module's imports: `usage/exports.py`).

Code after an `if` one branch of which always leaves (`if not hasattr(m, "x"): return`,
`raise`, `continue`, `sys.exit()`) runs under the other branch's guards, as an `else:`
would; a function body keeps the lasting guards (version, has, fallback) of the place
it is defined.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from driftaudit.pysource import dotted, is_none, leaves

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
# the sglang release read from the installed metadata: `importlib.metadata.version("sglang")`,
# `importlib_metadata.version`, `pkg_resources.get_distribution("sglang").version`
_DISTRIBUTION_VERSION = {"version", "get_version", "get_distribution"}
_DEPTH = 3  # names followed to the value they were assigned (`NEW = parse(v) >= ...`)

Guard = tuple
# the expression a name (or `module.NAME`) was last assigned in the scopes visible here,
# or, for a name another consumer module defines, what it stands for there (`Stands`)
ValueOf = Callable[[str], "ast.expr | Stands | None"]
# what a module-level name of a consumer module stands for in a test, read in that module
# (its imports resolve its names): ("guard", Guard) or ("version",), sglang's version
Stands = tuple


def _no_value(name: str) -> ast.expr | None:
    return None


def branch_guards(
    test: ast.expr, value_of: ValueOf = _no_value, resolve: Callable | None = None
) -> tuple[tuple[Guard, ...], tuple[Guard, ...]]:
    """The guards of an `if`'s body and of its `else`: `if A and B` holds every part's
    guard in its body, `if A or B` every part's negation in its `else`."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.BoolOp):
        parts = [branch_guards(v, value_of, resolve) for v in test.values]
        if isinstance(test.op, ast.And):  # true: every part holds; false: nothing known
            holds: tuple[Guard, ...] = tuple(g for body, _ in parts for g in body)
            fails: tuple[Guard, ...] = ()
        else:  # `A or B` false: no part holds; true: nothing known
            holds, fails = (), tuple(g for _, other in parts for g in other)
        return (fails, holds) if negated else (holds, fails)
    guard = condition_guard(test, value_of, resolve)
    if guard is None:
        guard, negated = _none_test(test, negated, resolve)
    if guard is None:
        return (), ()
    if guard[0] == "version":
        other = ("version", _NEGATE[guard[1]], *guard[2:])
        return ((other,), (guard,)) if negated else ((guard,), (other,))
    if guard[0] == "has" and guard[3] is not None:
        lacks = ("lacks", *guard[1:])
        return ((lacks,), (guard,)) if negated else ((guard,), (lacks,))
    return ((), (guard,)) if negated else ((guard,), ())


def condition_guard(
    test: ast.expr, value_of: ValueOf = _no_value, resolve: Callable | None = None, depth: int = 0
) -> Guard | None:
    """The guard a condition sets up for what runs only when it holds: the body of an
    `if`, or the later operands of `A and B` (`parse(sglang.__version__) < parse("0.5")
    and args.x`). A name stands for the value it was assigned (`if SGLANG_NEW:`)."""
    name = dotted(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
    if name is not None and depth < _DEPTH:
        value = value_of(name)
        if isinstance(value, tuple):  # defined in another consumer module
            return _at_line(value[1], test.lineno) if value[0] == "guard" else None
        if value is not None:
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
                return None  # a negated flag: its guard is in the `else`
            return condition_guard(value, value_of, resolve, depth + 1)
    return (
        _has_guard(test, resolve)
        or _version_guard(test, value_of, resolve)
        or (_bound_guard(test, resolve) if resolve else None)
    )


def _none_test(test: ast.expr, negated: bool, resolve) -> tuple[Guard | None, bool]:
    """`X is None` for X bound to an sglang name (or `getattr(m, "x", None) is None`):
    true where the name is missing (the `except ImportError: X = None` fallback ran);
    its `else` holds the name."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and is_none(test.comparators[0])
    ):
        guard = _has_guard(test.left, resolve) or (
            _bound_guard(test.left, resolve) if resolve else None
        )
        return guard, not negated
    return None, negated


def _bound_guard(test: ast.expr, resolve) -> Guard | None:
    """`if X:` / `X is not None` for a name bound to an sglang path: the body runs only
    where the name exists."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.IsNot) and is_none(test.comparators[0]):
            test = test.left
    if not isinstance(test, (ast.Name, ast.Attribute)):
        return None
    path = resolve(test)
    return ("has", path.rpartition(".")[2], test.lineno, None) if path else None


def after_guards(
    statement: ast.stmt, value_of: ValueOf = _no_value, resolve: Callable | None = None
) -> tuple[Guard, ...]:
    """The guards the rest of a block runs under after an `if` one branch of which leaves:
    `if <cond>: return` is the `else:` of the code after it (an `elif` chain adds each
    test's negation); after `assert <cond>`, what the body of `if <cond>:` holds."""
    if isinstance(statement, ast.Assert):
        return branch_guards(statement.test, value_of, resolve)[0]
    if not isinstance(statement, ast.If):
        return ()
    body, other = branch_guards(statement.test, value_of, resolve)
    body_exits, else_exits = leaves(statement.body), leaves(statement.orelse)
    if body_exits and not else_exits:
        rest = statement.orelse
        nested = after_guards(rest[-1], value_of, resolve) if len(rest) == 1 else ()
        return (*other, *nested)
    if else_exits and not body_exits:
        return body
    return ()


def _has_guard(test: ast.expr, resolve: Callable | None = None) -> Guard | None:
    """hasattr(X, "n"); getattr(X, "n", None) [is not None]; with X's sglang path."""
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
        owner = (
            resolve(args[0]) if resolve and isinstance(args[0], ast.Name | ast.Attribute) else None
        )
        return ("has", name, test.lineno, f"{owner}.{name}" if owner else None)
    return None


def _version_guard(
    test: ast.expr, value_of: ValueOf = _no_value, resolve: Callable | None = None
) -> Guard | None:
    """`sglang.__version__ >= "0.5.10"`, `Version(sglang.__version__) < Version("0.5")`,
    `version("sglang") >= "0.5"`, `SGL_VERSION < parse("0.5")` with `SGL_VERSION` a name
    assigned one of these."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or type(test.ops[0]) not in _OPS:
        return None
    op = _OPS[type(test.ops[0])]
    left = _unwrap(test.left, value_of, resolve)
    right = _unwrap(test.comparators[0], value_of, resolve)
    if left is _SGLANG and isinstance(right, str):
        return ("version", op, right, test.lineno)
    if right is _SGLANG and isinstance(left, str):
        flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
        return ("version", flipped, left, test.lineno)
    return None


_SGLANG = object()  # what `_unwrap` gives for sglang's own version


def _unwrap(node: ast.expr, value_of: ValueOf, resolve: Callable | None, depth: int = 0):
    """A version string, or `_SGLANG` for sglang's version, through `parse(...)`,
    `Version(...)`, `str(...)`, and names assigned one of them; else the node."""
    name = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if name is not None and depth < _DEPTH:
        value = value_of(name)
        if isinstance(value, tuple):  # defined in another consumer module
            return _SGLANG if value[0] == "version" else node
        if value is not None:
            return _unwrap(value, value_of, resolve, depth + 1)
    if _is_version(node, resolve):
        return _SGLANG
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _unwrap(node.args[0], value_of, resolve, depth + 1) if depth < _DEPTH else node
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return node


def _is_version(node: ast.expr, resolve: Callable | None) -> bool:
    """`sglang.__version__` (not another package's: `sglang_router.__version__`),
    `importlib.metadata.version("sglang")`, `pkg_resources.get_distribution("sglang")
    .version`, a name spelled `SGLANG_VERSION` whose value is not known here."""
    if isinstance(node, ast.Attribute) and node.attr == "version":
        node = node.value  # get_distribution("sglang").version
    if isinstance(node, ast.Call) and len(node.args) == 1:
        arg = node.args[0]
        named = isinstance(arg, ast.Constant) and arg.value == "sglang"
        function = dotted(node.func) or ""
        return named and function.rpartition(".")[2] in _DISTRIBUTION_VERSION
    name = dotted(node)
    if name is None:
        return False
    if name.endswith("SGLANG_VERSION"):
        return True
    path = resolve(node) if resolve is not None else name
    return bool(path) and path.endswith("__version__") and path.split(".")[0] == "sglang"


def _at_line(guard: Guard, line: int) -> Guard:
    """The guard placed at the test that reads it (not where its name was defined)."""
    at = {"version": 3, "has": 2, "lacks": 2}.get(guard[0])
    return guard if at is None else (*guard[:at], line, *guard[at + 1 :])


def stands_for(
    value: ast.expr, value_of: ValueOf = _no_value, resolve: Callable | None = None
) -> Stands | None:
    """What a module-level value stands for in a test of another module that imports it:
    a version or feature test (`parse(sglang.__version__) >= parse("0.5.10")`,
    `hasattr(sglang.srt.x, "y")`), or sglang's version itself; None otherwise."""
    guard = condition_guard(value, value_of, resolve)
    if guard is not None and guard[0] in ("version", "has"):
        return ("guard", guard)
    if _unwrap(value, value_of, resolve) is _SGLANG:
        return ("version",)
    return None


# what still holds when a function defined here runs
LASTING = {"version", "has", "lacks", "fallback"}


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
