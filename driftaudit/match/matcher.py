"""Pair each usage with the drift that breaks it; one finding per place and cause."""

from __future__ import annotations

from pathlib import Path

from driftaudit import codes
from driftaudit.drift import Differ
from driftaudit.drift.changes import (
    Change,
    DefaultChanged,
    EnumMemberRemoved,
    MemberRemoved,
    ModuleRemoved,
    ParameterRemoved,
    ParameterRenamed,
    PositionalCapacityReduced,
    PositionalRebound,
    RequestKeywordRemoved,
    RequiredParameterAdded,
    ReturnArityChanged,
    ReturnBecameObject,
    SymbolMoved,
    SymbolRelocated,
    short_name,
)
from driftaudit.drift.differ import callable_signature, function_location
from driftaudit.drift.gates import never_runs
from driftaudit.drift.serverarg_changes import SERVER_ARGS
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.abstracts import abstract_findings, inherited_facts, instantiation_places
from driftaudit.match.argtypes import TypeMatcher
from driftaudit.match.calls import bind, call_params
from driftaudit.match.dataclass_calls import dataclass_findings
from driftaudit.match.enum_lookups import enum_lookup_findings
from driftaudit.match.global_attrs import protocol_findings
from driftaudit.match.guards import TRY_NOTE, apply_guards
from driftaudit.match.members import MemberMatcher
from driftaudit.match.merge import merge_repeats
from driftaudit.match.mutations import mutation_findings
from driftaudit.match.pack_findings import PackMatcher
from driftaudit.match.pin_conflicts import pin_conflict_findings
from driftaudit.match.surface_findings import SurfaceMatcher
from driftaudit.packs import PackEntry
from driftaudit.snapshot import Resolved
from driftaudit.snapshot.api_model import Class, Function
from driftaudit.usage import (
    AttributeNameUsage,
    CallShape,
    CallUsage,
    DataclassCallUsage,
    EnumLookupUsage,
    ImportUsage,
    IndexUsage,
    MemberUsage,
    OverrideUsage,
    ReferenceUsage,
    SubclassUsage,
    UnpackUsage,
    Usage,
    UsageSet,
)
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.pins import Pin
from driftaudit.usage.surface_uses import SurfaceUsages


def match_usages(
    usages: UsageSet,
    differ: Differ,
    packs: list[PackEntry] | None = None,
    root: Path | None = None,
    surfaces: SurfaceUsages | None = None,
    pins: list[Pin] | None = None,
    files: ConsumerFiles | None = None,
) -> list[Finding]:
    matcher = _Matcher(differ)
    members = MemberMatcher(differ, matcher, usages)
    for usage in usages.usages:
        if usage.star:
            _star_home(usage, differ)
    findings = [
        Finding(codes.PARSE_ERROR, f.path, f.line, f.column, "", f"does not parse: {f.message}")
        for f in usages.failures
    ]
    abstract: dict[str, list[Finding]] = {}  # a consumer class -> its DA306 findings
    for usage in usages.usages:
        if isinstance(usage, (ImportUsage, ReferenceUsage)):
            findings += matcher.reference(usage, usage.symbol)
        elif isinstance(usage, CallUsage) and (not usage.via or usage.via_init):
            findings += matcher.call(usage, usage.symbol, usage)
        elif isinstance(usage, UnpackUsage):
            findings += matcher.unpack(usage, members)
        elif isinstance(usage, MemberUsage):
            findings += members.member(usage)
        elif isinstance(usage, OverrideUsage):
            findings += members.override(usage)
        elif isinstance(usage, DataclassCallUsage):
            classes = members.classes_of(usage.receiver) if usage.receiver else []
            findings += dataclass_findings(usage, differ, classes)
        elif isinstance(usage, SubclassUsage):
            classes = members.classes_of(("self", usage.bases, frozenset()))
            abstract[usage.key] = abstract_findings(usage, differ, classes)
            findings += abstract[usage.key]
        elif isinstance(usage, EnumLookupUsage):
            findings += enum_lookup_findings(usage, differ)
    inherited = {id(f) for f in inherited_facts(abstract, usages.usages)}
    findings = [f for f in findings if id(f) not in inherited]
    builds = [u for u in usages.usages if isinstance(u, CallUsage) and u.via]
    findings += instantiation_places(abstract, builds)
    findings += members.likely([u for u in usages.usages if isinstance(u, AttributeNameUsage)])
    findings += TypeMatcher(differ, matcher, members).findings(usages)
    findings += mutation_findings(usages, differ, members)
    findings += protocol_findings(usages, differ)
    pack_matcher = PackMatcher(differ, usages, members, root or Path(usages.root), files)
    surface = SurfaceMatcher(differ, usages, members, pack_matcher, files)
    sglang_surfaces = surface.server_args_findings(surfaces) + surface.meta_info_findings()
    if surfaces is not None:
        sglang_surfaces += surface.http_findings(surfaces) + surface.env_findings(surfaces)
    if pins:
        sglang_surfaces += surface.pin_findings(pins)
        findings += pin_conflict_findings(pins, differ.old.tree.version)
    # a ServerArgs finding says more than the generic keyword or member one at that place
    # (and the ServerArgs defaults are judged there: DA403 where observable, not DA205)
    places = {(f.path, f.line, f.column) for f in sglang_surfaces}
    defaults = surface.server_args is not None
    if defaults:  # a dict spread into ServerArgs: its keys are judged at the dict
        places |= {
            (u.path, u.places[k][0], u.places[k][1])
            for u in usages.usages
            if isinstance(u, CallUsage)
            for k in u.spread
            if k in u.places
        }
    findings = [
        f
        for f in findings
        if not (
            f.symbol.startswith(SERVER_ARGS)
            and ((f.path, f.line, f.column) in places or (defaults and f.code.code == "DA205"))
        )
    ]
    findings += sglang_surfaces
    if packs:
        pack_findings = pack_matcher.findings(packs)
        # a pack entry about the same place and name says more (the remedy, a codemod)
        covered = {(f.path, f.line, f.column, f.symbol) for f in pack_findings}
        findings = [f for f in findings if (f.path, f.line, f.column, f.symbol) not in covered]
        findings += pack_findings
    certain = {(f.path, f.line, f.column, f.symbol) for f in findings if f.confidence == "certain"}
    findings = [
        f
        for f in findings
        if f.confidence == "certain" or (f.path, f.line, f.column, f.symbol) not in certain
    ]
    findings = apply_guards(findings, usages, differ)
    unique = {(f.path, f.line, f.column, f.code.code, f.symbol, f.message): f for f in findings}
    merged, _ = merge_repeats(list(unique.values()))
    return sorted(merged, key=Finding.sort_key)


def _star_home(usage: Usage, differ: Differ) -> None:
    """A name from star imports: under the last module whose old release defines it
    (Python binds it from the last star import that has it)."""
    rest = usage.symbol[len(usage.star[0]) + 1 :]  # the name, and any chain after it
    name = rest.split(".")[0]
    for module in usage.star:
        if differ.old.resolve(f"{module}.{name}") is not None:
            usage.symbol = f"{module}.{rest}"
            return


def _enum_rename(usage: Usage, symbol: str, change: MemberRemoved) -> dict | None:
    """`Mode.OLD` -> `Mode.NEW` where the consumer reads the member drift found renamed
    (a new member of a similar name: an unsafe fix, its value may differ)."""
    if not (
        isinstance(change, EnumMemberRemoved)
        and change.candidate_kind == "renamed"
        and change.symbol == symbol
        and isinstance(usage, ReferenceUsage)
    ):
        return None
    old, new = symbol.rpartition(".")[2], change.candidate.rpartition(".")[2]
    return {"kind": "rename-attribute", "old": old, "new": new}


def _values(positional: list[str], shape, new_fn) -> dict[str, str]:
    """The literal each parameter holds in a call: what it passes as a literal (by
    position or keyword), else, when it does not pass it, its new default."""
    passed = set(positional) | set(shape.keywords)
    values = {p.name: p.default for p in new_fn.params if p.default and p.name not in passed}
    for key, text in getattr(shape, "literals", {}).items():
        if not key.isdigit():
            values[key] = text
        elif int(key) < len(positional):
            values[positional[int(key)]] = text
    return values


class _Matcher:
    def __init__(self, differ: Differ):
        self.differ = differ
        # per symbol, what the two trees alone give: asked once per call otherwise (a
        # 4 MB file's 12,000 ServerArgs calls rebuilt its 365-field constructor each time)
        self._signatures: dict[str, tuple | None] = {}
        self._changes: dict[str, list] = {}

    # ---- names that no longer resolve ------------------------------------------

    def reference(self, usage: Usage, symbol: str, store: bool | None = None) -> list[Finding]:
        """An import, an attribute chain, a patch target or a member: is it still there?"""
        change = self.differ.reference_change(symbol)
        if change is None:
            return []
        if store is None:
            store = getattr(usage, "store", False)
        if isinstance(usage, ReferenceUsage) and isinstance(change, ModuleRemoved):
            return []  # reported where the module is imported
        if store and change.symbol == symbol:
            name = symbol.rpartition(".")[2]
            if getattr(usage, "patcher", False):  # the patcher raises AttributeError
                message = f"patches `{name}`, which sglang no longer has: {change.explain()}"
                return [finding_at(usage, change, message, use="patch")]
            # a plain write still runs and does nothing: silently different, a warning
            message = (
                f"assigns `{name}`, which sglang no longer has, so the write does nothing: "
                f"{change.explain()}"
            )
            return [finding_at(usage, change, message, use="patch", severity="warning")]
        message = change.explain()
        if isinstance(change, ModuleRemoved) and symbol.startswith(change.symbol + "."):
            name = symbol[len(change.symbol) + 1 :]
            message += f": no compatible new home of `{name}` was found"
        fix = None
        if isinstance(change, SymbolRelocated):
            name = change.symbol.rpartition(".")[2]
            direct = isinstance(usage, ImportUsage) and change.symbol == symbol
            edit = {
                "kind": "move-import",
                "name": name,
                "new_module": change.new_module,
                "new_name": change.new_name,
            }
            # unsafe: the new home is inferred from a similar class or signature
            fix = Fix(
                f"use `{change.new_name}` from `{change.new_module}`",
                edit if direct else None,
                "unsafe",
            )
        elif isinstance(change, SymbolMoved):
            name = change.symbol.rpartition(".")[2]
            direct = isinstance(usage, ImportUsage) and change.symbol == symbol
            edit = {"kind": "move-import", "name": name, "new_module": change.new_module}
            fix = Fix(f"import `{name}` from `{change.new_module}`", edit if direct else None)
        elif isinstance(change, MemberRemoved) and change.candidate:
            fix = Fix(f"use `{change.candidate}`", _enum_rename(usage, symbol, change), "unsafe")
        if isinstance(usage, ImportUsage):
            if usage.guarded:
                # still an error: the except branch silently switches the feature off
                message += TRY_NOTE
            elif usage.lazy:
                message += " (lazy import: fails when the function runs)"
        return [finding_at(usage, change, message, fix)]

    # ---- calls ----------------------------------------------------------------

    def signatures(self, symbol: str) -> tuple[Resolved, Resolved, Function, Function] | None:
        if symbol not in self._signatures:
            self._signatures[symbol] = self._find_signatures(symbol)
        return self._signatures[symbol]

    def _find_signatures(self, symbol: str) -> tuple[Resolved, Resolved, Function, Function] | None:
        old = self.differ.old.resolve(symbol)
        new = self.differ.new.resolve(symbol)
        if new is None:  # moved: the call will run against the new definition
            moved = self.differ.reference_change(symbol)
            if isinstance(moved, SymbolMoved) and moved.symbol == symbol:
                new = self.differ.new.resolve(moved.new_symbol)
        if old is None or new is None or old.opaque or new.opaque:
            return None
        old, old_fn = _constructor(old, self.differ.old)
        new, new_fn = _constructor(new, self.differ.new)
        if old_fn is None or new_fn is None:
            return None
        return old, new, old_fn, new_fn

    def _unbound_method(self, symbol: str, obj) -> bool:
        """`Cls.meth(obj, ...)`: a plain method called through its class passes self."""
        if not isinstance(obj, Function) or {"staticmethod", "classmethod"} & set(obj.labels):
            return False
        parent = self.differ.old.resolve(symbol.rpartition(".")[0])
        return parent is not None and isinstance(parent.obj, Class)

    def call(
        self, usage: Usage, symbol: str, shape: CallShape | CallUsage, bound: bool = False
    ) -> list[Finding]:
        """Bind the call to the old and the new signature; report what no longer binds.

        `bound`: called on an instance (`obj.meth(...)`), so `self` is not passed.
        """
        found = self.signatures(symbol)
        if found is None:
            return self._new_only_call(usage, symbol, shape, bound)
        old, new, old_fn, new_fn = found
        unbound = not bound and self._unbound_method(symbol, old.obj)
        before = bind(call_params(old_fn, unbound), shape)
        if not before.ok:
            return []  # the call did not fit the old signature either: not this upgrade
        after = bind(call_params(new_fn, unbound), shape)
        locs = (function_location(old, old_fn), function_location(new, new_fn))
        if symbol not in self._changes:
            self._changes[symbol] = self.differ.signature_changes(symbol, old_fn, new_fn, locs)
        changes = self._changes[symbol]
        renames = {c.param: c for c in changes if isinstance(c, ParameterRenamed)}
        findings: list[Finding] = []
        for keyword in after.unknown_keywords:
            if keyword in shape.settled:
                continue  # passed by the `functools.partial`, reported there
            spread = keyword in shape.spread  # a key of the dict spread: no edit here
            if keyword in renames:
                change = renames[keyword]
                edit = {"kind": "rename-keyword", "old": keyword, "new": change.new_name}
                fix = Fix(
                    f"rename keyword `{keyword}` to `{change.new_name}`"
                    + (" in the dict spread here" if spread else ""),
                    None if spread else edit,
                )
                at = shape.places.get(keyword)
                findings.append(finding_at(usage, change, change.explain(), fix, at=at))
            else:
                change = _removed_param(changes, symbol, keyword, locs)
                message = f"passes keyword `{keyword}`, which {change.explain().split(' ', 2)[2]}"
                edit = {"kind": "drop-keyword", "keyword": keyword}
                fix = Fix(
                    f"drop the `{keyword}` key from the dict spread here"
                    if spread
                    else f"drop the `{keyword}=` argument",
                    None if spread else edit,
                )
                at = shape.places.get(keyword)
                findings.append(finding_at(usage, change, message, fix, at=at))
        if after.too_many_positional:
            total = len([p for p in call_params(new_fn, unbound) if p.positional])
            change = PositionalCapacityReduced(symbol, *locs, shape.positional, total)
            extra = [p.name for p in call_params(old_fn, unbound) if p.positional]
            extra = extra[total : shape.positional]  # the old parameters they filled
            takes = {p.name for p in call_params(new_fn, unbound) if p.kind != "positional-only"}
            fix = Fix(
                "pass the arguments by keyword"
                if extra and all(name in takes for name in extra)
                else "drop the extra arguments: the new signature has no parameter for them"
            )
            at = shape.places.get(str(total))  # the first argument too many
            findings.append(finding_at(usage, change, change.explain(), fix, at=at))
        renamed_targets = {renames[k].new_name for k in shape.keywords if k in renames}
        for name in after.missing:
            if name in renamed_targets or name in before.missing:
                continue
            change = RequiredParameterAdded(symbol, *locs, name)
            message = f"does not pass `{name}`, a new required parameter of `{short_name(symbol)}`"
            findings.append(finding_at(usage, change, message, Fix(f"pass `{name}`")))
        pairs = zip(before.positional, after.positional, strict=False)
        for index, (was, now) in enumerate(pairs):
            if was == now or index < shape.settled_positional:
                continue
            change = PositionalRebound(symbol, *locs, index, was, now)
            message, at = change.explain(), shape.places.get(str(index))
            if was in renames and renames[was].new_name == now:
                # renamed in place: still binds, but a new name often means a new meaning
                message += " (renamed in place: check the value still means the same)"
                fix = Fix(f"check the argument; pass it as `{now}=`")
                findings.append(finding_at(usage, change, message, fix, severity="warning", at=at))
            else:
                fix = Fix(f"pass `{was}=` by keyword")
                findings.append(finding_at(usage, change, message, fix, at=at))
        if not (shape.star_args or shape.star_kwargs or shape.partial):
            passed = set(before.positional) | set(shape.keywords)
            for change in changes:
                if isinstance(change, DefaultChanged) and change.param not in passed:
                    values = _values(before.positional, shape, new_fn)
                    values.pop(change.param, None)  # its own tests see the old or the new default
                    if never_runs(change.conditions, values):
                        continue  # what the call passes keeps the new code from reading it
                    message = f"relies on the default of `{change.param}`: {change.explain()}"
                    keep = f"{change.param}={change.old_default}"
                    fix = Fix(f"pass `{keep}` to keep the old behaviour")
                    findings.append(finding_at(usage, change, message, fix))
        return findings

    def _new_only_call(self, usage, symbol: str, shape, bound: bool) -> list[Finding]:
        """A name only the new tree has (new API, or code already ported): the call
        must still fit the new signature."""
        if self.differ.old.resolve(symbol) is not None:
            return []
        new = self.differ.new.resolve(symbol)
        new_fn = callable_signature(new.obj) if new is not None and not new.opaque else None
        if new_fn is None or shape.star_args or shape.star_kwargs or shape.partial:
            return []
        parent = self.differ.new.resolve(symbol.rpartition(".")[0])
        unbound = (
            not bound
            and isinstance(new.obj, Function)
            and not {"staticmethod", "classmethod"} & set(new.obj.labels)
            and parent is not None
            and isinstance(parent.obj, Class)
        )
        after = bind(call_params(new_fn, unbound), shape)
        locs = (None, function_location(new, new_fn))
        findings = []
        for keyword in after.unknown_keywords:
            change = ParameterRemoved(symbol, *locs, keyword)
            message = f"passes keyword `{keyword}`, which `{short_name(symbol)}` does not take"
            # not rewritten: with no old signature, a rename cannot be told from a removal
            fix, at = Fix(f"drop `{keyword}=`"), shape.places.get(keyword)
            findings.append(finding_at(usage, change, message, fix, at=at))
        for name in after.missing:
            change = RequiredParameterAdded(symbol, *locs, name)
            message = f"does not pass `{name}`, a required parameter of `{short_name(symbol)}`"
            findings.append(finding_at(usage, change, message, Fix(f"pass `{name}`")))
        return findings

    # ---- return shapes ---------------------------------------------------------

    def unpack(self, usage: UnpackUsage, members: MemberMatcher | None = None) -> list[Finding]:
        if not usage.symbol and members is not None:  # `a, b = obj.meth(...)`
            for cls in members.classes_of(usage.receiver):
                if self.differ.old.resolve(f"{cls}.{usage.member}") is not None:
                    usage.symbol = f"{cls}.{usage.member}"
                    break
        found = self.signatures(usage.symbol) if usage.symbol else None
        if found is None:
            return []
        old, new, old_fn, new_fn = found
        locs = (function_location(old, old_fn), function_location(new, new_fn))
        paths = (old.canonical, new.canonical)
        change = self.differ.return_change(usage.symbol, old_fn, new_fn, locs, paths)
        if change is None:
            return []
        if isinstance(usage, IndexUsage):
            return self._index(usage, change)
        if isinstance(change, ReturnBecameObject):
            if usage.targets != change.old_arity and not usage.starred:
                return []
            message = (
                f"unpacks {usage.targets} values from `{short_name(usage.symbol)}`, which now "
                f"returns one `{change.new_class.rpartition('.')[2]}` object (was a tuple of "
                f"{change.old_arity}): it cannot be unpacked"
            )
            shown = change.fields[: change.old_arity] if change.fields else []
            reads = ", ".join(f"`.{f}`" for f in shown)
            fix = Fix(f"keep the object and read its fields{': ' + reads if reads else ''}")
            return [finding_at(usage, change, message, fix)]
        if usage.starred:
            if usage.targets - 1 <= change.new_arity:
                return []
        elif usage.targets != change.old_arity:
            return []
        message = (
            f"unpacks {usage.targets} values from `{short_name(usage.symbol)}`, which now returns "
            f"{change.new_arity} (was {change.old_arity})"
        )
        described = f": {', '.join(change.new_elements)}" if change.new_elements else ""
        slots = None if usage.starred else _slots(old_fn.return_elements, change.new_elements)
        edit = {"kind": "pad-unpack", "slots": slots} if slots else None
        fix = Fix(f"unpack {change.new_arity} values{described}", edit)
        return [finding_at(usage, change, message, fix)]

    def _index(self, usage: IndexUsage, change: Change) -> list[Finding]:
        """`out[i]` of a result that became one object, or that no longer has an `i`th value."""
        name, at = short_name(usage.symbol), f"`[{usage.index}]`"
        if isinstance(change, ReturnBecameObject):
            found = self.differ.new.resolve(change.new_class)
            if found is None or "__getitem__" in getattr(found.obj, "members", {"__getitem__": 1}):
                return []
            cls = change.new_class.rpartition(".")[2]
            message = (
                f"takes {at} of the result of `{name}`, which now returns one `{cls}` object "
                f"(was a tuple of {change.old_arity}): it cannot be indexed"
            )
            reads = ", ".join(f"`.{f}`" for f in change.fields or [])
            fix = Fix(f"read the object's fields{': ' + reads if reads else ''}")
            return [finding_at(usage, change, message, fix)]
        if isinstance(change, ReturnArityChanged) and usage.index >= change.new_arity:
            message = (
                f"takes {at} of the result of `{name}`, which now returns {change.new_arity} "
                f"values (was {change.old_arity}): IndexError"
            )
            return [finding_at(usage, change, message)]
        return []


def _constructor(found: Resolved, snapshot) -> tuple[Resolved, Function | None]:
    """The function calling `found` runs: itself, a class's own or generated `__init__`,
    else the one it inherits from an sglang base (with the module that defines it)."""
    fn = callable_signature(found.obj, snapshot)
    if fn is not None or not isinstance(found.obj, Class):
        return found, fn
    init = snapshot.resolve(f"{found.canonical}.__init__")
    if init is None or init.opaque or not isinstance(init.obj, Function):
        return found, None
    return init, init.obj


def _slots(old: list[str], new: list[str] | None) -> list[int | None] | None:
    """For each new return element, the index of the old element it is (None: new).

    Only when every old element is still returned, in the same order: then the
    consumer's targets keep their meaning and new positions get a placeholder.
    """
    if not old or not new or len(set(old)) != len(old):
        return None
    slots = [old.index(e) if e in old else None for e in new]
    kept = [s for s in slots if s is not None]
    return slots if kept == list(range(len(old))) else None


_IO_STRUCT = ".managers.io_struct"  # request structs: a keyword is a request field


def _removed_param(changes: list[Change], symbol: str, keyword: str, locs) -> Change:
    found = next((c for c in changes if getattr(c, "param", None) == keyword), None)
    if found is None:
        found = ParameterRemoved(symbol, *locs, keyword)
    if type(found) is ParameterRemoved and _IO_STRUCT in symbol:
        return RequestKeywordRemoved(found.symbol, *locs, keyword)
    return found
