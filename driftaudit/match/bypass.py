"""Objects built without `__init__` x the attributes new sglang code reads on them."""

from __future__ import annotations

from driftaudit.drift import Differ
from driftaudit.drift.bypass import BypassedInitAttributeMissing
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.snapshot.selfreads import SelfReads
from driftaudit.usage.bypass import BypassUsage


def bypass_findings(bypasses: list[BypassUsage], differ: Differ) -> list[Finding]:
    """For each method the consumer calls on such an object: the attributes it reads
    in the new release (through the methods it calls) and not in the old one, that the
    new `__init__` sets, the method does not set itself, and the consumer never sets."""
    if not bypasses:
        return []
    old, new = SelfReads(differ.old), SelfReads(differ.new)
    findings = []
    for usage in bypasses:
        cls = usage.symbol
        init = new.init_sets(cls)
        if not init:
            continue
        given = set(usage.attributes)
        reported: set[str] = set()  # one finding per attribute, where the object is built
        for method, line, _column in usage.calls:
            before, after = old.reads(cls, method), new.reads(cls, method)
            if before is None or after is None:
                continue  # a method gone or new: reported elsewhere, or not this upgrade
            (old_reads, _), (new_reads, new_stores) = before, after
            for attribute, read_line in new_reads.items():
                if (
                    attribute in old_reads
                    or attribute in given
                    or attribute in new_stores
                    or attribute not in init
                    or attribute in reported
                    or new.class_level(cls, attribute)
                ):
                    continue
                reported.add(attribute)
                before_at = differ.old.resolve(f"{cls}.{method}")
                after_at = differ.new.resolve(f"{cls}.{method}")
                init_at = differ.new.resolve(f"{cls}.__init__")
                change = BypassedInitAttributeMissing(
                    f"{cls}.{attribute}",
                    _at(before_at, getattr(before_at.obj, "lineno", None) if before_at else None),
                    _at(after_at, read_line),
                    method,
                    attribute,
                    _at(init_at, init[attribute]),
                )
                message = f"{change.explain()} (`.{method}(...)` called at line {line})"
                fix = Fix(f"set `{usage.variable}.{attribute}` as the new `__init__` does")
                findings.append(finding_at(usage, change, message, fix))
    return findings


def _at(found, line: int | None) -> str | None:
    """`file:line` in the module that defines `found` (a method, `__init__`)."""
    if found is None or found.module is None:
        return None
    return f"{found.module.file}:{line}" if line else found.module.file
