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
from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.changes import (
    Change,
    ParameterAdded,
    ParameterRemoved,
    ParameterRenamed,
    RequiredParameterAdded,
    short_name,
)
from driftaudit.snapshot.api_model import VAR_KEYWORD, VAR_POSITIONAL, Function
from driftaudit.snapshot.callgraph import CallGraph, CallShape
from driftaudit.usage import OverrideUsage

_VARIADIC = (VAR_POSITIONAL, VAR_KEYWORD)


class KeywordCallers:
    """Where a snapshot's code passes a keyword argument by name (a text test, then `ast`
    on the files that pass it: the regular expression only picks the files to parse)."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._found: dict[tuple[str, str], str | None] = {}

    def first(self, keyword: str, callee: str) -> str | None:
        """`path:line` of a call of a function or method named `callee` that passes
        `keyword=...` (any call, for a method called through its instance), or None."""
        if (keyword, callee) not in self._found:
            self._found[keyword, callee] = self._scan(keyword, callee)
        return self._found[keyword, callee]

    def _scan(self, keyword: str, callee: str) -> str | None:
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
                if (
                    isinstance(node, ast.Call)
                    and (callee in _CALLED_THROUGH or _called_name(node.func) == callee)
                    and any(k.arg == keyword for k in node.keywords)
                ):
                    return f"{relpath}:{node.lineno}"
        return None


# methods called through the instance itself, `self.proj(x, k=v)` (torch's
# `Module.__call__` runs `forward`): their calls do not spell their name
_CALLED_THROUGH = {"forward", "__call__"}


def _called_name(func: ast.expr) -> str | None:
    """The name a call's callee ends in (`f(...)`, `obj.f(...)`)."""
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


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
        caller = callers.first(added.param, usage.method)
        if caller is not None:
            found.append((added, caller))
    return found


# ---- what the release's own callers pass to a replaced name --------------------------

MAX_CALLER_MODULES = 40  # modules searched for the callers of a replaced name


@dataclass
class CallerMismatch(Change):
    """A call in a release of a name the consumer replaced that the replacement's
    signature cannot bind (a consumer-side fact: its code is DA305 as an override)."""

    reason: str = ""
    caller: str = ""  # file:line of the call

    code = codes.POSITIONAL_MISMATCH

    def explain(self) -> str:
        return f"`{short_name(self.symbol)}` is called with {self.reason} (`{self.caller}`)"


def binding_failure(shape: CallShape, usage: OverrideUsage, bound: bool) -> str | None:
    """Why a call of that shape cannot bind to the replacement's parameters (as Python
    binds them: too many positionals, a keyword it has no place for or already filled,
    a required parameter left out), or None. What a `*args`/`**mapping` passes is not
    known: only the explicit part is checked then."""
    own = [p for p in usage.params if p not in usage.keyword_only]
    positional = own[1:] if bound and own else own
    count = shape.positional
    if count is not None and count > len(positional) and not usage.var_positional:
        return f"{count} positional arguments"
    filled = set(positional[:count]) if count is not None else set()
    for keyword in shape.keywords:
        if keyword in filled:
            return f"`{keyword}=` as well as positionally"
        if keyword not in usage.params and not usage.var_keyword:
            return f"`{keyword}=`"
    if count is None or shape.more_keywords:
        return None
    passed = filled | set(shape.keywords)
    left_out = [
        p
        for p in [*positional, *usage.keyword_only]
        if p not in passed and p not in usage.defaulted
    ]
    return f"no `{left_out[0]}` (it requires one)" if left_out else None


class ReplacementCallers:
    """The calls a snapshot's own code makes of a name the consumer replaced, and those
    the replacement cannot take. The call graph finds them (a text scan picks the modules,
    only the functions that spell the name are resolved); what it cannot resolve is left
    out."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._graph: CallGraph | None = None

    @property
    def graph(self) -> CallGraph:
        if self._graph is None:
            self._graph = CallGraph(self.snapshot)
        return self._graph

    def failing(self, usage: OverrideUsage, path: str) -> dict[str, str]:
        """reason -> the first `file:line` that calls `path` (as the consumer wrote it:
        a module's global rebound affects that module's calls alone) in a way the
        replacement `usage` cannot bind."""
        graph = self.graph
        node = graph.callable_node(graph.resolve(path))
        if node is None or node.rpartition(".")[2] != usage.method:
            return {}
        written = path.rpartition(".")[0]
        cls = graph.owner_class(node)
        # the class written on, when it inherits the method: its instances alone run the
        # replacement (`Sub.forward = mine` with `forward` defined on a base)
        patched = graph.resolve(written) if cls is not None else None
        patched = patched if patched is not None and graph.is_class(patched) else cls
        defined_in = (graph.split(node) or ("",))[0]
        if cls is None and written in self.snapshot.files and written != defined_in:
            modules = [written]  # `mod.f = mine` where mod imported f: mod's calls alone
        else:
            modules = graph.modules_calling({usage.method})[usage.method][:MAX_CALLER_MODULES]
        short = cls.rpartition(".")[2] if cls else ""
        calls = []
        if patched == cls:  # a call resolved to a base's method may be on another subclass
            calls = [
                (c, shape) for c in graph.callers(node, modules) for shape in graph.shapes(c, node)
            ]
        if patched is not None:
            # `self.attn(q, k, v)` on an attribute holding the class: the modules that build it
            name = patched.rpartition(".")[2]
            built = graph.modules_calling({name})[name][:MAX_CALLER_MODULES]
            calls += graph.instance_calls(node, built, patched)
        found: dict[str, str] = {}
        for caller, shape in calls:
            # `Cls.meth(obj, ...)` passes the instance itself
            bound = cls is not None and shape.through.rpartition(".")[2] != short
            reason = binding_failure(shape, usage, bound)
            if reason is not None:
                found.setdefault(reason, graph.location(caller, shape.line) or caller)
        graph.save()  # the module call data read for it, for the next run
        return found
