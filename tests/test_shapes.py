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
        ('hasattr(X, "m")', ("has", "m"), None),
        ('not hasattr(X, "m")', None, ("has", "m")),
        ('getattr(X, "m", None) is not None', ("has", "m"), None),
        ('getattr(X, "m")', None, None),  # no default: raises, guards nothing
        ('sglang.__version__ >= "0.5.10"', ("version", ">="), ("version", "<")),
        ('Version("0.5.10") > parse(sglang.__version__)', ("version", "<"), ("version", ">=")),
        ("x > 1", None, None),
    ],
)
def test_branch_guards(test, body, orelse):
    found = branch_guards(ast.parse(test, mode="eval").body)
    assert tuple(g[:2] if g else None for g in found) == (body, orelse)
