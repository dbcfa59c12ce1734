"""Where the consumer calls or constructs an sglang callable that stopped doing part of
what it did (DA702): `ModelRunner(...)` no longer allocating the memory pool.

Entries are the consumer's calls of sglang functions and constructors (a consumer
subclass constructed counts as its sglang base) and method calls on receivers of known
sglang type. Each entry's lost callees come from `drift.reach`. One finding per consumer
file and entry (at its first call site, naming the others); the lost callees are ranked by
signal: first those that set attributes the consumer reads, then those whose names the
consumer uses (calls, overrides), then the rest.
"""

from __future__ import annotations

from driftaudit.drift.changes import short_name
from driftaudit.drift.reach import ReachDiffer, ReachLost, describe_callers
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.reach_guards import ConsumerValues, never_taken
from driftaudit.match.receivers import TypeResolver
from driftaudit.pair_cache import MISSING, PairMemo
from driftaudit.snapshot.callgraph import CallGraph
from driftaudit.usage import (
    AttributeNameUsage,
    CallUsage,
    MemberUsage,
    OverrideUsage,
    UsageSet,
)

SHOWN = 3  # lost callees named in the message; all of them are in `details`


def consumer_names(usages: UsageSet, reads: set[str]) -> set[str]:
    """Attribute and method names the consumer reads, calls or overrides."""
    names = set(reads)
    for usage in usages.usages:
        if isinstance(usage, (AttributeNameUsage, MemberUsage)):
            names.add(usage.member)
        elif isinstance(usage, OverrideUsage) and not usage.stand_in:
            names.add(usage.method)
        elif isinstance(usage, CallUsage):
            names.add(usage.symbol.rpartition(".")[2])
    return names


def _entries(usages: UsageSet, graph: CallGraph, types: TypeResolver):
    """(usage, canonical callable node, the methods the consumer overrides on that path)
    for each consumer call of an sglang callable."""
    overrides = [u for u in usages.usages if isinstance(u, OverrideUsage) and not u.stand_in]
    overridden = {u.method for u in overrides}
    by_class: dict[str, set[str]] = {}
    for usage in overrides:
        by_class.setdefault(usage.owner, set()).add(usage.method)
    for usage in usages.usages:
        node = None
        if isinstance(usage, CallUsage):
            node = graph.callable_node(graph.resolve(usage.symbol))
        elif isinstance(usage, MemberUsage) and usage.call is not None:
            if usage.receiver and usage.receiver[0] == "self" and usage.member in overridden:
                continue  # the consumer's own method runs, not sglang's
            cls = types.class_of(usage.receiver)
            node = graph.method(cls, usage.member) if cls else None
        if node is not None:
            # a consumer subclass constructed: its overrides run instead of sglang's methods
            yield usage, node, frozenset(by_class.get(getattr(usage, "via", ""), ()))


def _through(change: ReachLost, overrides: frozenset[str]) -> bool:
    """Does the lost path run through a method the consumer's subclass overrides (so
    sglang's version of it never ran for this consumer)?"""
    return any(node.rpartition(".")[2] in overrides for node in change.old_path[1:])


def _signal(change: ReachLost, names: set[str]) -> tuple[int, list[str]]:
    read = sorted(set(change.sets) & names)
    used = change.callee.rpartition(".")[2] in names
    return (2 if read else 1 if used else 0), read


def reach_findings(
    usages: UsageSet, old, new, types: TypeResolver, reads: set[str], files=None
) -> list[Finding]:
    """DA702 findings; `reads`: every attribute name the consumer reads; `files`: the
    consumer's sglang files (path -> (text, tree)), for the values it gives."""
    differ = ReachDiffer(CallGraph(old), CallGraph(new))
    names = consumer_names(usages, reads)
    values = ConsumerValues(usages, types, files or {}, old)
    sites: dict[tuple, list] = {}  # (file, entry, overrides) -> its call sites, in order
    for usage, entry, overrides in _entries(usages, differ.old, types):
        sites.setdefault((usage.path, entry, overrides), []).append(usage)
    findings = []
    memo = PairMemo(old, new, "reach-lost")  # per version pair: only new entries computed
    for (_, entry, overrides), calls in sites.items():
        cls = differ.old.owner_class(entry)
        every = memo.get(entry, list)
        if every is MISSING or not all(isinstance(c, ReachLost) for c in every):
            every = differ.lost(entry)
            memo.put(entry, every)
        lost = [
            c
            for c in every
            if not _through(c, overrides) and not never_taken(c, cls, calls, values)
        ]
        if lost:
            ranked = sorted(lost, key=lambda c: (-_signal(c, names)[0], c.callee))
            findings.append(_finding(calls, entry, ranked, names))
    memo.flush()
    differ.old.save()
    differ.new.save()
    return findings


def _finding(calls: list, entry: str, ranked: list[ReachLost], names: set[str]) -> Finding:
    """One finding per consumer file and entry, at its first call site."""
    first = ranked[0]
    shown = []
    for change in ranked[:SHOWN]:
        text = f"`{short_name(change.callee)}`"
        _, read = _signal(change, names)
        if read:
            text += f" (sets {', '.join(f'`{r}`' for r in read[:3])}, which the consumer reads)"
        shown.append(text)
    more = f" and {len(ranked) - SHOWN} more" if len(ranked) > SHOWN else ""
    message = f"`{short_name(entry)}` no longer reaches {', '.join(shown)}{more}"
    if first.new_callers:
        where = describe_callers(first.new_callers[0])
        message += f"; sglang now calls `{short_name(first.callee)}` from {where}"
    if len(calls) > 1:
        lines = ", ".join(str(c.line) for c in calls[1:])
        message += f" (also called at line{'s' if len(calls) > 2 else ''} {lines})"
    fix = Fix("call what the new callers call, after this call (see `details`)")
    details = "\n".join(
        f"{c.explain()} [old {c.old_location}"
        + (f", new {c.new_location}]" if c.new_location else "]")
        for c in ranked
    )
    return finding_at(calls[0], first, message, fix, symbol=entry, details=details)
