"""Members of sglang objects: `req.fill_ids`, `batch.get_model_worker_batch()`,
overridden methods, and (likely) attribute names on receivers of unknown type."""

from __future__ import annotations

from collections import defaultdict

from driftaudit.drift import Differ
from driftaudit.drift.changes import DefaultChanged
from driftaudit.drift.differ import function_location, parameter_additions
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.overrides import (
    CallerMismatch,
    KeywordCallers,
    ReplacementCallers,
    mirrors,
    reaches_replacement,
    unaccepted_additions,
)
from driftaudit.match.receivers import TypeResolver
from driftaudit.snapshot.api_model import Class, Function
from driftaudit.usage import (
    AttributeNameUsage,
    ImportUsage,
    MemberUsage,
    OverrideUsage,
    UsageSet,
)


class MemberMatcher:
    def __init__(self, differ: Differ, matcher, usages: UsageSet):
        self.differ = differ
        self.matcher = matcher  # for reference and call checks
        self.types = TypeResolver(differ.old, usages.fields)
        self.callers = KeywordCallers(differ.new)
        self.replaced = (ReplacementCallers(differ.old), ReplacementCallers(differ.new))
        self.defined_names = usages.defined_names
        self.installed = usages.installed
        self._file_classes: dict[str, set[str]] = defaultdict(set)
        for usage in usages.usages:
            if isinstance(usage, ImportUsage):
                found = differ.old.resolve(usage.symbol)
                if found is not None and isinstance(found.obj, Class):
                    self._file_classes[usage.path].add(found.canonical)

    def file_classes(self, path: str) -> set[str]:
        """The sglang classes a consumer file imports or holds instances of."""
        return self._file_classes.get(path, set())

    def classes_of(self, receiver: tuple) -> list[str]:
        receiver = self.types.stored(receiver)
        if receiver is None:
            return []
        if receiver[0] == "self":
            found = (self.types.class_of(("path", base)) for base in receiver[1])
            return [c for c in found if c]
        cls = self.types.class_of(receiver)
        return [cls] if cls else []

    # ---- certain: the receiver's class is known ----------------------------------

    def member(self, usage: MemberUsage) -> list[Finding]:
        if _own_member(self.types.stored(usage.receiver), usage.member):
            return []  # a consumer subclass's instance: the name is the subclass's own
        for cls in self.classes_of(usage.receiver):
            self._file_classes[usage.path].add(cls)
            if usage.member == "__init__" and usage.call is not None:
                # `super().__init__(...)`: the base's constructor, as `Base(...)` calls it
                return self.matcher.call(usage, cls, usage.call)
            path = f"{cls}.{usage.member}"
            if self.differ.old.resolve(path) is None:
                continue  # not an sglang member (the consumer's own, or dynamic)
            change = self.differ.reference_change(path)
            if change is None:
                if usage.call is not None:
                    return self.matcher.call(usage, path, usage.call, bound=True)
                return []
            if change.symbol != path:
                return []  # the class itself is gone: reported where it is imported
            return self.matcher.reference(usage, path, store=usage.store)
        return []

    def override(self, usage: OverrideUsage) -> list[Finding]:
        owners = self.classes_of(("self", usage.bases, frozenset()))
        if usage.replaces and not owners:
            owners = list(usage.bases)  # a module's function replaced
        for cls in owners:
            path = f"{cls}.{usage.method}"
            old = self.differ.old.resolve(path)
            if old is None and usage.replaces:
                if found := self._called_otherwise(usage, path, None):
                    return found
                continue
            if old is None or not isinstance(old.obj, Function):
                continue
            stands_in = usage.owner in self.installed and mirrors(usage, old.obj)
            if usage.stand_in and not stands_in:
                continue  # a wrapper's own method, or one never put in sglang's place
            change = self.differ.reference_change(path)
            owner = cls.rpartition(".")[2]
            verb = "stands in for" if usage.stand_in else "overrides"
            ours = f"{usage.owner}.{usage.method}"
            if usage.replaces:
                verb, ours = "replaces", usage.owner
            if change is not None:
                if change.symbol != path or usage.replaces:
                    return []  # a replaced name that is gone: DA104 at the same write
                message = (
                    f"`{ours}` {verb} `{owner}.{usage.method}`, which "
                    f"sglang no longer has: the override is never called"
                )
                fix = Fix(f"override `{change.candidate}` instead") if change.candidate else None
                return [finding_at(usage, change, message, fix, use="override", symbol=path)]
            new = self.differ.new.resolve(path)
            if new is None or not isinstance(new.obj, Function) or usage.variadic:
                return []  # `(self, *args, **kwargs)` passes any new signature through
            locs = (function_location(old, old.obj), function_location(new, new.obj))
            changes = [
                c
                for c in self.differ.signature_changes(path, old.obj, new.obj, locs)
                if not isinstance(c, DefaultChanged)
                and (not usage.replaces or reaches_replacement(c, usage, new.obj))
            ]
            reasons = [c.explain() for c in changes]
            added = unaccepted_additions(
                usage, parameter_additions(path, old.obj, new.obj, locs), self.callers
            )
            for change, caller in added:
                changes.append(change)
                reasons.append(
                    f"`{owner}.{usage.method}` has a new parameter `{change.param}` that sglang "
                    f"passes (`{caller}`) and {'it' if usage.replaces else 'the override'} "
                    "does not accept"
                )
            if not changes:
                return self._called_otherwise(usage, path, old) if usage.replaces else []
            message = (
                f"`{ours}` {verb} `{owner}.{usage.method}`, whose "
                f"signature changed: " + "; ".join(reasons)
            )
            fix = Fix("update the override's parameters to the new base signature")
            if usage.replaces:
                fix = Fix(f"update `{usage.owner}`'s parameters to the new signature")
            return [finding_at(usage, changes[0], message, fix, use="override", symbol=path)]
        return []

    def _called_otherwise(self, usage: OverrideUsage, path: str, old) -> list[Finding]:
        """A replacement the new release's own code calls in a way it cannot take, when
        the old release did not (it lacked the name, or its calls bound): one finding at
        the install, the first such call its evidence."""
        if usage.variadic:
            return []
        new = self.differ.new.resolve(path)
        if new is None or not isinstance(new.obj, Function):
            return []
        failing = self.replaced[1].failing(usage, path)
        if failing and old is not None:
            before = self.replaced[0].failing(usage, path)
            failing = {r: at for r, at in failing.items() if r not in before}
        if not failing:
            return []
        reason, caller = next(iter(failing.items()))
        name = path.rpartition(".")[2]
        owner = path.rpartition(".")[0].rpartition(".")[2]
        release = self.differ.old.tree.version or "the old release"
        then = (
            f"{release} has no `{owner}.{name}`"
            if old is None
            else f"{release}'s calls of it bind to `{usage.owner}`"
        )
        change = CallerMismatch(
            path,
            function_location(old, old.obj) if old is not None else None,
            function_location(new, new.obj),
            reason=reason,
            caller=caller,
        )
        # callers only in one model's implementation fail only when that model runs
        per_model = all(_in_model_code(at) for at in failing.values())
        when = ", when that model runs" if per_model else ""
        message = (
            f"`{usage.owner}` replaces `{owner}.{name}`, which sglang now calls with {reason} "
            f"(`{caller}`), which `{usage.owner}` does not accept: TypeError there{when} ({then})"
        )
        fix = Fix(f"make `{usage.owner}` accept what sglang passes (`{caller}`)")
        severity = "warning" if per_model else ""
        return [
            finding_at(usage, change, message, fix, use="override", symbol=path, severity=severity)
        ]

    # ---- likely: only the attribute name ties it to sglang -------------------------

    def likely(self, usages: list[AttributeNameUsage]) -> list[Finding]:
        findings = []
        verdicts: dict[tuple[frozenset, str], tuple | None] = {}
        for usage in usages:
            name = usage.member
            if name in self.defined_names or name.startswith("__"):
                continue
            classes = frozenset(self._file_classes.get(usage.path, ()))
            if not classes:
                continue
            key = (classes, name)
            if key not in verdicts:
                verdicts[key] = self._gone_from_all(classes, name)
            verdict = verdicts[key]
            if verdict is None:
                continue
            change, owners = verdict
            shown = ", ".join(f"`{o.rpartition('.')[2]}`" for o in owners)
            message = (
                f"{change.explain()} (likely: the receiver's type is not known, but `{name}` "
                f"existed only on {shown} among the sglang classes this file uses, and is gone "
                f"from all of them)"
            )
            fix = Fix(f"use `{change.candidate}`") if change.candidate else None
            use = "patch" if usage.store else None
            findings.append(
                finding_at(
                    usage, change, message, fix, use=use, severity="warning", confidence="likely"
                )
            )
        return findings

    def _gone_from_all(self, classes: frozenset, name: str):
        owners = sorted(c for c in classes if self.differ.old.resolve(f"{c}.{name}") is not None)
        if not owners:
            return None
        first = None
        for owner in owners:
            path = f"{owner}.{name}"
            change = self.differ.reference_change(path)
            if change is None or change.symbol != path:
                return None  # still there on one of them (or the class itself moved)
            first = first or change
        return first, owners


def _own_member(receiver: tuple | None, name: str) -> bool:
    """Does `receiver`, an instance of a consumer subclass, define `name` itself?"""
    return bool(receiver) and receiver[0] == "self" and len(receiver) > 3 and name in receiver[2]


def _in_model_code(location: str) -> bool:
    """A place in one model family's implementation (`sglang/srt/models/...`, the
    diffusion runtime's `models/...`), not in code every model runs."""
    return "/models/" in f"/{location.partition(':')[0]}"
