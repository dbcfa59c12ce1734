"""Where the consumer calls or constructs an sglang callable that stopped doing part of
what it did (DA702): `ModelRunner(...)` no longer allocating the memory pool.

Entries are the consumer's calls of sglang functions and constructors (a consumer
subclass constructed counts as its sglang base) and method calls on receivers of known
sglang type. Each entry's lost callees come from `drift.reach_changes`.

An entry is reported only when the consumer relies on what one of its lost callees did:
it reads an attribute the lost code set, on a receiver of known type whose class owns the
callee (`runner.req_to_token_pool` on a `ModelRunner`, whose `init_memory_pool` set it);
the finding then names every lost callee (what the new callers call is the fix), those
the consumer relies on first. A call
path that merely changed inside sglang, behind an entry the consumer calls as sglang
itself does (an event loop, a constructor whose state it never reads), is sglang's
business; so is a same-named attribute on an object of another class. One finding per
consumer file and entry (at its first call site, naming the others).
"""

from __future__ import annotations

from driftaudit.drift.changes import short_name
from driftaudit.drift.pairs import MISSING, PairMemo
from driftaudit.drift.reach_changes import ReachDiffer, ReachLost, describe_callers
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.match.reach_branches import ConsumerValues, never_taken
from driftaudit.match.receivers import TypeResolver
from driftaudit.snapshot.callgraph import CallGraph
from driftaudit.usage import CallUsage, MemberUsage, OverrideUsage, UsageSet

SHOWN = 3  # lost callees named in the message; all of them are in `details`


def typed_reads(usages: UsageSet, types: TypeResolver) -> dict[str, set[str]]:
    """attribute -> the sglang classes of the receivers the consumer reads it on (loads
    on receivers of known type only: a same-named attribute elsewhere says nothing)."""
    reads: dict[str, set[str]] = {}
    for usage in usages.usages:
        if isinstance(usage, MemberUsage) and not usage.store and usage.call is None:
            cls = types.class_of(usage.receiver)
            if cls is not None:
                reads.setdefault(usage.member, set()).add(cls)
    return reads


def relied_on(change: ReachLost, reads: dict[str, set[str]], graph: CallGraph) -> list[str]:
    """The attributes the lost code set that the consumer reads on an object whose class
    owns the lost callee (the callee is that class's method, its own or inherited)."""
    name = change.callee.rpartition(".")[2]
    return [
        attr
        for attr in change.sets
        if any(graph.method(cls, name) == change.callee for cls in reads.get(attr, ()))
    ]


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
            receiver = types.stored(usage.receiver) if usage.receiver else None
            if receiver and receiver[0] == "self" and usage.member in overridden:
                continue  # the consumer's own method runs, not sglang's
            cls = types.class_of(usage.receiver)
            node = graph.method(cls, usage.member) if cls else None
        if node is not None:
            # a consumer subclass constructed: its overrides run instead of sglang's methods
            built = getattr(usage, "via", "").rpartition(".")[2]  # its `key`: module.Class
            yield usage, node, frozenset(by_class.get(built, ()))


def _through(change: ReachLost, overrides: frozenset[str]) -> bool:
    """Does the lost path run through a method the consumer's subclass overrides (so
    sglang's version of it never ran for this consumer)?"""
    return any(node.rpartition(".")[2] in overrides for node in change.old_path[1:])


def reach_findings(usages: UsageSet, old, new, types: TypeResolver, files=None) -> list[Finding]:
    """DA702 findings; `files`: the consumer's sglang files (path -> (text, tree)), for
    the values it gives."""
    differ = ReachDiffer(CallGraph(old), CallGraph(new))
    reads = typed_reads(usages, types)  # a finding needs a lost function that sets one
    values = ConsumerValues(usages, types, files if files is not None else {}, old)
    sites: dict[tuple, list] = {}  # (file, entry, overrides) -> its call sites, in order
    for usage, entry, overrides in _entries(usages, differ.old, types):
        sites.setdefault((usage.path, entry, overrides), []).append(usage)
    findings = []
    memo = PairMemo(old, new, "reach-lost")  # per version pair: only new entries computed
    for (_, entry, overrides), calls in sites.items():
        cls = differ.old.owner_class(entry)
        every = memo.get(entry, list)
        if every is MISSING or not all(isinstance(c, ReachLost) for c in every):
            if not differ.can_lose_sets(entry, reads):
                # nothing it could lose sets what the consumer reads: no finding, and
                # nothing memoised (another consumer may read other attributes)
                continue
            every = differ.lost(entry, callers=False)  # looked for once a finding needs them
            memo.put(entry, every)
        lost = [
            (change, relied_on(change, reads, differ.old))
            for change in every
            if not _through(change, overrides) and not never_taken(change, cls, calls, values)
        ]
        if any(attrs for _, attrs in lost):  # the consumer relies on what one of them did:
            # all are named (what the new callers call is the fix), those it relies on first
            if differ.find_callers(entry, every):
                memo.put(entry, every)
            ranked = sorted(lost, key=lambda item: (not item[1], item[0].callee))
            findings.append(_finding(calls, entry, ranked))
    memo.flush()
    differ.old.save()
    differ.new.save()
    return findings


def _finding(calls: list, entry: str, lost: list[tuple[ReachLost, list[str]]]) -> Finding:
    """One finding per consumer file and entry, at its first call site."""
    ranked = [change for change, _ in lost]
    first = ranked[0]
    shown = []
    for change, read in lost[:SHOWN]:
        text = f"`{short_name(change.callee)}`"
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
