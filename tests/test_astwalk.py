"""The fast AST walks the cold extractors use: the nodes and order of `ast.walk` and
`ast.iter_child_nodes`, less expression contexts; statement walks keep that order."""

from __future__ import annotations

import ast
import gc

from driftaudit import astwalk
from driftaudit.astwalk import block_children, children, walk, walk_statements
from driftaudit.store.store import collector_paused

SOURCE = '''\
import os

def f(a, b=1, *args, key=None, **kw):
    """doc"""
    x = a + b
    if x:
        y = [i for i in args if i]
    elif kw:
        try:
            z = {k: v for k, v in kw.items()}
        except (KeyError, ValueError) as exc:
            raise RuntimeError from exc
        else:
            pass
        finally:
            del x
    for item in args:
        while item:
            with open(item) as handle, open(key) as other:
                item = handle.read()
    match a:
        case [1, *rest]:
            return rest
        case {"k": value}:
            return value
    def inner():
        nonlocal x
        return lambda q: (yield q)
    class Local(os.PathLike):
        attr: int = 1
    return x, y
'''


def _without_contexts(nodes):
    return [n for n in nodes if not isinstance(n, ast.expr_context)]


def test_children_are_iter_child_nodes_without_contexts():
    tree = ast.parse(SOURCE)
    for node in ast.walk(tree):
        assert children(node) == _without_contexts(ast.iter_child_nodes(node))


def test_walk_is_ast_walk_without_contexts():
    tree = ast.parse(SOURCE)
    assert list(walk(tree)) == _without_contexts(ast.walk(tree))
    assert any(isinstance(n, ast.expr_context) for n in ast.walk(tree))  # some were left out


def test_statement_walk_keeps_ast_walk_order():
    tree = ast.parse(SOURCE)
    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, *blocks)):
            expected = [n for n in ast.walk(node) if isinstance(n, (ast.Module, *blocks))]
            assert list(walk_statements(node)) == expected
            assert block_children(node) == [
                n for n in ast.iter_child_nodes(node) if isinstance(n, blocks)
            ]


def test_collector_paused_restores_the_collector():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's own setting is left as it was
    finally:
        gc.enable()


def test_the_fast_node_visitor_visits_what_ast_node_visitor_does():
    source = "import x\nclass A(B):\n    def f(self, y=1):\n        return [z.w for z in y if z]\n"
    tree = ast.parse(source)

    def trail(base):
        class Trail(base):
            def __init__(self):
                self.seen = []

            def visit_Name(self, node):
                self.seen.append(node.id)
                self.generic_visit(node)

            def visit_Attribute(self, node):
                self.seen.append("." + node.attr)
                self.generic_visit(node)

            def visit_Constant(self, node):
                self.seen.append(repr(node.value))

        visitor = Trail()
        visitor.visit(tree)
        return visitor.seen

    assert (
        trail(astwalk.NodeVisitor)
        == trail(ast.NodeVisitor)
        == [
            "B",
            "1",
            ".w",
            "z",
            "z",
            "y",
            "z",
        ]
    )
