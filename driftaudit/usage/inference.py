"""Expression types in `UsageVisitor`: the `TypeRef` of a value (see types.py) when it is
an sglang instance, through calls, attributes, elements, comprehensions, factories on
consumer subclasses and `super()`, and attributes of the consumer's own objects (typed
through its attribute table); and the types annotations give."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from driftaudit.usage.scopes import ConsumerClass, ConsumerInstance, LocalFunction, OwnClass
from driftaudit.usage.types import annotation_type, is_type

SUPER = "\0super"  # scope key: (TypeRef of `super()`, the class) in a subclass method


class InferenceMixin:
    """Part of `UsageVisitor` (it provides lookup, resolve_expr, scopes and _bind_loop)."""

    if TYPE_CHECKING:  # declared for the type checker; `UsageVisitor` defines them
        scopes: list[dict]

        def lookup(self, name: str) -> Any: ...
        def resolve_expr(self, node: ast.expr) -> str | None: ...
        def _bind_loop(self, target: ast.expr, iterable: ast.expr) -> None: ...

    def infer(self, node: ast.expr):
        """The TypeRef of an expression's value, when it is an sglang instance."""
        if isinstance(node, ast.Name):
            binding = self.lookup(node.id)
            return binding if is_type(binding) else None
        if isinstance(node, ast.Call):
            func = node.func
            path = self.resolve_expr(func)
            if path is not None:
                return ("call", path)
            if isinstance(func, ast.Name):
                local = self.lookup(func.id)
                if func.id == "super" and local is None:
                    return self._super(node)
                if isinstance(local, ConsumerClass):
                    return local.instance()
                if isinstance(local, OwnClass):
                    return ("obj", local.key)
                return local.returns if isinstance(local, LocalFunction) else None
            if isinstance(func, ast.Attribute):
                base = self.infer(func.value)
                if base is None and isinstance(func.value, ast.Name):
                    owner = self.lookup(func.value.id)  # `MyBatch.init_new(...)`: a factory
                    if isinstance(owner, ConsumerClass) and func.attr not in owner.own:
                        base = owner.instance()
                return ("ret", base, func.attr) if base else None
            return None
        if isinstance(node, ast.Attribute):
            if self.resolve_expr(node) is not None:
                return None
            if isinstance(node.value, ast.Name):
                holder = self.lookup(node.value.id)
                if isinstance(holder, ConsumerInstance):
                    return self._own_attribute(holder.owner, node.attr)
            base = self.infer(node.value)
            if base and base[0] == "obj":
                return ("field", base[1], node.attr)
            return ("attr", base, node.attr) if base else None
        if isinstance(node, ast.Subscript):
            base = self.infer(node.value)
            return ("elem", base) if base else None
        if isinstance(node, ast.Await):
            return self.infer(node.value)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts:
            first = self.infer(node.elts[0])
            return ("list", first) if first else None
        if isinstance(node, ast.Dict) and node.values and node.keys[0] is not None:
            first = self.infer(node.values[0])
            return ("map", first) if first else None
        if isinstance(node, ast.DictComp):
            self.scopes.append({})
            for generator in node.generators:
                self._bind_loop(generator.target, generator.iter)
            element = self.infer(node.value)
            self.scopes.pop()
            return ("map", element) if element else None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            self.scopes.append({})  # the element may use the comprehension's variables
            for generator in node.generators:
                self._bind_loop(generator.target, generator.iter)
            element = self.infer(node.elt)
            self.scopes.pop()
            return ("list", element) if element else None
        return None

    def _super(self, node: ast.Call):
        """`super()` (or `super(Cls, self)` in Cls) in a method of a subclass whose first
        base is sglang's: the base's members, none of the subclass's own."""
        found = self.lookup(SUPER)
        if found is None:
            return None
        typed, owner = found
        if node.args or node.keywords:
            named = node.args[0] if len(node.args) == 2 and not node.keywords else None
            if not (isinstance(named, ast.Name) and named.id == owner):
                return None
        return typed

    @staticmethod
    def _own_attribute(owner, name: str):
        """`self.x` in a consumer class with no sglang base: its type as far as the walk
        has read the class, else (assigned somewhere in the class) its row of the
        attribute table, read when matching: a method below may assign it."""
        found = owner.attr_types.get(name)
        if found is None and name in owner.own and owner.key:
            return ("field", owner.key, name)
        return found

    def _annotation(self, node: ast.expr | None):
        """An annotation's TypeRef: sglang types, and the consumer's own classes."""
        return annotation_type(node, self._annotated)

    def _annotated(self, node: ast.expr) -> str | tuple | None:
        path = self.resolve_expr(node)
        if path is None and isinstance(node, ast.Name):
            local = self.lookup(node.id)
            if isinstance(local, ConsumerClass):
                return local.instance()
            if isinstance(local, OwnClass):
                return ("obj", local.key)
        return path
