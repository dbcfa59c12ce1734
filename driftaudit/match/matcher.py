"""Pair each usage with the drift that breaks it; one finding per place and cause."""

from __future__ import annotations

from driftaudit import rules
from driftaudit.drift import Differ
from driftaudit.drift.changes import (
    Change,
    DefaultChanged,
    ModuleRemoved,
    ParameterRenamed,
    SymbolMoved,
)
from driftaudit.drift.differ import callable_signature, function_location
from driftaudit.findings import Finding, Fix
from driftaudit.match.calls import bind, call_params
from driftaudit.snapshot.model import Class, Function
from driftaudit.usage import (
    CallUsage,
    ImportUsage,
    ReferenceUsage,
    UnpackUsage,
    Usage,
    UsageSet,
)


def match_usages(usages: UsageSet, differ: Differ) -> list[Finding]:
    matcher = _Matcher(differ)
    findings = [
        Finding(
            rules.PARSE_ERROR, f.path, f.line, f.column, "", f"file does not parse: {f.message}"
        )
        for f in usages.failures
    ]
    for usage in usages.usages:
        if isinstance(usage, (ImportUsage, ReferenceUsage)):
            findings += matcher.reference(usage)
        elif isinstance(usage, CallUsage):
            findings += matcher.call(usage)
        elif isinstance(usage, UnpackUsage):
            findings += matcher.unpack(usage)
    unique = {(f.path, f.line, f.column, f.rule.code, f.symbol, f.message): f for f in findings}
    return sorted(unique.values(), key=Finding.sort_key)


def _finding(usage: Usage, change: Change, message: str, fix: Fix | None = None, **kw) -> Finding:
    return Finding(
        change.rule,
        usage.path,
        usage.line,
        usage.column,
        change.symbol,
        message,
        change.old_location,
        change.new_location,
        fix,
        **kw,
    )


class _Matcher:
    def __init__(self, differ: Differ):
        self.differ = differ

    # ---- names that no longer resolve ------------------------------------------

    def reference(self, usage: ImportUsage | ReferenceUsage) -> list[Finding]:
        change = self.differ.reference_change(usage.symbol)
        if change is None:
            return []
        if isinstance(usage, ReferenceUsage) and isinstance(change, ModuleRemoved):
            return []  # reported where the module is imported
        if isinstance(usage, ReferenceUsage) and usage.store and change.symbol == usage.symbol:
            message = (
                f"assigns `{usage.symbol.rpartition('.')[2]}`, which sglang no longer "
                f"defines: {change.explain()}; the assignment has no effect"
            )
            return [
                Finding(
                    rules.REMOVED_ATTRIBUTE_ASSIGNED,
                    usage.path,
                    usage.line,
                    usage.column,
                    change.symbol,
                    message,
                    change.old_location,
                    change.new_location,
                )
            ]
        message = change.explain()
        fix = None
        if isinstance(change, SymbolMoved):
            name = change.symbol.rpartition(".")[2]
            direct = isinstance(usage, ImportUsage) and change.symbol == usage.symbol
            fix = Fix(f"import `{name}` from `{change.new_module}`", autofixable=direct)
        if isinstance(usage, ImportUsage):
            if usage.guarded:
                # still an error: the except branch silently switches the feature off
                message += " (inside try/except ImportError: the except branch runs instead)"
            elif usage.lazy:
                message += " (lazy import: fails when the function runs)"
        return [_finding(usage, change, message, fix)]

    # ---- calls ----------------------------------------------------------------

    def _signatures(self, symbol: str):
        old = self.differ.old.resolve(symbol)
        new = self.differ.new.resolve(symbol)
        if new is None:  # moved: the call will run against the new definition
            moved = self.differ.reference_change(symbol)
            if isinstance(moved, SymbolMoved) and moved.symbol == symbol:
                new = self.differ.new.resolve(moved.new_symbol)
        if old is None or new is None or old.opaque or new.opaque:
            return None
        old_fn, new_fn = callable_signature(old.obj), callable_signature(new.obj)
        if old_fn is None or new_fn is None:
            return None
        unbound = self._unbound_method(symbol, old.obj)
        return old, new, old_fn, new_fn, unbound

    def _unbound_method(self, symbol: str, obj) -> bool:
        """`Cls.meth(obj, ...)`: a plain method called through its class passes self."""
        if not isinstance(obj, Function) or {"staticmethod", "classmethod"} & set(obj.labels):
            return False
        parent = self.differ.old.resolve(symbol.rpartition(".")[0])
        return parent is not None and isinstance(parent.obj, Class)

    def call(self, usage: CallUsage) -> list[Finding]:
        found = self._signatures(usage.symbol)
        if found is None:
            return []
        old, new, old_fn, new_fn, unbound = found
        before = bind(call_params(old_fn, unbound), usage)
        if not before.ok:
            return []  # the call did not fit the old signature either: not this upgrade
        after = bind(call_params(new_fn, unbound), usage)
        locs = (function_location(old, old_fn), function_location(new, new_fn))
        changes = self.differ.signature_changes(usage.symbol, old_fn, new_fn, locs)
        renames = {c.param: c for c in changes if isinstance(c, ParameterRenamed)}
        findings: list[Finding] = []
        for keyword in after.unknown_keywords:
            if keyword in renames:
                change = renames[keyword]
                fix = Fix(f"rename keyword `{keyword}` to `{change.new_name}`", autofixable=True)
                findings.append(_finding(usage, change, change.explain(), fix))
            else:
                change = _removed_param(changes, usage.symbol, keyword)
                message = f"passes keyword `{keyword}`, which {change.explain().split(' ', 2)[2]}"
                fix = Fix(f"drop the `{keyword}=` argument", autofixable=True)
                findings.append(_finding(usage, change, message, fix))
        if after.too_many_positional:
            change = _generic(rules.POSITIONAL_MISMATCH, usage.symbol, changes)
            total = len([p for p in call_params(new_fn, unbound) if p.positional])
            message = (
                f"passes {usage.positional} positional arguments; "
                f"`{_name(usage.symbol)}` now takes at most {total}"
            )
            findings.append(_finding(usage, change, message, Fix("pass the arguments by keyword")))
        renamed_targets = {renames[k].new_name for k in usage.keywords if k in renames}
        for name in after.missing:
            if name in renamed_targets or name in before.missing:
                continue
            change = _generic(rules.REQUIRED_PARAMETER_ADDED, usage.symbol, changes)
            message = f"does not pass `{name}`, a new required parameter of `{_name(usage.symbol)}`"
            findings.append(_finding(usage, change, message, Fix(f"pass `{name}`")))
        for index, (was, now) in enumerate(zip(before.positional, after.positional, strict=False)):
            if was != now:
                change = _generic(rules.POSITIONAL_MISMATCH, usage.symbol, changes)
                message = f"positional argument {index + 1} now binds to `{now}` instead of `{was}`"
                findings.append(_finding(usage, change, message, Fix(f"pass `{was}=` by keyword")))
        if not (usage.star_args or usage.star_kwargs):
            passed = set(before.positional) | set(usage.keywords)
            for change in changes:
                if isinstance(change, DefaultChanged) and change.param not in passed:
                    message = f"relies on the default of `{change.param}`: {change.explain()}"
                    fix = Fix(
                        f"pass `{change.param}={change.old_default}` to keep the old behaviour"
                    )
                    findings.append(_finding(usage, change, message, fix))
        return findings

    # ---- return shapes ---------------------------------------------------------

    def unpack(self, usage: UnpackUsage) -> list[Finding]:
        found = self._signatures(usage.symbol)
        if found is None:
            return []
        old, new, old_fn, new_fn, _ = found
        locs = (function_location(old, old_fn), function_location(new, new_fn))
        change = self.differ.return_change(usage.symbol, old_fn, new_fn, locs)
        if change is None:
            return []
        if usage.starred:
            if usage.targets - 1 <= change.new_arity:
                return []
        elif usage.targets != change.old_arity:
            return []
        message = (
            f"unpacks {usage.targets} values from `{_name(usage.symbol)}`, which now returns "
            f"{change.new_arity} (was {change.old_arity})"
        )
        if change.new_elements:
            fix = Fix(f"unpack {change.new_arity} values: {', '.join(change.new_elements)}")
        else:
            fix = Fix(f"unpack {change.new_arity} values")
        return [_finding(usage, change, message, fix)]


def _name(symbol: str) -> str:
    parts = symbol.split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 and parts[-2][:1].isupper() else parts[-1]


class _CallChange(Change):
    """A stand-in change for call-shape findings that no single parameter explains."""

    def __init__(self, rule, symbol, old_location, new_location):
        super().__init__(symbol, old_location, new_location)
        self.rule = rule

    def explain(self) -> str:
        return self.rule.summary


def _generic(rule, symbol: str, changes: list[Change]) -> Change:
    locs = (changes[0].old_location, changes[0].new_location) if changes else (None, None)
    return _CallChange(rule, symbol, *locs)


def _removed_param(changes: list[Change], symbol: str, keyword: str) -> Change:
    from driftaudit.drift.changes import ParameterRemoved

    for change in changes:
        if getattr(change, "param", None) == keyword:
            return change
    locs = (changes[0].old_location, changes[0].new_location) if changes else (None, None)
    return ParameterRemoved(symbol, *locs, keyword)
