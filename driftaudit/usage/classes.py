"""Consumer classes in `UsageVisitor`: the class statement (its sglang bases, folded
through the consumer's own base classes; its overrides; the `SubclassUsage`), and the
types it gives its instances' attributes: the file's rows of the consumer's attribute
table (`UsageSet.fields`), read when matching (`match/receivers.py`), so that
`self.runner.tp_group` is typed wherever the class assigns `self.runner`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from driftaudit.astwalk import walk
from driftaudit.pysource import Columns, Located, dotted
from driftaudit.usage.exports import ConsumerExports, class_names
from driftaudit.usage.scopes import (
    CONSUMER,
    ClassContext,
    ConsumerClass,
    ConsumerInstance,
    OwnClass,
    Recorder,
)
from driftaudit.usage.usages import ClassFieldUsage, OverrideUsage, SubclassUsage


class ClassesMixin:
    """Part of `UsageVisitor` (it provides the names below)."""

    if TYPE_CHECKING:  # declared for the type checker; `UsageVisitor` defines them
        module: str
        columns: Columns
        usages: Recorder
        scopes: list[dict]
        defined_names: set[str]
        fields: dict[str, dict[str, tuple]]
        _class: ClassContext | None
        exports: ConsumerExports

        def lookup(self, name: str) -> Any: ...
        def bind(self, name: str, target: Any) -> None: ...
        def resolve_expr(self, node: ast.expr) -> str | None: ...
        def infer(self, node: ast.expr) -> Any: ...
        def _annotation(self, node: ast.expr | None) -> Any: ...
        def _at(self, node: Located) -> tuple[str, int, int]: ...
        def visit(self, node: ast.AST) -> Any: ...
        def visit_block(self, body: list[ast.stmt]) -> None: ...

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.bases, *node.decorator_list, *(k.value for k in node.keywords)]:
            self.visit(expr)
        direct = tuple(p for p in (self.resolve_expr(b) for b in node.bases) if p)
        own = class_names(node)
        self.defined_names.update(own)
        bases, names, inherits = self._folded(node, direct, own)
        key = f"{self.module}.{node.name}"
        saved = self._class
        row = self.fields.setdefault(key, {})
        self._class = ClassContext(node.name, bases, names, key, attr_types=row)
        self._class.first_base = self.resolve_expr(node.bases[0]) if node.bases else None
        self._class.writes = chain_writes(node)
        if not bases:
            self._class.wraps = self._wrapped(node)
        for statement in node.body:
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            if isinstance(statement, ast.AnnAssign):
                targets = [statement.target]
                if isinstance(statement.target, ast.Name):  # `x: Optional[Req] = None`
                    self._declare(key, statement.target.id, statement.annotation)
            for target in targets:
                if isinstance(target, ast.Name) and target.id.startswith("sglang_"):
                    self.usages.append(
                        ClassFieldUsage(
                            *self._at(target),
                            "",
                            name=target.id,
                            owner=node.name,
                            focus=self.columns.span(target),
                        )
                    )
        self.scopes.append({})  # class body names do not leak into methods
        self.visit_block(node.body)
        self.scopes.pop()
        self._class = saved
        self.bind(
            node.name,
            ConsumerClass(node.name, bases, names, inherits, key) if bases else OwnClass(key),
        )
        self._subclass_usage(node, bases, names, key)

    def _folded(self, node: ast.ClassDef, bases: tuple, own: frozenset):
        """(sglang bases, names, inherits its `__init__`) with the consumer bases' folded
        in (`class B(A)`, `class A(EngineBase)` in this module or imported)."""
        names = set(own)
        reached = list(bases)
        inherits = (
            len(node.bases) == 1
            and not node.keywords
            and not node.decorator_list
            and not {"__init__", "__new__"} & own
        )
        for base in node.bases:
            found = self._consumer_class(base)
            if found is not None:
                reached += [b for b in found.bases if b not in reached]
                names |= found.own
                inherits = inherits and found.inherits_init
        return tuple(reached), frozenset(names), inherits

    def _subclass_usage(self, node: ast.ClassDef, bases: tuple, own: frozenset, key: str) -> None:
        """The class as a `SubclassUsage` (its consumer bases folded in: `_folded`)."""
        if not bases:
            return
        abstract = any(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any((dotted(d) or "").endswith("abstractmethod") for d in s.decorator_list)
            for s in node.body
        )
        at = next(
            (b for b in node.bases if self.resolve_expr(b) or self._consumer_class(b)),
            next((b for b in node.bases if isinstance(b, ast.Name)), node),
        )
        self.usages.append(
            SubclassUsage(
                *self._at(node),
                bases[0],
                owner=node.name,
                bases=bases,
                own=own,
                abstract=abstract,
                focus=self.columns.span(at) if at is not node else None,
                key=key,
                consumer_bases=tuple(
                    found.key
                    for found in map(self._consumer_class, node.bases)
                    if found is not None and found.key
                ),
            )
        )

    def _consumer_class(self, node: ast.expr) -> ConsumerClass | None:
        """The consumer subclass of sglang classes an expression names: a name (an
        alias of it included) or a consumer module's attribute (`engines.HttpAdapter`)."""
        if isinstance(node, ast.Name):
            found = self.lookup(node.id)
            return found if isinstance(found, ConsumerClass) else None
        parts = (dotted(node) or "").split(".")
        base = self.lookup(parts[0]) if len(parts) > 1 else None
        if not (isinstance(base, str) and base.startswith(CONSUMER)):
            return None
        module = base[len(CONSUMER) :]
        for part in parts[1:-1]:
            module = f"{module}.{part}"
            if module not in self.exports.modules:
                return None
        found = self.exports.subclass(module, parts[-1])
        return ConsumerClass(parts[-1], *found) if found else None

    def _wrapped(self, node: ast.ClassDef) -> tuple[str, ...]:
        """The sglang classes the class's `__init__` takes an instance of (annotated)."""
        init = next(
            (
                s
                for s in node.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
            ),
            None,
        )
        if init is None:
            return ()
        args = [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs][1:]
        typed = (self._annotation(a.annotation) for a in args)
        return tuple(dict.fromkeys(t[1] for t in typed if t and t[0] == "path"))

    def _override(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        owner = self._class
        assert owner is not None  # called for a method, inside its class
        bases = owner.bases or owner.wraps
        if not bases or (node.name.startswith("__") and node.name.endswith("__")):
            return
        params = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
        self.usages.append(
            OverrideUsage(
                *self._at(node),
                "",
                owner.name,
                bases,
                node.name,
                params,
                node.args.vararg is not None and node.args.kwarg is not None,
                var_positional=node.args.vararg is not None,
                var_keyword=node.args.kwarg is not None,
                stand_in=not owner.bases,
                focus=self.columns.def_name(node),
            )
        )

    # ---- the attribute table ----------------------------------------------------

    def _record_attribute_type(
        self, target: ast.Attribute, value: ast.expr | None, annotation: ast.expr | None = None
    ) -> None:
        """`self.x = <typed value>` (or `self.x: T = ...`) in a consumer class's method:
        x's row of the class's attribute table. An annotation is the class's word on x;
        else the first typed value stays (`self.x = None` types nothing)."""
        if not isinstance(target.value, ast.Name):
            return
        holder = self.lookup(target.value.id)
        if isinstance(holder, ConsumerInstance):
            key = holder.owner.key
        elif isinstance(holder, tuple) and holder[:1] == ("self",) and len(holder) > 3:
            key = holder[3]
        else:
            return
        if annotation is not None and self._declare(key, target.attr, annotation):
            return
        typed = self.infer(value) if value is not None else None
        if typed is not None and typed != ("field", key, target.attr):
            self.fields.setdefault(key, {}).setdefault(target.attr, typed)

    def _declare(self, key: str, name: str, annotation: ast.expr) -> bool:
        typed = self._annotation(annotation)
        if typed is not None:
            self.fields.setdefault(key, {})[name] = typed
        return typed is not None


def chain_writes(node: ast.ClassDef) -> frozenset[str]:
    """The attributes of its attributes a class sets (`self.req.x = 1`: "req.x"; not
    `self.req.x += 1`, which reads it first)."""
    found = set()
    nodes = list(walk(node))
    augmented = {id(n.target) for n in nodes if isinstance(n, ast.AugAssign)}
    for child in nodes:
        if (
            isinstance(child, ast.Attribute)
            and isinstance(child.ctx, ast.Store)
            and id(child) not in augmented
        ):
            path = dotted(child)
            head, _, chain = (path or "").partition(".")
            if head in ("self", "cls") and "." in chain:
                found.add(chain)
    return frozenset(found)
