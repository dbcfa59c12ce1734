"""`ast.walk` and `ast.iter_child_nodes` without expression contexts, faster.

The stdlib versions run two generators per node (`iter_child_nodes` over `iter_fields`)
and yield the `Load`/`Store`/`Del` child of every name, attribute and subscript: about
a third of the nodes of sglang's modules, and nothing a model extractor looks at (a
node's `ctx` stays readable as an attribute). Hand-written for speed: the walks of a
cold run's extractors cost more than the parse. Same nodes, same order, minus contexts.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

_AST = ast.AST


def _node_classes(cls: type[ast.AST] = ast.AST) -> Iterator[type[ast.AST]]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _node_classes(sub)


# every node class's fields, contexts left out: a table of the `ast` module, built once
_FIELDS = {cls: tuple(f for f in cls._fields if f != "ctx") for cls in _node_classes()}


def children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` in field order (`ast.iter_child_nodes`), contexts left out."""
    found: list[ast.AST] = []
    for name in _FIELDS[node.__class__]:
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, _AST):
                    found.append(item)
        elif isinstance(value, _AST):
            found.append(value)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Breadth first from `node` (`ast.walk`'s order), contexts left out."""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        todo.extend(children(current))
        yield current


# what holds statements: only these nodes have statements as children
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
_BODIES = ("body", "handlers", "orelse", "finalbody", "cases")
_BODY_FIELDS = {cls: tuple(f for f in fields if f in _BODIES) for cls, fields in _FIELDS.items()}


def block_children(node: ast.AST) -> list[ast.AST]:
    """The statements, except handlers and match cases directly under `node`, in field
    order: `children(node)` less its expressions (which never hold a statement)."""
    found: list[ast.AST] = []
    for name in _BODY_FIELDS[node.__class__]:
        found += getattr(node, name, ())
    return found


def walk_statements(node: ast.AST) -> Iterator[ast.AST]:
    """`walk(node)` restricted to statements, handlers and match cases (same relative
    order: breadth first, and no statement lies below an expression)."""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        todo.extend(block_children(current))
        yield current


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def own_nodes(scope: ast.AST, nested: tuple[type, ...] = DEFINITIONS) -> Iterator[ast.AST]:
    """The nodes below `scope` that belong to it: a `nested` node (a function or class
    defined inside) is yielded, but what lies inside it is its own scope's."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, nested):
            todo.extend(ast.iter_child_nodes(node))


class NodeVisitor(ast.NodeVisitor):
    """`ast.NodeVisitor`, faster: the `visit_<Class>` method is looked up once per visitor
    and node class, and `generic_visit` goes over `children` (the same children in the same
    order, less the expression contexts, which no visitor here looks at). A node class with
    no method of its own (`visit_Constant` is `ast.NodeVisitor`'s deprecation shim) only
    has its children visited."""

    _methods: dict[tuple[type, type], Callable[..., Any]] = {}

    def visit(self, node: ast.AST):
        key = (self.__class__, node.__class__)
        method = NodeVisitor._methods.get(key)
        if method is None:
            method = getattr(self.__class__, "visit_" + node.__class__.__name__, None)
            if method is None or method is ast.NodeVisitor.visit_Constant:
                method = self.__class__.generic_visit
            NodeVisitor._methods[key] = method
        return method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        visit = self.visit
        for child in children(node):
            visit(child)
