"""Enum members looked up at run time: `E[name]`, `getattr(E, name)`, `E(value)`.

The string is not in the code, so no reference to a removed member is seen; when the new
release dropped (or renamed) members of the enum, a lookup of one of them raises
(KeyError, AttributeError, ValueError). The finding sits on the lookup's key and names the
members that went (and their likely new names), at warning: it breaks when the string
names one of them (at error for `E("literal")` of a value that went). `E(value)` counts
only members whose literal value no member of the new enum has (a rename that keeps its
value still looks up).
"""

from __future__ import annotations

import ast

from driftaudit.drift import Differ
from driftaudit.drift.changes import EnumMemberRemoved
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.snapshot.api_model import Attribute, Class
from driftaudit.usage import EnumLookupUsage


def enum_lookup_findings(usage: EnumLookupUsage, differ: Differ) -> list[Finding]:
    old = differ.old.resolve(usage.symbol)
    if old is None or old.opaque or not isinstance(old.obj, Class):
        return []
    members = {n: m for n, m in old.obj.members.items() if isinstance(m, Attribute)}
    gone = [differ.reference_change(f"{usage.symbol}.{name}") for name in members]
    removed = [c for c in gone if isinstance(c, EnumMemberRemoved)]
    if usage.by_value:
        new = differ.new.resolve(usage.symbol)
        kept = set()
        if new is not None and isinstance(new.obj, Class):
            kept = {_literal(m) for m in new.obj.members.values() if isinstance(m, Attribute)}
        removed = [
            c
            for c in removed
            if (value := _literal(members[c.symbol.rpartition(".")[2]])) is not None
            and value not in kept
            and (usage.literal is None or usage.literal == value)
        ]
    if not removed:
        return []
    cls = usage.symbol.rpartition(".")[2]
    names = ", ".join(_described(c) for c in removed)
    if usage.by_value:
        what, error = f"`{cls}(...)` looks up a member by value", "ValueError"
    else:
        what, error = f"looks up a member of `{cls}` by a run-time name", "KeyError, AttributeError"
    message = (
        f"{what}; the new release no longer has {names}: a lookup of "
        f"{'it' if len(removed) == 1 else 'one of them'} fails ({error})"
    )
    fix = Fix("map the old names (or values) to the new members before the lookup")
    severity = "error" if usage.literal is not None else "warning"  # the value is written
    return [finding_at(usage, removed[0], message, fix, severity=severity)]


def _described(change: EnumMemberRemoved) -> str:
    name = f"`{change.symbol.rpartition('.')[2]}`"
    if change.candidate_kind == "renamed" and change.candidate:
        return f"{name} (perhaps renamed to `{change.candidate.rpartition('.')[2]}`)"
    return name


def _literal(member: Attribute) -> str | None:
    """A member's value when the source spells it as a literal (`"fp8"`, `3`)."""
    try:
        value = ast.literal_eval(member.value) if member.value else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None if value is None else repr(value)
