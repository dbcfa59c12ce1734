"""Bind a call's argument shape to a signature, as Python would, and say what fails.

A call is checked against the new signature only when it binds cleanly to the old
one: calls that were already dynamic or wrong are not the upgrade's doing.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit.snapshot.api_model import Function, Param
from driftaudit.usage import CallUsage
from driftaudit.usage.usages import CallShape


@dataclass
class Binding:
    """Which parameter each argument lands in, and what Python would reject."""

    positional: list[str]  # parameter name per positional argument
    unknown_keywords: list[str]
    too_many_positional: bool
    missing: list[str]  # required parameters given no value

    @property
    def ok(self) -> bool:
        return not (self.unknown_keywords or self.too_many_positional or self.missing)


def bind(params: list[Param], call: CallUsage | CallShape) -> Binding:
    slots = [p for p in params if p.positional]
    takes_varargs = any(p.kind == "variadic positional" for p in params)
    takes_varkw = any(p.kind == "variadic keyword" for p in params)
    keyword_names = {p.name for p in params if p.keyword}
    positional = [p.name for p in slots[: call.positional]]
    too_many = call.positional > len(slots) and not takes_varargs
    unknown = [k for k in call.keywords if k not in keyword_names and not takes_varkw]
    given = set(positional) | set(call.keywords)
    missing = []
    if not (call.star_args or call.star_kwargs or call.partial):
        missing = [p.name for p in params if p.required and p.name not in given]
    return Binding(positional, unknown, too_many, missing)


def call_params(fn: Function, unbound_method: bool) -> list[Param]:
    """The parameters a call fills: `self` is passed explicitly only on `Cls.meth(obj)`."""
    return fn.params if unbound_method else fn.bound_params
