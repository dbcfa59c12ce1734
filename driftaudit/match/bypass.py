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
                found = differ.new.resolve(f"{cls}.{method}")
                file = found.module.file if found and found.module else None
                init_at = differ.new.resolve(f"{cls}.__init__")
                init_file = init_at.module.file if init_at and init_at.module else file
                change = BypassedInitAttributeMissing(
                    f"{cls}.{attribute}",
                    f"{file}:{read_line}" if file else None,
                    f"{init_file}:{init[attribute]}" if init_file else None,
                    method,
                    attribute,
                )
                message = f"{change.explain()} (`.{method}(...)` called at line {line})"
                fix = Fix(f"set `{usage.variable}.{attribute}` as the new `__init__` does")
                findings.append(finding_at(usage, change, message, fix))
    return findings
