"""Unit tests of the small readers behind return shapes, guards and mutations."""

from __future__ import annotations

import ast

import pytest

from driftaudit.drift.returns import annotation_arity
from driftaudit.match.mutations import container_kind
from driftaudit.usage.consumer_guards import branch_guards


@pytest.mark.parametrize(
    ("annotation", "arity"),
    [
        ("typing.Tuple[int, bool]", 2),
        ("tuple[typing.Union[a.B, c.D], bool, typing.Dict[str, int]]", 3),
        ("Tuple[int, ...]", None),
        ("Tuple[int, bool]...", None),  # cut off: not known
        ("typing.Optional[typing.Tuple[int, int]]", None),
        (None, None),
    ],
)
def test_annotation_arity(annotation, arity):
    assert annotation_arity(annotation) == arity


@pytest.mark.parametrize(
    ("annotation", "kind"),
    [
        ("List[int]", "list"),
        ("typing.Optional[list]", "list"),
        ("collections.OrderedDict", "dict"),
        ("OrderedDict[str, int]", "dict"),
        ("array.array", "array"),
        ("Deque[int]", "deque"),
        ("torch.Tensor", None),
    ],
)
def test_container_kind(annotation, kind):
    assert container_kind(annotation) == kind


@pytest.mark.parametrize(
    ("test", "body", "orelse"),
    [
        ('hasattr(X, "m")', [("has", "m")], []),
        ('not hasattr(X, "m")', [], [("has", "m")]),
        ('getattr(X, "m", None) is not None', [("has", "m")], []),
        ('getattr(X, "m")', [], []),  # no default: raises, guards nothing
        ('sglang.__version__ >= "0.5.10"', [("version", ">=")], [("version", "<")]),
        ('Version("0.5.10") > parse(sglang.__version__)', [("version", "<")], [("version", ">=")]),
        ('hasattr(X, "m") and sglang.__version__ < "0.6"', [("has", "m"), ("version", "<")], []),
        ('not (hasattr(X, "m") and hasattr(X, "n"))', [], [("has", "m"), ("has", "n")]),
        ("x > 1", [], []),
    ],
)
def test_branch_guards(test, body, orelse):
    """The guards each branch of an `if` holds (consumer_guards.branch_guards: every
    guard of an `and` in its body, every negation of an `or` in its else)."""
    found = branch_guards(ast.parse(test, mode="eval").body)
    assert [[g[:2] for g in branch] for branch in found] == [body, orelse]
