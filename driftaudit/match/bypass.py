"""Objects built without `__init__` x the attributes new sglang code reads on them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from driftaudit.drift import Differ
from driftaudit.drift.bypass_changes import BypassedInitAttributeMissing
from driftaudit.drift.changes import short_name
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.argtypes import resolve_annotation_class
from driftaudit.match.receivers import TypeResolver
from driftaudit.snapshot.api_model import Class, Function, Module
from driftaudit.snapshot.branch_conditions import satisfied
from driftaudit.snapshot.selfreads import SelfReads
from driftaudit.usage import MemberUsage, UsageSet
from driftaudit.usage.bypass_uses import BypassUsage, StandInUsage


def bypass_findings(
    bypasses: list[BypassUsage | StandInUsage], differ: Differ, usages: UsageSet | None = None
) -> list[Finding]:
    """For each method the consumer calls on such an object: the attributes it reads
    in the new release (through the methods it calls) and not in the old one, that the
    new `__init__` sets, the method does not set itself, and the consumer never sets.
    `usages`: the consumer's, to type the receivers of methods stand-ins are handed to."""
    if not bypasses:
        return []
    old, new = SelfReads(differ.old), SelfReads(differ.new)
    receivers = _receivers(bypasses, differ, usages)
    findings = []
    for usage in bypasses:
        if isinstance(usage, StandInUsage):
            if usage.method:
                for cls in receivers.get((usage.path, *usage.receiver_at, usage.method), []):
                    typed = replace(usage, symbol=f"{cls}.{usage.method}", bound=True)
                    findings += _stand_in(typed, differ, old, new)
                continue
            findings += _stand_in(usage, differ, old, new)
            continue
        cls = usage.symbol
        if usage.stand_ins:
            findings += _installed(usage, differ, old, new)
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


def _receivers(bypasses, differ: Differ, usages: UsageSet | None) -> dict[tuple, list[str]]:
    """(path, line, column, method) of each method a stand-in is handed to -> the sglang
    classes its receiver holds, as the usage visitor typed it there (a constructor's
    result, an annotation, the consumer's attribute table, `self` of a subclass)."""
    wanted = {
        (u.path, *u.receiver_at, u.method)
        for u in bypasses
        if isinstance(u, StandInUsage) and u.method
    }
    if not wanted or usages is None:
        return {}
    types = TypeResolver(differ.old, usages.fields)
    found: dict[tuple, list[str]] = {}
    for usage in usages.usages:
        if not isinstance(usage, MemberUsage) or usage.call is None or usage.store:
            continue
        key = (usage.path, usage.line, usage.column, usage.member)
        if key not in wanted:
            continue
        receiver = types.stored(usage.receiver)
        if receiver is None:
            continue
        if receiver[0] == "self":  # a consumer subclass: its sglang bases
            classes = [types.class_of(("path", base)) for base in receiver[1]]
        else:
            classes = [types.class_of(receiver)]
        found[key] = [c for c in classes if c]
    return found


def _installed(usage: BypassUsage, differ: Differ, old: SelfReads, new: SelfReads) -> list:
    """Stand-ins the consumer puts in attributes of an object built without `__init__`
    (`obj.tree_cache = FakeCache()`), against each method it then calls on the object:
    one finding per (attribute, member), at the assignment."""
    findings: list[Finding] = []
    reported: set[tuple[str, str]] = set()
    for method, _line, _column in usage.calls:
        before = _callee(differ.old, f"{usage.symbol}.{method}")
        after = _callee(differ.new, f"{usage.symbol}.{method}")
        if before is None or after is None or not after.owner or not before.owner:
            continue
        old_members, _ = old.member_reads(before.owner, method)
        new_members, fallbacks = new.member_reads(after.owner, method)
        for attribute, built in usage.stand_ins.items():
            for finding in _held_stand_in(
                usage,
                differ,
                new,
                (before, after),
                built,
                attribute,
                (old_members, new_members, fallbacks),
            ):
                if (attribute, finding.message) not in reported:
                    reported.add((attribute, finding.message))
                    findings.append(finding)
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
    """A stand-in handed to sglang code: the attributes the callee newly reads on the
    parameter it binds (through the methods it calls on `self`, or one call deep into the
    helpers it passes the parameter to) that the stand-in lacks."""
    before = _callee(differ.old, usage.symbol)
    after = _callee(differ.new, usage.symbol)
    if before is None or after is None:
        return []
    param = _parameter(_binding(usage, after), usage.argument)
    old_param = _parameter(_binding(usage, before), usage.argument)
    if param is None or old_param is None or old_param.name != param.name:
        return []
    if after.self_given and param is after.binding[0]:
        return _self_stand_in(usage, differ, old, new, before, after)
    cls = _expected_class(differ, after, param)
    found_before = old.parameter_reads(before.path, param.name)
    found_after = new.parameter_reads(after.path, param.name)
    if found_before is None or found_after is None:
        return []
    (old_reads, _), (new_reads, new_stores) = found_before, found_after
    missing = _missing(usage, new, cls, new_reads, old_reads, new_stores)
    return _stand_in_findings(usage, differ, cls, param.name, after, before, missing)


def _self_stand_in(usage, differ, old, new, before, after) -> list:
    """`Cls.method(stand_in, ...)`: the stand-in is `self`; what the method reads on it
    (and on the stand-ins it holds: `self.x.y`) through the methods it calls."""
    method = after.path.rpartition(".")[2]
    found_before = old.reads(before.owner, method)
    found_after = new.reads(after.owner, method)
    if found_before is None or found_after is None:
        return []
    (old_reads, _), (new_reads, new_stores) = found_before, found_after
    places = new.read_places(after.owner, method)
    located = {attr: places.get(attr, after.path_file) for attr in new_reads}
    missing = _missing(usage, new, after.owner, located, old_reads, new_stores)
    findings = _stand_in_findings(usage, differ, after.owner, "self", after, before, missing)
    if usage.members:
        old_members, _ = old.member_reads(before.owner, method)
        new_members, fallbacks = new.member_reads(after.owner, method)
        for attribute, built in usage.members.items():
            findings += _held_stand_in(
                usage,
                differ,
                new,
                (before, after),
                built,
                attribute,
                (old_members, new_members, fallbacks),
            )
    return findings


def _held_stand_in(place, differ, new, callees, built, attribute, members) -> list:
    """A stand-in put in an attribute of an object sglang code runs on (`obj.attr =
    Fake()`, `SimpleNamespace(attr=Fake())` as `self`): the members the new method reads
    on `self.attr` and the old one did not, that the stand-in lacks. `callees`: the old
    and new method; `members`: their `SelfReads.member_reads`."""
    before, after = callees
    old_members, new_members, fallbacks = members
    owner = after.owner
    holder = new.snapshot.resolve(f"{owner}.{attribute}")
    cls = _class_of(new.snapshot, getattr(holder.obj, "type", None) if holder else None)
    reads = new_members.get(attribute, {})
    stores = {f.partition(".")[2] for f in fallbacks if f.startswith(f"{attribute}.")}
    missing = _missing(built, new, cls, reads, old_members.get(attribute, {}), stores)
    return _stand_in_findings(
        place, differ, cls, f"self.{attribute}", after, before, missing, built=built
    )


def _class_of(snapshot, path: str | None) -> str | None:
    found = snapshot.resolve(path) if path and path.startswith("sglang.") else None
    return found.canonical if found is not None and isinstance(found.obj, Class) else None


def _missing(stand_in, new: SelfReads, cls: str | None, reads, old_reads, stores) -> dict:
    """attribute -> where the new code reads it, for the attributes it newly reads
    (`reads` less `old_reads`) that the stand-in lacks."""
    given = set(stand_in.attributes)
    missing = {}
    for attribute, place in reads.items():
        if (
            attribute in old_reads
            or attribute in given
            or attribute in stores
            or (attribute.startswith("__") and attribute.endswith("__"))
        ):
            continue
        if cls is not None and new.snapshot.resolve(f"{cls}.{attribute}") is None:
            continue  # not the class's: another type reaches this parameter too
        if stand_in.spec and _on_spec(new, stand_in.spec, attribute):
            continue
        missing[attribute] = place
    return missing


def _on_spec(new: SelfReads, spec: str, attribute: str) -> bool:
    """Does a mock specced by `spec` have `attribute`? Every name of the class does; an
    attribute only its instances get (set in `__init__`) does not: AttributeError. An
    attribute not known either way counts as there."""
    if new.snapshot.resolve(f"{spec}.{attribute}") is None:
        return not new.init_sets(spec)  # a class whose __init__ is not read: unknown
    return new.class_level(spec, attribute) or attribute not in new.init_sets(spec)


def _stand_in_findings(place, differ, cls, param, after, before, missing, built=None):
    stand_in = built or place
    findings = []
    for attribute, read_at in missing.items():
        member = differ.new.resolve(f"{cls}.{attribute}") if cls else None
        change = BypassedInitAttributeMissing(
            f"{cls}.{attribute}" if cls else after.path,
            before.location if before is not None else None,
            read_at,
            short_name(after.path),
            attribute,
            member.location if member is not None else None,
            param,
            stand_in.kind,
            bool(cls),
        )
        fix = Fix(
            f"give the stand-in `{attribute}`"
            + (f" (as `{short_name(cls)}` has it)" if cls else "")
        )
        confidence = {} if cls else {"confidence": "likely"}
        span = built.at if built is not None else None
        findings.append(finding_at(place, change, change.explain(), fix, at=span, **confidence))
    return findings


@dataclass
class _Callee:
    """The function a call of an sglang name runs: its path, model and file, the
    parameters the call's arguments bind (`self` first for a method named on its class),
    the class that owns it (a method, a constructor), and where it is defined."""

    path: str
    function: Function
    binding: list
    owner: str = ""
    path_file: str = ""
    location: str | None = None
    self_given: bool = False  # the call gives `self` (a method named on its class)


def _callee(snapshot, symbol: str) -> _Callee | None:
    found = snapshot.resolve(symbol)
    if found is None or found.opaque:
        return None
    if isinstance(found.obj, Class):
        init = snapshot.resolve(f"{found.canonical}.__init__")
        if init is None or not isinstance(init.obj, Function):
            return None
        return _Callee(
            init.canonical,
            init.obj,
            init.obj.bound_params,
            init.canonical.rpartition(".")[0],
            init.module.file if init.module else "",
            _at(init, init.obj.lineno),
        )
    if not isinstance(found.obj, Function):
        return None
    parent = snapshot.resolve(found.canonical.rpartition(".")[0])
    if parent is None:
        return None
    file = found.module.file if found.module else ""
    where = _at(found, found.obj.lineno)
    if isinstance(parent.obj, Module):
        return _Callee(found.canonical, found.obj, found.obj.params, "", file, where)
    if not isinstance(parent.obj, Class):
        return None
    labels = found.obj.labels
    binding = found.obj.bound_params if "classmethod" in labels else found.obj.params
    owner = "" if "staticmethod" in labels else symbol.rpartition(".")[0]
    owner = snapshot.resolve(owner).canonical if owner and snapshot.resolve(owner) else ""
    self_given = bool(owner) and "classmethod" not in labels and bool(binding)
    return _Callee(found.canonical, found.obj, binding, owner, file, where, self_given)


def _expected_class(differ: Differ, callee: _Callee, param) -> str | None:
    """The sglang class a parameter expects: its annotation's, else the class its name
    spells (`server_args` -> `ServerArgs`) as the callee's module sees it."""
    found = differ.new.resolve(callee.path)
    if found is None:
        return None
    if param.annotation:
        return resolve_annotation_class(differ.new, found, param.annotation)
    spelled = "".join(part.capitalize() for part in param.name.split("_") if part)
    return resolve_annotation_class(differ.new, found, spelled) if spelled else None


def _binding(usage: StandInUsage, callee: _Callee) -> list:
    """The parameters a call's arguments bind: without `self` when the receiver binds it."""
    return callee.binding[1:] if usage.bound and callee.self_given else callee.binding


def _parameter(params: list, argument: str):
    if argument.isdigit():
        positional = [p for p in params if p.positional]
        index = int(argument)
        return positional[index] if index < len(positional) else None
    found = next((p for p in params if p.name == argument), None)
    return found if found is not None and found.keyword else None
