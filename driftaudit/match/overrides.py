"""What an override (or a stand-in) of an sglang method must now accept.

A consumer method that sglang calls in place of its own (`class Mine(LogitsProcessor)`
overriding `forward`, or a wrapper built from a `LogitsProcessor` that sglang calls where
it called the processor) breaks when the base method gains a parameter that sglang's
callers pass and the override has no place for it (no such parameter, no `**kwargs`).
A new optional parameter counts only when some call in the new tree passes it by keyword:
that call is the evidence. A positional pass is not looked for (the check under-reports).
A consumer function installed in sglang's place (`Cls.meth = fn`: `OverrideUsage.replaces`)
is such an override too; it was written for whatever release, so only the changes that
reach its own parameters count (`reaches_replacement`).
"""

from __future__ import annotations

import ast
import re

from driftaudit.drift.changes import (
    Change,
    ParameterAdded,
    ParameterRemoved,
    ParameterRenamed,
    RequiredParameterAdded,
)
from driftaudit.snapshot.api_model import VAR_KEYWORD, VAR_POSITIONAL, Function
from driftaudit.usage import OverrideUsage

_VARIADIC = (VAR_POSITIONAL, VAR_KEYWORD)


class KeywordCallers:
    """Where a snapshot's code passes a keyword argument by name (a text test, then `ast`
    on the files that pass it: the regular expression only picks the files to parse)."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._found: dict[str, str | None] = {}

    def first(self, keyword: str) -> str | None:
        """`path:line` of a call that passes `keyword=...`, or None."""
        if keyword not in self._found:
            self._found[keyword] = self._scan(keyword)
        return self._found[keyword]

    def _scan(self, keyword: str) -> str | None:
        name = keyword.encode()
        passed = re.compile(rb"(?:[(,]|^)\s*" + re.escape(name) + rb"\s*=(?!=)", re.M)
        root = self.snapshot.tree.root
        for relpath in sorted(self.snapshot.files.values()):
            try:
                data = (root / relpath).read_bytes()
            except OSError:
                continue
            if name not in data or not passed.search(data):
                continue
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and any(k.arg == keyword for k in node.keywords):
                    return f"{relpath}:{node.lineno}"
        return None


def mirrors(usage: OverrideUsage, old: Function) -> bool:
    """Does the consumer method take the old base method's parameters, in order?

    Required of a stand-in (a wrapper, not a subclass): a method that merely shares a name
    with the wrapped class's is not sglang's to call. A method the base took with no
    parameters is mirrored by one that takes none either."""
    wanted = [p.name for p in old.bound_params if p.kind not in _VARIADIC]
    own = usage.params[1:] if usage.params[:1] in (["self"], ["cls"]) else usage.params
    if not wanted:  # no parameters to mirror: only a method that takes none either
        return not own and not usage.var_positional and not usage.var_keyword
    return own[: len(wanted)] == wanted


def reaches_replacement(change: Change, usage: OverrideUsage, new: Function) -> bool:
    """Does a signature change break the replacement `usage` (`new`: sglang's function
    now)? sglang now passes a parameter it has no place for (a new required one, a new
    name), no longer passes one it requires (removed, without a default in it; not when
    the new function takes `*args`/`**kwargs`: its callers may pass it still, as a
    `CustomOp.forward(self, *args, **kwargs)` that dispatches to the same parameters), or
    passes one of its parameters at another position."""
    if isinstance(change, (RequiredParameterAdded, ParameterRenamed)):
        name = change.new_name if isinstance(change, ParameterRenamed) else change.param
        return name not in usage.params and not usage.var_keyword
    param = getattr(change, "param", None)
    if isinstance(change, ParameterRemoved):
        passed_on = any(p.kind in _VARIADIC for p in new.params)
        return param in usage.params and param not in usage.defaulted and not passed_on
    return param in usage.params if param else True


def unaccepted_additions(
    usage: OverrideUsage, additions: list[ParameterAdded], callers: KeywordCallers
) -> list[tuple[ParameterAdded, str]]:
    """The new optional parameters sglang passes by keyword that the override cannot take,
    each with the call that passes it."""
    if usage.var_keyword:
        return []
    found = []
    for added in additions:
        if added.param in usage.params:
            continue
        caller = callers.first(added.param)
        if caller is not None:
            found.append((added, caller))
    return found
