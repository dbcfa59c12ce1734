"""Normalised AST similarity of two functions, for finding copies of sglang code.

A function body becomes a token list in source order: node kinds, attribute and keyword
names, global names, and short constants; its own locals and parameters become `v0`, `v1`,
... in order of first appearance, and the docstring is dropped (comments never reach the
AST). Two copies with renamed locals and reworded comments give the same tokens.

Candidates are found by a bag of names (attributes, globals, keywords the body uses):
cheap to index, and a copy keeps almost all of them. The score is difflib's ratio of the
two token lists (a maintained longest-matching-blocks alignment; a copy that added or
dropped a few statements still scores high); `containment` says how much of the
original survives in the copy.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher

from driftaudit.astwalk import children, walk

MIN_TOKENS = 120  # shorter bodies (a few statements) look alike by accident
_SHORT_STRING = 24
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def body_statements(fn: FunctionNode) -> list[ast.stmt]:
    """The body without its docstring."""
    body = fn.body
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return body[1:]
    return body


def local_names(fn: FunctionNode) -> set[str]:
    """Parameters and names bound in the body (not declared global or nonlocal)."""
    return _bound(fn, walk(fn))


def _bound(fn: FunctionNode, nodes) -> set[str]:
    """`local_names` of `fn`, given every node of it (in any order)."""
    args = fn.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    declared: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return names - declared


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Pre-order, in source order (ast.walk is breadth-first)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def _constant(value: object) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= _SHORT_STRING else "<str>"
    if isinstance(value, bytes):
        return "<bytes>"
    return repr(value)


def function_tokens(fn: FunctionNode) -> tuple[list[str], list[int]]:
    """The normalised token list of a function's body, and the source line of each token."""
    statements = body_statements(fn)
    nodes = [node for statement in statements for node in _walk(statement)]
    # the locals from the same nodes, plus the rest of the function (one walk, not two)
    tokenised = {id(statement) for statement in statements}
    rest = [part for part in children(fn) if id(part) not in tokenised]
    local = _bound(fn, nodes + [node for part in rest for node in walk(part)])
    tokens: list[str] = []
    lines: list[int] = []

    def name(identifier: str) -> str:
        # every local is `v`: numbering them by first use would shift all names after
        # the first place where the copy differs
        return "v" if identifier in local else identifier

    line = 0
    for node in nodes:  # a statement comes first, with its line
        line = getattr(node, "lineno", line)
        kind = type(node).__name__
        if isinstance(node, ast.Name):
            emitted = [name(node.id)]
        elif isinstance(node, ast.Attribute):
            emitted = [kind, "." + node.attr]
        elif isinstance(node, ast.Constant):
            emitted = [_constant(node.value)]
        elif isinstance(node, ast.keyword):
            emitted = [f"{node.arg}=" if node.arg else "**"]
        elif isinstance(node, ast.arg):
            emitted = [name(node.arg)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            emitted = [kind, name(node.name)]
        else:
            emitted = [kind]
        tokens += emitted
        lines += [line] * len(emitted)
    return tokens, lines


_NODE_KINDS = frozenset(n for n in dir(ast) if isinstance(getattr(ast, n), type))


def name_bag(tokens: list[str]) -> frozenset[str]:
    """The names a body uses (attributes, globals, keywords): the index features."""
    return frozenset(
        t
        for t in set(tokens)
        if t.startswith(".")
        or t.endswith("=")
        or (t.isidentifier() and t != "v" and t not in _NODE_KINDS)
    )


@dataclass
class Similarity:
    ratio: float  # difflib's ratio of the two token lists
    containment: float  # share of the original's tokens found in the copy
    longest: int  # the longest run of tokens copied unchanged
    copied_lines: frozenset[int]  # lines of the original in runs of MIN_RUN tokens or more


MIN_RUN = 8


def compare(
    copy: list[str],
    original: list[str],
    original_lines: list[int],
    min_ratio: float = 0.0,
    min_containment: float = 0.0,
) -> Similarity | None:
    """How much of `original` is in `copy`; None when neither `min_ratio` nor
    `min_containment` can be reached (bounded first by the shared token counts, so most
    pairs are never aligned)."""
    if not copy or not original:
        return None
    shared = sum((Counter(copy) & Counter(original)).values())  # an upper bound of `matched`
    if 2.0 * shared / (len(copy) + len(original)) < min_ratio and (
        shared / len(original) < min_containment
    ):
        return None
    blocks = SequenceMatcher(None, copy, original, autojunk=False).get_matching_blocks()
    matched = sum(block.size for block in blocks)
    copied = frozenset(
        original_lines[i] for b in blocks if b.size >= MIN_RUN for i in range(b.b, b.b + b.size)
    )
    return Similarity(
        round(2.0 * matched / (len(copy) + len(original)), 3),
        round(matched / len(original), 3),
        max((b.size for b in blocks), default=0),
        copied,
    )


def functions(tree: ast.Module) -> Iterator[tuple[str, FunctionNode]]:
    """Every function and method with its qualified name (`Cls.meth`, `outer.inner`)."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, FunctionNode]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + child.name
                yield qualname, child
                yield from visit(child, qualname + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + child.name + ".")
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                yield from visit(child, prefix)

    yield from visit(tree, "")
