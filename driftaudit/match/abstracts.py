"""Abstract methods a consumer subclass must now define.

A consumer class built on an sglang base (an `ABC`) cannot be instantiated once the base
declares an abstract method that nothing between the consumer class and that declaration
implements. Each name is looked up the way Python's MRO finds it (`Snapshot.resolve`
follows base classes): the first definition must be abstract in the new tree and must not
have been in the old one (then the consumer class already had to define it, or is
abstract by design). A consumer class that declares abstract methods itself is left out.

The fact is the class statement's (where the fix goes); each call that instantiates the
class (by its name, an alias, a consumer module's attribute, imported from anywhere in the
consumer: `CallUsage.via`) is a place of it, where the TypeError is raised.
"""

from __future__ import annotations

from dataclasses import replace

from driftaudit.drift.changes import AbstractMethodAdded
from driftaudit.drift.differ import function_location
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.snapshot.api_model import Class, Function
from driftaudit.usage import CallUsage, SubclassUsage

ABSTRACT = "abstractmethod"


def abstract_findings(usage: SubclassUsage, differ, classes: list[str]) -> list[Finding]:
    """`classes`: the sglang classes the usage's bases name (`MemberMatcher.classes_of`)."""
    if usage.abstract:
        return []
    for cls in classes:
        if differ.old.resolve(cls) is None:
            continue  # a class new or gone: reported where it is imported
        missing = []
        for name in sorted(_declared_abstract(differ.new, cls)):
            if name in usage.own:
                continue
            new = differ.new.resolve(f"{cls}.{name}")
            if new is None or not _is_abstract(new.obj):
                continue  # implemented on the way from the consumer class to the declaration
            old = differ.old.resolve(f"{cls}.{name}")
            if old is not None and _is_abstract(old.obj):
                continue
            missing.append((name, new, old))
        if not missing:
            continue
        name, new, old = missing[0]
        change = AbstractMethodAdded(
            new.canonical,
            _location(differ.old, cls, old),
            function_location(new, new.obj),
            owner=usage.owner,
        )
        message = change.explain()
        if len(missing) > 1:
            others = ", ".join(f"`{n}`" for n, _, _ in missing[1:])
            message += f" (nor does it define {others}, abstract now too)"
        names = ", ".join(f"`{n}`" for n, _, _ in missing)
        return [finding_at(usage, change, message, Fix(f"define {names} in `{usage.owner}`"))]
    return []


def inherited_facts(by_class: dict[str, list[Finding]], usages: list) -> list[Finding]:
    """The findings of consumer classes whose consumer base is reported for the same
    abstract method: one fact, the base's (defining it there fixes both); `by_class` is
    changed so that building the subclass is a place of the base's fact."""
    bases = {u.key: u.consumer_bases for u in usages if isinstance(u, SubclassUsage)}

    def reported_base(key: str, symbol: str, depth: int = 0) -> str | None:
        for base in bases.get(key, ()) if depth < 10 else ():
            if any(f.symbol == symbol for f in by_class.get(base, ())):
                return reported_base(base, symbol, depth + 1) or base
        return None

    dropped = []
    for key, found in list(by_class.items()):
        base = reported_base(key, found[0].symbol) if found else None
        if base is not None:
            dropped += found
            by_class[key] = by_class[base]
    return dropped


def instantiation_places(
    by_class: dict[str, list[Finding]], calls: list[CallUsage]
) -> list[Finding]:
    """The class statement's findings again at each call that builds the class
    (`by_class`: `SubclassUsage.key` -> its findings): one fact, one place per call,
    pointing at the callee (the call's start is the place's anchor)."""
    places = []
    for call in calls:
        span = call.focus or (call.line, call.column, call.line, call.column)
        anchor = (call.line, call.column) if span[:2] != (call.line, call.column) else None
        for finding in by_class.get(call.via, ()):
            places.append(
                replace(
                    finding,
                    path=call.path,
                    line=span[0],
                    column=span[1],
                    end_line=span[2],
                    end_column=span[3],
                    anchor=anchor,
                )
            )
    return places


def _is_abstract(obj) -> bool:
    return isinstance(obj, Function) and ABSTRACT in obj.labels


def _declared_abstract(snapshot, path: str, depth: int = 0) -> set[str]:
    """Names declared abstract by the class at `path` or any of its sglang bases."""
    found = snapshot.resolve(path) if depth < 8 else None
    if found is None or not isinstance(found.obj, Class):
        return set()
    names = {n for n, member in found.obj.members.items() if _is_abstract(member)}
    for base in found.obj.bases:
        if base.startswith("sglang."):
            names |= _declared_abstract(snapshot, base, depth + 1)
    return names


def _location(snapshot, cls: str, old) -> str | None:
    """The old tree's method (concrete then), else the old class."""
    if old is not None and isinstance(old.obj, Function):
        return function_location(old, old.obj)
    found = snapshot.resolve(cls)
    if found is None or found.module is None:
        return None
    line = getattr(found.obj, "lineno", None)
    return f"{found.module.file}:{line}" if line else found.module.file
