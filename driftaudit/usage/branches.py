"""Branches in `UsageVisitor`: the guard each branch runs under (`usage.guards`) and the
names an `isinstance` test or an `assert` narrows to an sglang class."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from driftaudit.usage.consumer_guards import after_guards, branch_guards, condition_guard

# the fields of a statement (a module, a handler) that hold a block of statements
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case, ast.mod)
_EXITS_BEFORE = (ast.If, ast.Assert)  # statements that may leave before the rest runs

if TYPE_CHECKING:
    from driftaudit.usage.scopes import Recorder


class BranchesMixin:
    """Part of `UsageVisitor` (it provides visit, bind, resolve_expr, scopes and usages)."""

    if TYPE_CHECKING:  # declared for the type checker; `UsageVisitor` defines them
        scopes: list[dict]
        usages: Recorder

        def visit(self, node: ast.AST) -> Any: ...
        def bind(self, name: str, target: Any) -> None: ...
        def resolve_expr(self, node: ast.expr) -> str | None: ...
        def value_of(self, name: str) -> ast.expr | None: ...
        def guard_value(self, name: str) -> ast.expr | tuple | None: ...

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        narrowed = self._isinstance(node.test)
        if narrowed:
            self.scopes.append(dict([narrowed]))
        body_guards, else_guards = branch_guards(node.test, self.guard_value, self.resolve_expr)
        self._guarded_visit(node.body, *body_guards)
        if narrowed:
            self.scopes.pop()
        self._guarded_visit(node.orelse, *else_guards)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """`A and B`: B runs only where A holds, so it takes A's guard."""
        if not isinstance(node.op, ast.And):
            self.generic_visit(node)
            return
        saved = self.usages.guards
        for value in node.values:
            self.visit(value)
            guard = condition_guard(value, self.guard_value, self.resolve_expr)
            if guard is not None:
                self.usages.guards = (*self.usages.guards, guard)
        self.usages.guards = saved

    def _guarded_visit(self, statements: list, *guards: tuple | None) -> None:
        saved = self.usages.guards
        self.usages.guards = (*saved, *filter(None, guards))
        self.visit_block(statements)
        self.usages.guards = saved

    def visit_block(self, statements: list) -> None:
        """A block's statements in order; after `if <cond>: return`, the rest runs under
        the guards of `not <cond>` (`usage/consumer_guards.py::after_guards`)."""
        saved = self.usages.guards
        for statement in statements:
            self.visit(statement)
            if statement.__class__ in _EXITS_BEFORE:
                after = after_guards(statement, self.guard_value, self.resolve_expr)
                if after:
                    self.usages.guards = (*self.usages.guards, *after)
        self.usages.guards = saved

    def generic_visit(self, node: ast.AST) -> None:
        """Every child in order, as `NodeVisitor` does; a block (the body of a `while`, a
        `with`, a handler, the module) through `visit_block`."""
        if not isinstance(node, _HOLDERS):
            super().generic_visit(node)  # type: ignore[misc]
            return
        for name in node._fields:
            value = getattr(node, name, None)
            if name in _BLOCK_FIELDS and isinstance(value, list):
                self.visit_block(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST) and name != "ctx":
                self.visit(value)

    def visit_Assert(self, node: ast.Assert) -> None:
        self.generic_visit(node)
        narrowed = self._isinstance(node.test)
        if narrowed:
            self.bind(*narrowed)

    def _isinstance(self, test: ast.expr) -> tuple[str, tuple[str, str]] | None:
        """`isinstance(x, Req)` -> ("x", ("path", "sglang...Req"))."""
        if (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
        ):
            classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            path = self.resolve_expr(classes[0])
            if path is not None and len(classes) == 1:
                return test.args[0].id, ("path", path)
        return None
