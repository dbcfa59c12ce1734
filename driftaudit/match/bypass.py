"""Objects built without `__init__` x the attributes new sglang code reads on them."""

from __future__ import annotations

from driftaudit.drift import Differ
from driftaudit.drift.bypass_changes import BypassedInitAttributeMissing
from driftaudit.drift.changes import short_name
from driftaudit.drift.differ import callable_signature
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.argtypes import resolve_annotation_class
from driftaudit.snapshot.api_model import Attribute, Function, Module
from driftaudit.snapshot.branch_conditions import satisfied
from driftaudit.snapshot.selfreads import SelfReads
from driftaudit.usage.bypass_uses import BypassUsage, StandInUsage


def bypass_findings(bypasses: list[BypassUsage | StandInUsage], differ: Differ) -> list[Finding]:
    """For each method the consumer calls on such an object: the attributes it reads
    in the new release (through the methods it calls) and not in the old one, that the
    new `__init__` sets, the method does not set itself, and the consumer never sets."""
    if not bypasses:
        return []
    old, new = SelfReads(differ.old), SelfReads(differ.new)
    findings = []
    for usage in bypasses:
        if isinstance(usage, StandInUsage):
            findings += _stand_in(usage, differ, old, new)
            continue
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
                    or _never_read(new.read_guards(cls, method).get(attribute), usage.values)
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


def _never_read(places: list[list[list]] | None, values: dict[str, list | None]) -> bool:
    """Does every place that reads the attribute sit under a condition on another
    attribute that each value the consumer assigns that one fails (`if not self.x:
    return` before it, with `obj.x = None`)?"""
    if not places:
        return False
    for place in places:
        if not any(
            subject.startswith("self.")
            and (given := values.get(subject[5:]))
            and not any(satisfied(op, accepted, v) for v in given)
            for subject, op, accepted in place
        ):
            return False
    return True


def _at(found, line: int | None) -> str | None:
    """`file:line` in the module that defines `found` (a method, `__init__`)."""
    if found is None or found.module is None:
        return None
    return f"{found.module.file}:{line}" if line else found.module.file


def _stand_in(usage: StandInUsage, differ: Differ, old: SelfReads, new: SelfReads) -> list:
    """A SimpleNamespace handed to a module-level sglang function as a parameter annotated
    with an sglang class: the attributes the function newly reads from that parameter,
    that the class has per instance, and that the namespace lacks."""
    before, after = differ.old.resolve(usage.symbol), differ.new.resolve(usage.symbol)
    if before is None or after is None or before.opaque or after.opaque:
        return []
    if not isinstance(after.obj, Function) or not isinstance(before.obj, Function):
        return []
    parent = differ.new.resolve(after.canonical.rpartition(".")[0])
    if parent is None or not isinstance(parent.obj, Module):
        return []  # methods: `self` and binding are not followed here
    old_fn, new_fn = callable_signature(before.obj), callable_signature(after.obj)
    param = _parameter(new_fn, usage.argument)
    if param is None or old_fn.param(param.name) is None or not param.annotation:
        return []
    cls = resolve_annotation_class(differ.new, after, param.annotation)
    if cls is None:
        return []
    found_before = old.parameter_reads(before.canonical, param.name)
    found_after = new.parameter_reads(after.canonical, param.name)
    if found_before is None or found_after is None:
        return []
    (old_reads, _), (new_reads, new_stores) = found_before, found_after
    given = set(usage.attributes)
    findings = []
    for attribute, line in new_reads.items():
        if attribute in old_reads or attribute in given or attribute in new_stores:
            continue
        member = differ.new.resolve(f"{cls}.{attribute}")
        if member is None or not isinstance(member.obj, Attribute):
            continue
        if new.class_level(cls, attribute):
            continue
        change = BypassedInitAttributeMissing(
            f"{cls}.{attribute}",
            _at(before, getattr(before.obj, "lineno", None)),
            _at(after, line),
            short_name(after.canonical),
            attribute,
            member.location,
            param.name,
            usage.kind,
        )
        fix = Fix(f"give the stand-in `{attribute}` (as `{short_name(cls)}` has it)")
        # a mock answers any read with a new mock: wrong behaviour, not an AttributeError
        severity = "warning" if "Mock" in usage.kind else None
        findings.append(finding_at(usage, change, change.explain(), fix, **_severity(severity)))
    return findings


def _severity(severity: str | None) -> dict:
    return {"severity": severity} if severity else {}


def _parameter(fn: Function, argument: str):
    if argument.isdigit():
        positional = [p for p in fn.params if p.positional]
        index = int(argument)
        return positional[index] if index < len(positional) else None
    return fn.param(argument)
