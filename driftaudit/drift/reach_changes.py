"""Call-graph reach: what an sglang callable stopped doing between two releases.

`ModelRunner(...)` in 0.5.9 reached `init_memory_pool` through `initialize`; in 0.5.14
`initialize` only loads weights and `TpModelWorker.alloc_memory_pool` does the rest. Code
that drives a ModelRunner itself silently runs without a memory pool. For an entry
callable this finds the functions it reached within a bounded depth in the old tree and
no longer reaches in the new one (with slack: a callee pushed one or two calls deeper by
a refactor is still reached), keeps the *roots* of the loss (the callee whose caller is
still reached: its own callees are lost with it), drops the trivial ones, and says where
the new tree calls each from instead. Knows nothing of the consumer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from driftaudit import codes
from driftaudit.drift.changes import Change, short_name
from driftaudit.snapshot.callgraph import CallGraph

DEPTH = 3  # calls followed from the entry in the old tree
SLACK = 2  # extra depth allowed in the new tree before a callee counts as lost
MIN_STATEMENTS = 3  # a lost callee with fewer statements that sets nothing is trivial
MAX_CALLER_MODULES = 40  # modules searched for a lost callee's new callers
_TRIVIAL = re.compile(r"^_*(get|is|has|should|can|check|log|print|warn|debug|validate)(_|$)")


@dataclass
class ReachLost(Change):
    """`symbol` (the entry) no longer reaches `callee`."""

    callee: str = ""
    old_path: list[str] = field(default_factory=list)  # entry -> ... -> callee in the old tree
    new_callers: list[list[str]] = field(default_factory=list)  # [caller, its callers...]
    sets: list[str] = field(default_factory=list)  # attributes the lost code assigned
    lost_below: int = 0  # callees lost with it
    # branch conditions on the old path the entry's caller controls (snapshot.branch_conditions):
    # [subject, op, values], subject `self.<attr>` of the entry's object or `param:<name>`
    # of the entry; a caller that never meets one never reached the callee in either tree
    guards: list[list] = field(default_factory=list)
    callers_found: bool = False  # new_callers looked for (`ReachDiffer.find_callers`)

    code = codes.REACH_LOST

    def explain(self) -> str:
        via = " -> ".join(short_name(n) for n in self.old_path[1:-1])
        text = f"`{short_name(self.symbol)}` no longer calls `{short_name(self.callee)}`"
        text += f" (was through {via})" if via else ""
        if self.new_callers:
            text += "; sglang now calls it from " + "; ".join(
                map(describe_callers, self.new_callers)
            )
        return text


def describe_callers(chain: list[str]) -> str:
    """`caller` (itself called by `a`, `b`)."""
    text = f"`{short_name(chain[0])}`"
    if len(chain) > 1:
        text += " (called by " + ", ".join(f"`{short_name(n)}`" for n in chain[1:]) + ")"
    return text


def is_trivial(graph: CallGraph, node: str) -> bool:
    info = graph.function(node)
    name = node.rpartition(".")[2]
    if info is None or (name.startswith("__") and name != "__init__"):
        return True
    if _TRIVIAL.match(name):
        return True
    if info["sets"]:
        return False
    # sets nothing on its object: trivial when short, or a leaf (a predicate, a computation)
    return info["statements"] < MIN_STATEMENTS or not graph.callees(node)


class ReachDiffer:
    """Lost callees of entry callables, old graph vs new graph (both cached per module)."""

    def __init__(self, old: CallGraph, new: CallGraph, depth: int = DEPTH, slack: int = SLACK):
        self.old = old
        self.new = new
        self.depth = depth
        self.slack = slack
        self._lost: dict[str, list[ReachLost]] = {}
        self._callers: dict[str, list[list[str]]] = {}

    def lost(self, entry: str, callers: bool = True) -> list[ReachLost]:
        """The roots of what `entry` no longer reaches (entry: a canonical function node);
        with `callers`, where the new tree calls each from (else `find_callers`, later)."""
        if entry not in self._lost:
            self._lost[entry] = self._compute(entry)
        if callers:
            self.find_callers(entry, self._lost[entry])
        return self._lost[entry]

    def find_callers(self, entry: str, changes: list[ReachLost]) -> bool:
        """Fill in where the new tree calls each lost callee of `entry` from, where not
        done yet (True when any was). A search of the new tree's text and of the modules
        that match: a caller asks only for the losses it reports."""
        pending = [change for change in changes if not change.callers_found]
        if not pending:
            return False
        self._add_new_callers(pending, set(self.new.reach(entry, self.depth + self.slack)))
        for change in pending:
            change.callers_found = True
        return True

    def can_lose_sets(self, entry: str, reads: dict[str, set[str]]) -> bool:
        """Could `entry` lose code that assigns an attribute the consumer reads on an object
        of that code's class (`reads`: attribute -> the classes it is read on)? Only what the
        old tree reaches can be lost, a loss names what the lost functions set on their own
        object, and a finding needs a read of one of those on an object of the lost method's
        class or a subclass (`match/reach.py::relied_on`): when no reached function sets such
        an attribute, the question needs no walk of the new tree (the widest part of a reach,
        `depth + slack` deep, and its callers' search)."""
        if self.old.function(entry) is None:
            return False
        for node in self.old.reach(entry, self.depth):
            readers = [c for a in self.old.function(node)["sets"] for c in reads.get(a, ())]
            owner = self.old.owner_class(node) if readers else None
            if owner is not None and any(self.old.inherits(c, owner) for c in readers):
                return True
        return False

    def _compute(self, entry: str) -> list[ReachLost]:
        if self.old.function(entry) is None or self.new.function(entry) is None:
            return []  # gone or moved: the API codes report it
        old_reach = self.old.reach(entry, self.depth)
        new_reach = self.new.reach(entry, self.depth + self.slack)
        lost = [n for n in old_reach if n not in new_reach]
        roots = [n for n in lost if old_reach[n].parent in new_reach]
        below: dict[str, list[str]] = {root: [] for root in roots}
        for node in lost:
            root = node
            while root not in below and old_reach[root].parent is not None:
                root = old_reach[root].parent
            if root in below and root != node:
                below[root].append(node)
        changes = []
        for root in roots:
            if self.new.function(root) is None or is_trivial(self.old, root):
                continue  # gone: reported by the API codes where the consumer names it
            path = [root]
            while old_reach[path[0]].parent is not None:
                path.insert(0, old_reach[path[0]].parent)
            parent = path[-2]
            if self.new.calls_unknown(parent, root.rpartition(".")[2]):
                continue  # still called, on a receiver the new graph cannot type
            # what the lost code assigned on the same object (not on the objects it built)
            owner = self.old.owner_class(root)
            sets = set(self.old.function(root)["sets"])
            for node in below[root]:
                if owner is not None and self.old.owner_class(node) == owner:
                    sets.update(self.old.function(node)["sets"])
            changes.append(
                ReachLost(
                    entry,
                    self.old.location(parent, self.old.call_line(parent, root)),
                    None,
                    callee=root,
                    old_path=path,
                    sets=sorted(sets),
                    lost_below=len(below[root]),
                    guards=self._guards(path),
                )
            )
        return changes

    def _guards(self, path: list[str]) -> list[list]:
        """The guards on `path` (old tree) that name what the entry's caller controls:
        the entry's parameters, tested in the entry itself, and attributes of the entry's
        object, tested in a method that object runs (`self.m()` from the entry resolves
        to it) when no function on the path before it assigns that attribute (never for
        a constructor: what the consumer sets on the object it sets afterwards)."""
        entry, found = path[0], []
        cls = self.old.owner_class(entry) if not entry.endswith(".__init__") else None
        assigned: set[str] = set()
        for caller, callee in zip(path, path[1:], strict=False):
            assigned.update(self.old.function(caller)["sets"])
            name = caller.rpartition(".")[2]
            on_entry_object = cls is not None and self.old.method(cls, name) == caller
            for _, _, subject, op, values in self.old.guards(caller, callee):
                if subject.startswith("self."):
                    if on_entry_object and subject[5:] not in assigned:
                        found.append([subject, op, values])
                elif caller == entry:
                    found.append([f"param:{subject}", op, values])
        return found

    def _add_new_callers(self, changes: list[ReachLost], reached: set[str]) -> None:
        """Up to 3 direct callers of each lost callee in the new tree (not among those the
        entry still reaches), each followed by up to 3 of its own callers. The tree's text
        is scanned once per level for all the names."""
        names = {c.callee.rpartition(".")[2] for c in changes}
        modules = self.new.modules_calling(names) if names else {}
        direct = {}
        for change in changes:
            name = change.callee.rpartition(".")[2]
            found = self.new.callers(change.callee, modules[name][:MAX_CALLER_MODULES])
            direct[change.callee] = sorted((c for c in found if c not in reached), key=_rank)[:3]
        above_names = {c.rpartition(".")[2] for callers in direct.values() for c in callers}
        above = self.new.modules_calling(above_names) if above_names else {}
        for change in changes:
            chains = []
            for caller in direct[change.callee]:
                modules_above = above[caller.rpartition(".")[2]][:MAX_CALLER_MODULES]
                callers = self.new.callers(caller, modules_above)
                callers = sorted((c for c in callers if c != change.callee), key=_rank)
                chains.append([caller, *callers[:3]])
            change.new_callers = chains
            if chains:
                change.new_location = self.new.location(
                    chains[0][0], self.new.call_line(chains[0][0], change.callee)
                )


def _rank(node: str) -> tuple[bool, str]:
    """sglang's runtime before its tests, benchmarks and tools."""
    return (not node.startswith("sglang.srt."), node)
