"""How a call sglang makes binds to a consumer function installed in its place
(`match/overrides.py::binding_failure`), as Python binds it."""

from __future__ import annotations

import ast

import pytest

from driftaudit.match.overrides import binding_failure
from driftaudit.snapshot.callgraph import call_shapes
from driftaudit.usage import OverrideUsage


def _replacement(source: str) -> OverrideUsage:
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = [a.arg for a in positional[len(positional) - len(args.defaults) :]]
    defaulted += [
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    return OverrideUsage(
        "m.py",
        1,
        0,
        "",
        fn.name,
        ("sglang.x",),
        fn.name,
        [a.arg for a in [*positional, *args.kwonlyargs]],
        var_positional=args.vararg is not None,
        var_keyword=args.kwarg is not None,
        replaces=True,
        defaulted=defaulted,
        keyword_only=[a.arg for a in args.kwonlyargs],
    )


def _shape(call: str):
    fn = ast.parse(f"def caller():\n    {call}\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    (shape,) = call_shapes(fn, "f", {2})
    return shape


@pytest.mark.parametrize(
    ("replacement", "call", "bound", "reason"),
    [
        ("def f(q, k, d=None, *, neox=False): ...", "f(q, k, 1, neox=True)", False, None),
        ("def f(q, k, d=None, *, neox=False): ...", "f(q, k, freqs=1)", False, "`freqs=`"),
        ("def f(q, k, d=None, *, neox=False): ...", "f(q, k, 1, 2)", False, "4 positional"),
        ("def f(q, k): ...", "f(q, k=k)", False, None),
        ("def f(q, k): ...", "f(q, q=q)", False, "`q=` as well as positionally"),
        ("def f(q, k, *, scale): ...", "f(q, k)", False, "no `scale` (it requires one)"),
        ("def f(q, k, *, scale): ...", "f(q, k, **options)", False, None),
        ("def f(q, k): ...", "f(*args)", False, None),
        ("def f(q, *rest, **kw): ...", "f(q, 1, 2, x=3)", False, None),
        ("def f(self, x): ...", "obj.f(x)", True, None),
        ("def f(self, x): ...", "obj.f(x, 2)", True, "2 positional"),
        ("def f(self, x): ...", "Cls.f(obj, x)", False, None),
    ],
)
def test_binding(replacement: str, call: str, bound: bool, reason: str | None) -> None:
    found = binding_failure(_shape(call), _replacement(replacement), bound)
    if reason is None:
        assert found is None
    else:
        assert found is not None and found.startswith(reason)


def test_shape_of_a_method_call_through_a_class() -> None:
    shape = _shape("Cls.f(obj, x, y=1, **more)")
    assert (shape.positional, shape.keywords, shape.more_keywords, shape.through) == (
        2,
        ("y",),
        True,
        "Cls",
    )
