"""A container attribute of an sglang object that the consumer mutates, whose type
changed under it: `batch.out_cache_loc.append(x)` where the attribute was a list and is
now a dict, an OrderedDict or an `array` (DA705, the mutation form of an assignment).

The types are the attribute's annotation, else what `self.x = ...` builds (the same
reading as DA705's, `argtypes._attribute_type`). Only the container kind is compared:
the method must exist on the old kind and not on the new one.
"""

from __future__ import annotations

import re

from driftaudit.drift.typechanges import AttributeTypeChanged
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.argtypes import _attribute_type
from driftaudit.usage import MemberUsage, UsageSet

_COMMON = {"pop", "clear", "copy"}
METHODS = {
    "list": {"append", "extend", "insert", "remove", "sort", "reverse", "index", "count"},
    "dict": {"keys", "values", "items", "get", "update", "setdefault", "popitem"},
    "array": {"append", "extend", "insert", "remove", "reverse", "index", "count", "tolist"},
    "set": {"add", "discard", "remove", "update", "union", "difference", "intersection"},
    "deque": {"append", "appendleft", "extend", "extendleft", "popleft", "remove", "rotate"},
}
_KINDS = {
    "list": "list",
    "dict": "dict",
    "ordereddict": "dict",
    "defaultdict": "dict",
    "array": "array",
    "set": "set",
    "deque": "deque",
}


def container_kind(annotation: str | None) -> str | None:
    """`List[int]`, `Optional[list]`, `collections.OrderedDict` -> list / dict / ..."""
    if not annotation:
        return None
    text = annotation.strip().strip("'\"")
    inner = re.fullmatch(r"(?:typing\.)?Optional\[(.*)\]", text)
    text = inner.group(1) if inner else text
    head = re.split(r"[\[(]", text, maxsplit=1)[0].rpartition(".")[2].lower()
    return _KINDS.get(head)


def mutation_findings(usages: UsageSet, differ, members) -> list[Finding]:
    findings = []
    for usage in usages.usages:
        if not isinstance(usage, MemberUsage) or usage.call is None:
            continue
        receiver = usage.receiver
        if not receiver or receiver[0] != "attr":
            continue
        owner = members.types.class_of(receiver[1])
        if owner is None:
            continue
        finding = _check(usage, differ, f"{owner}.{receiver[2]}", receiver[2])
        if finding is not None:
            findings.append(finding)
    return findings


def _check(usage: MemberUsage, differ, symbol: str, attribute: str) -> Finding | None:
    old, new = differ.old.resolve(symbol), differ.new.resolve(symbol)
    if old is None or new is None or old.opaque or new.opaque:
        return None
    old_type, new_type = _attribute_type(differ.old, old), _attribute_type(differ.new, new)
    before, after = container_kind(old_type), container_kind(new_type)
    if before is None or after is None or before == after:
        return None
    method = usage.member
    if method not in METHODS[before] | _COMMON or method in METHODS[after] | _COMMON:
        return None
    change = AttributeTypeChanged(
        symbol, old.location, new.location, attribute, old_type, new_type, f".{method}()"
    )
    message = (
        f"calls `.{method}()` on `{symbol.rpartition('.')[0].rpartition('.')[2]}.{attribute}`, "
        f"which was `{old_type}` and is `{new_type}` now, with no `.{method}()`"
    )
    return finding_at(usage, change, message, Fix(f"use the {after} API of `{attribute}`"))
