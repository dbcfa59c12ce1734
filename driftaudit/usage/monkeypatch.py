"""Monkeypatches the usage visitor follows: `Cls.meth = fn`, `setattr`, `mock.patch`,
`monkeypatch.setattr` and method replacements called with an sglang instance (inside
the installed function, the first parameter is typed as the patched class)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from driftaudit.usage.exports import SGLANG
from driftaudit.usage.scopes import Deferred, LocalFunction
from driftaudit.usage.usages import OverrideUsage, ReferenceUsage

if TYPE_CHECKING:
    from driftaudit.pysource import Columns, Located
    from driftaudit.usage.scopes import Recorder

PATCHERS = {"patch"}  # mock.patch("sglang.x.y"), mocker.patch(...)


# a patcher's keyword that makes it set a missing attribute instead of raising, with the
# value that does (pytest's `monkeypatch.setattr(..., raising=False)`, mock's `create=True`)
_TOLERANT = {"raising": False, "create": True}


def _tolerant(node: ast.Call) -> bool:
    return any(
        k.arg in _TOLERANT
        and isinstance(k.value, ast.Constant)
        and k.value.value is _TOLERANT[k.arg]
        for k in node.keywords
    )


class MonkeypatchMixin:
    """Part of `UsageVisitor` (it provides lookup, resolve_expr, infer, columns, usages
    and the deferred-body queues)."""

    if TYPE_CHECKING:  # declared for the type checker; `UsageVisitor` defines them
        columns: Columns
        usages: Recorder
        _queue: list[Deferred]
        _late: list[Deferred]
        _visited: dict[int, Deferred]
        _patched: dict[int, tuple]

        def lookup(self, name: str) -> Any: ...
        def resolve_expr(self, node: ast.expr) -> str | None: ...
        def infer(self, node: ast.expr) -> Any: ...
        def _at(self, node: Located) -> tuple[str, int, int]: ...

    def _maybe_install(self, target: ast.Attribute, value: ast.expr) -> None:
        """`Cls.meth = fn`: inside fn, the first parameter is a Cls."""
        owner = self.resolve_expr(target.value)
        if owner is None or not isinstance(value, ast.Name):
            return
        local = self.lookup(value.id)
        if isinstance(local, LocalFunction):
            self._install(local.node, ("path", owner))
            self._replacement(target, local.node, owner, target.attr, value)

    def _replacement(self, at: Located, node, owner: str, name: str, value: ast.expr) -> None:
        """The consumer function installed as `owner.name`: sglang now calls it in place
        of its own, so it is checked as an override of it (DA305), at the install."""
        if isinstance(node, ast.Lambda):
            return
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        params = [a.arg for a in [*positional, *args.kwonlyargs]]
        defaulted = [a.arg for a in positional[len(positional) - len(args.defaults) :]]
        kw_defaults = zip(args.kwonlyargs, args.kw_defaults, strict=True)
        defaulted += [a.arg for a, d in kw_defaults if d is not None]
        self.usages.append(
            OverrideUsage(
                *self._at(at),
                "",
                node.name,
                (owner,),
                name,
                params,
                args.vararg is not None and args.kwarg is not None,
                var_positional=args.vararg is not None,
                var_keyword=args.kwarg is not None,
                replaces=True,
                defaulted=defaulted,
                keyword_only=[a.arg for a in args.kwonlyargs],
                focus=self.columns.span(value),
            )
        )

    def _install(self, node, owner: tuple) -> None:
        """Type the first parameter of a function that acts as a method of `owner`."""
        if id(node) in self._patched:
            return
        self._patched[id(node)] = owner
        done = self._visited.get(id(node))
        for job in [*self._queue, *self._late]:
            if job.node is node:
                job.patched = owner
                return
        if done is not None:  # its body was read already: read it again, knowing self
            self._queue.append(Deferred(node, done.scopes, done.owner, owner, done.guards))

    def _patch_call(self, node: ast.Call, name: str) -> None:
        """setattr / patch.object / mock.patch / monkeypatch.setattr on sglang targets."""
        args = node.args
        string = (
            args[0].value
            if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str)
            else None
        )
        # the builtin setattr writes; the patchers look the target up and raise without
        # it, unless told not to (`raising=False`, `create=True`): then a plain write
        patcher = not (isinstance(node.func, ast.Name) and node.func.id == "setattr")
        patcher = patcher and not _tolerant(node)
        if string and string.startswith(SGLANG + ".") and name in {"setattr", *PATCHERS}:
            focus = self.columns.span(args[0])  # mock.patch("sglang..."), monkeypatch.setattr
            self.usages.append(
                ReferenceUsage(*self._at(node), string, store=True, focus=focus, patcher=patcher)
            )
            target, _, member = string.rpartition(".")
            self._installed(node, target, member, args[1] if len(args) > 1 else None)
            return
        if name in ("setattr", "object") and len(args) >= 2:
            owner = self.resolve_expr(args[0])
            attribute = args[1]
            if owner is None or not (
                isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)
            ):
                return
            self.usages.append(
                ReferenceUsage(
                    *self._at(node),
                    f"{owner}.{attribute.value}",
                    store=True,
                    focus=self.columns.span(attribute),
                    patcher=patcher,
                )
            )
            self._installed(node, owner, attribute.value, args[2] if len(args) > 2 else None)

    def _installed(self, node: ast.Call, owner: str, name: str, value: ast.expr | None) -> None:
        """The consumer function a patcher puts in place of `owner.name` (its value
        argument, or mock's `new=`), read as an install."""
        if value is None:
            value = next((k.value for k in node.keywords if k.arg in ("new", "value")), None)
        if isinstance(value, ast.Name):
            local = self.lookup(value.id)
            if isinstance(local, LocalFunction):
                self._install(local.node, ("path", owner))
                self._replacement(node, local.node, owner, name, value)

    def _replacement_call(self, func: ast.Name, first: ast.expr) -> None:
        """`replaced_forward(self.logits_processor, ...)`: a function whose first
        parameter is `self`, called with an sglang instance, is a method replacement."""
        local = self.lookup(func.id)
        if not isinstance(local, LocalFunction) or isinstance(first, ast.Starred):
            return
        params = [*local.node.args.posonlyargs, *local.node.args.args]
        if params and params[0].arg == "self":
            typed = self.infer(first)
            if typed is not None:
                self._install(local.node, typed)
