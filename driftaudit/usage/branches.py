"""Branches in `UsageVisitor`: the guard each branch runs under (`usage.guards`) and the
names an `isinstance` test or an `assert` narrows to an sglang class."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from driftaudit.usage.consumer_guards import branch_guards, condition_guard

if TYPE_CHECKING:
    from driftaudit.usage.scopes import Recorder


class BranchesMixin:
    """Part of `UsageVisitor` (it provides visit, bind, resolve_expr, scopes and usages)."""

    if TYPE_CHECKING:  # declared for the type checker; `UsageVisitor` defines them
        scopes: list[dict]
        usages: Recorder

        def visit(self, node: ast.AST) -> Any: ...
        def generic_visit(self, node: ast.AST) -> None: ...
        def bind(self, name: str, target: Any) -> None: ...
        def resolve_expr(self, node: ast.expr) -> str | None: ...

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        narrowed = self._isinstance(node.test)
        if narrowed:
            self.scopes.append(dict([narrowed]))
        body_guard, else_guard = branch_guards(node.test)
        self._guarded_visit(node.body, body_guard)
        if narrowed:
            self.scopes.pop()
        self._guarded_visit(node.orelse, else_guard)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """`A and B`: B runs only where A holds, so it takes A's guard."""
        if not isinstance(node.op, ast.And):
            self.generic_visit(node)
            return
        saved = self.usages.guards
        for value in node.values:
            self.visit(value)
            guard = condition_guard(value)
            if guard is not None:
                self.usages.guards = (*self.usages.guards, guard)
        self.usages.guards = saved

    def _guarded_visit(self, statements: list, guard: tuple | None) -> None:
        saved = self.usages.guards
        if guard is not None:
            self.usages.guards = (*saved, guard)
        for statement in statements:
            self.visit(statement)
        self.usages.guards = saved

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
