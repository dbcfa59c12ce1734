"""Names a consumer file takes from `from sglang.x import *`: a name the file uses but
never binds (not a builtin, not private) comes from the star imports before it."""

from __future__ import annotations

import ast
import builtins

from driftaudit.astwalk import walk

_BUILTINS = frozenset(dir(builtins))
# PEP 695 type parameters (`def f[T]()`), on the Pythons that have them
_TYPE_PARAMS = tuple(
    getattr(ast, name) for name in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, name)
)


def bound_names(tree: ast.AST) -> frozenset[str]:
    """Every name the file binds anywhere, in any scope (an assignment, a parameter, a
    def, an import, an `except ... as`, a `global`): such a name is never taken from a
    star import, so a binding the visitor does not track cannot be mistaken for one."""
    names: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar, *_TYPE_PARAMS)):
            if name := getattr(node, "name", None):
                names.add(name)
    return frozenset(names)


def from_star(name: str, modules: list[str], bound: frozenset[str]) -> tuple[str, ...]:
    """The star-imported sglang modules `name` may come from, the last import first."""
    if not modules or name in bound or name in _BUILTINS or name.startswith("_"):
        return ()
    return tuple(reversed(modules))
