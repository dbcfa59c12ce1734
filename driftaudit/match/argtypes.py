"""Values the consumer hands to sglang whose type the new release no longer accepts:
call arguments (DA704) and attributes it assigns on sglang objects (DA705).

A value's type comes from the consumer's syntax (`usage/valuetypes.py`); what a type
accepts from the sglang annotation, its names resolved in the module that declares it
(`drift/annotations.py`). Reported only where the old annotation accepted the value
and the new one rejects it: a value that never fitted is not this upgrade's doing.
"""

from __future__ import annotations

import ast
import re

from driftaudit.drift.annotations import accepts
from driftaudit.drift.differ import callable_signature, function_location
from driftaudit.drift.pairs import PairMemo
from driftaudit.drift.param_uses import UNKNOWN, new_type_use
from driftaudit.drift.typechanges import AttributeTypeChanged, ParameterTypeChanged
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.calls import bind, call_params
from driftaudit.snapshot import Resolved, Snapshot
from driftaudit.snapshot.api_model import Alias, Attribute, Class, Function, Module
from driftaudit.usage import CallUsage, MemberUsage, UsageSet
from driftaudit.usage.valuetypes import value_type

_SGLANG_CALL = "sglang-call:"


class TypeMatcher:
    def __init__(self, differ, matcher, members):
        self.differ = differ
        self._uses: PairMemo | None = None  # new_type_use answers: the trees alone give them
        self.matcher = matcher  # signatures() and _unbound_method()
        self.members = members  # classes_of()

    def findings(self, usages: UsageSet) -> list[Finding]:
        found: list[Finding] = []
        for usage in usages.usages:
            if isinstance(usage, CallUsage) and usage.arg_types and not usage.via:
                found += self._call(usage, usage.symbol, usage, bound=False)
            elif isinstance(usage, MemberUsage):
                if usage.call is not None and usage.call.arg_types:
                    for cls in self.members.classes_of(usage.receiver):
                        found += self._call(usage, f"{cls}.{usage.member}", usage.call, True)
                        break
                elif usage.store and usage.value_type:
                    found += self._attribute(usage)
        if self._uses is not None:
            self._uses.flush()
        return found

    # ---- calls -------------------------------------------------------------------

    def _call(self, usage, symbol: str, shape, bound: bool) -> list[Finding]:
        signatures = self.matcher.signatures(symbol)
        if signatures is None:
            return []
        old, new, old_fn, new_fn = signatures
        unbound = not bound and self.matcher._unbound_method(symbol, old.obj)
        before = bind(call_params(old_fn, unbound), shape)
        if not before.ok:
            return []
        findings = []
        for key, kind in shape.arg_types.items():
            if key.isdigit() and int(key) >= len(before.positional):
                continue  # an extra positional `*args` takes: no named parameter to compare
            param = before.positional[int(key)] if key.isdigit() else key
            value = self._value(kind)
            old_param, new_param = old_fn.param(param), new_fn.param(param)
            if value is None or old_param is None or new_param is None:
                continue
            old_type, new_type = old_param.annotation, new_param.annotation
            if not old_type or not new_type or old_type == new_type:
                continue
            if self._accepts(self.differ.old, old, old_type, value) is not True:
                continue
            if self._accepts(self.differ.new, new, new_type, value) is not False:
                continue
            locs = (function_location(old, old_fn), function_location(new, new_fn))
            change = ParameterTypeChanged(symbol, *locs, param, old_type, new_type, value)
            fix = Fix(f"pass a value of type `{new_type}` as `{param}`")
            at = shape.places.get(key)  # the argument
            message, severity = change.explain(), ""
            use = self._new_type_use(new, new_fn, param, value)
            if use is None:  # the annotation changed, not what the code needs
                message += (
                    f"; but the new code needs nothing of it a `{value}` lacks (it stores, "
                    f"sizes, iterates or indexes it): a `{value}` still works"
                )
                severity = "info"
            elif use != UNKNOWN:
                message += f"; the new code relies on the new type ({use})"
            findings.append(finding_at(usage, change, message, fix, at=at, severity=severity))
        return findings

    def _new_type_use(self, new: Resolved, new_fn: Function, param: str, value: str):
        """What the new function (and, for what it stores on `self`, its class) does with
        the parameter that `value` does not support; None: nothing; UNKNOWN."""
        module = new.module
        lineno = new_fn.lineno or getattr(new.obj, "lineno", None)
        if module is None or not lineno:
            return UNKNOWN
        if self._uses is None:
            self._uses = PairMemo(self.differ.old, self.differ.new, "new-type-use")

        def compute() -> str | None:
            source = self.differ.new.source(module.name)
            if source is None:
                return UNKNOWN
            return new_type_use(source, lineno, new_fn.name, param, value)

        return self._uses.answer(repr((module.name, lineno, new_fn.name, param, value)), compute)

    # ---- attributes ----------------------------------------------------------------

    def _attribute(self, usage: MemberUsage) -> list[Finding]:
        value = self._value(usage.value_type)
        if value is None:
            return []
        for cls in self.members.classes_of(usage.receiver):
            symbol = f"{cls}.{usage.member}"
            old, new = self.differ.old.resolve(symbol), self.differ.new.resolve(symbol)
            if old is None or new is None or old.opaque or new.opaque:
                continue
            old_type = _attribute_type(self.differ.old, old)
            new_type = _attribute_type(self.differ.new, new)
            if not old_type or not new_type or old_type == new_type:
                return []
            if self._accepts(self.differ.old, old, old_type, value) is not True:
                return []
            if self._accepts(self.differ.new, new, new_type, value) is not False:
                return []
            change = AttributeTypeChanged(
                symbol, old.location, new.location, usage.member, old_type, new_type, value
            )
            fix = Fix(f"assign a value of type `{new_type}`")
            return [finding_at(usage, change, change.explain(), fix)]
        return []

    # ---- helpers -------------------------------------------------------------------

    def _value(self, kind: str) -> str | None:
        """A consumer value type; an sglang call counts only when it builds a class."""
        if not kind.startswith(_SGLANG_CALL):
            return kind
        path = kind[len(_SGLANG_CALL) :]
        found = self.differ.old.resolve(path)
        if found is None or found.opaque or not isinstance(found.obj, Class):
            return None
        return found.canonical

    def _accepts(self, snapshot: Snapshot, where: Resolved, annotation: str, value: str):
        module = where.module
        return accepts(
            annotation,
            value,
            lambda name: _resolve_name(snapshot, module, name),
            lambda path: _describe(snapshot, path),
        )


def _resolve_name(snapshot: Snapshot, module: Module | None, name: str) -> str | None:
    """A name as the module that declares the annotation sees it, made canonical."""
    if module is None:
        return None
    first, _, rest = name.partition(".")
    member = module.members.get(first)
    if isinstance(member, Alias):
        path = member.target
    elif member is not None:
        path = f"{module.name}.{first}"
    else:
        return None
    path = f"{path}.{rest}" if rest else path
    if path.startswith("sglang."):
        found = snapshot.resolve(path)
        return found.canonical if found is not None and not found.opaque else None
    return path


def _describe(snapshot: Snapshot, path: str) -> tuple[bool, list[str]] | None:
    if not path.startswith("sglang."):
        return None
    found = snapshot.resolve(path)
    if found is None or found.opaque or not isinstance(found.obj, Class):
        return None
    return found.obj.is_enum, list(found.obj.bases)


def _attribute_type(snapshot: Snapshot, found: Resolved) -> str | None:
    """An attribute's annotation; else the `__init__` parameter it is assigned from
    (`self.x = x`); else the type its value is built as (`self.x = array("q")`)."""
    attr = found.obj
    if not isinstance(attr, Attribute):
        return None
    if attr.annotation:
        return attr.annotation
    if "instance-attribute" not in attr.labels or not attr.value:
        return None
    owner = snapshot.resolve(found.canonical.rpartition(".")[0])
    init = callable_signature(owner.obj) if owner is not None else None
    if isinstance(init, Function):
        param = init.param(attr.value)
        if param is not None and param.annotation:
            return param.annotation
    if attr.type in ("array.array", "torch.Tensor"):
        return attr.type
    try:
        node = ast.parse(attr.value, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    kind = value_type(node, lambda _n: None, lambda _n: None)
    return kind if kind not in (None, "None") else None


def resolve_annotation_class(snapshot: Snapshot, where: Resolved, annotation: str) -> str | None:
    """The sglang class an annotation names (`ServerArgs`, `Optional["ModelConfig"]`), as
    the module that declares it sees the name; None for anything else."""
    text = annotation.strip().strip("'\"")
    inner = re.fullmatch(r"(?:typing\.)?Optional\[\s*['\"]?([\w.]+)['\"]?\s*\]", text)
    name = inner.group(1) if inner else text
    if not re.fullmatch(r"[\w.]+", name):
        return None
    path = _resolve_name(snapshot, where.module, name)
    if path is None or not path.startswith("sglang."):
        return None
    found = snapshot.resolve(path)
    return found.canonical if found is not None and isinstance(found.obj, Class) else None
