"""The releases of a range as one timeline: each release's snapshot over one store (a
file that releases share is parsed once), and a name's state in each (`states.py`).

Only what a name needs is read from a release: the modules its path resolves through
(per module, through the store), the ServerArgs model for a field or flag, the files
that spell an env var, the METADATA for a requirement; never the whole tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.history.states import State, state_of
from driftaudit.progress import step

if TYPE_CHECKING:
    from driftaudit.snapshot import Snapshot
    from driftaudit.sources import SourceTree


@dataclass
class Row:
    """A name in one release: its state and the aspects that differ from the release
    before (empty for the first)."""

    version: str
    state: State
    changed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "version": self.version,
            "present": self.state.present,
            "kind": self.state.kind or None,
            "text": self.state.text or None,
            "location": self.state.location,
            "deprecated": self.state.deprecated,
            "changed": bool(self.changed),
            "changed_aspects": self.changed,
        }


def changed_aspects(before: State, after: State) -> list[str]:
    """The aspects whose values differ (one missing counts as changed)."""
    names = dict.fromkeys([*before.aspects, *after.aspects])
    return [a for a in names if before.aspects.get(a) != after.aspects.get(a)]


class Timeline:
    """The snapshots of releases, oldest first (`versions[i]` is `snapshots[i]`'s)."""

    def __init__(self, snapshots: list[Snapshot]):
        self.snapshots = snapshots
        self.versions = [s.tree.version or s.tree.spec for s in snapshots]

    @classmethod
    def of_trees(cls, trees: list[SourceTree], cache_dir: Path) -> Timeline:
        from driftaudit.snapshot import Snapshot
        from driftaudit.store import Store
        from driftaudit.store.db import BlobStore

        store = Store(BlobStore(cache_dir / "snapshots.sqlite"))
        return cls([Snapshot(tree, store) for tree in trees])

    @classmethod
    def between(
        cls,
        old: SourceTree,
        new: SourceTree,
        cache_dir: Path,
        offline: bool,
    ) -> Timeline:
        """`old`, every final release the index lists between them, and `new`."""
        from driftaudit.sources.releases import fetch_releases, releases_between

        assert old.version is not None and new.version is not None
        inside = releases_between(old.version, new.version, cache_dir, offline)[:-1]
        return cls.of_trees([old, *fetch_releases(inside, cache_dir), new], cache_dir)

    def states(self, name: str) -> list[State]:
        return [state_of(snapshot, name) for snapshot in self.snapshots]

    def rows(self, name: str) -> list[Row]:
        step(f"reading {name} in {len(self.snapshots)} releases")
        states = self.states(name)
        rows = [Row(self.versions[0], states[0])]
        for version, before, after in zip(self.versions[1:], states[:-1], states[1:], strict=True):
            rows.append(Row(version, after, changed_aspects(before, after)))
        return rows
