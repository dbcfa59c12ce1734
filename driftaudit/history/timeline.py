"""The releases of a range as one timeline, and a name's state in each (`states.py`).

A state is kept in the store under the release's identity (the sha256 of its wheel,
`index.release_identity`): a warm run reads the states of every release at once and
opens no tree. A release whose states are not all kept is fetched (several at once),
its snapshot opened over the timeline's one store (a file that releases share is
parsed once), and only what a name needs is read from it: the modules its path
resolves through (per module, through the store), the ServerArgs model for a field
or flag, the files that spell an env var, the METADATA for a requirement; never the
whole tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.history.states import State, state_entry
from driftaudit.progress import step

if TYPE_CHECKING:
    from driftaudit.snapshot import Snapshot
    from driftaudit.sources import SourceTree
    from driftaudit.store import Entry


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
    """Releases of the index, oldest first: each a version, or a tree already resolved
    (the compare's old and new)."""

    def __init__(self, releases: list[str | SourceTree], cache_dir: Path):
        from driftaudit.sources.index import release_identity
        from driftaudit.store import Store
        from driftaudit.store.db import BlobStore

        self.cache_dir = cache_dir
        self.trees: list[SourceTree | None] = [None if isinstance(r, str) else r for r in releases]
        self.versions = [r if isinstance(r, str) else str(r.version) for r in releases]
        self.identities = [release_identity(v, cache_dir) for v in self.versions]
        self.store = Store(BlobStore(cache_dir / "snapshots.sqlite"))
        self._snapshots: dict[int, Snapshot] = {}

    @classmethod
    def between(cls, old: SourceTree, new: SourceTree, cache_dir: Path, offline: bool):
        """`old`, every final release the index lists between them, and `new`."""
        from driftaudit.sources.releases import releases_between

        assert old.version is not None and new.version is not None
        inside = releases_between(old.version, new.version, cache_dir, offline)[:-1]
        return cls([old, *inside, new], cache_dir)

    def snapshot(self, index: int) -> Snapshot:
        """Release `index`'s snapshot over the timeline's store (fetched if it was not)."""
        if index not in self._snapshots:
            from driftaudit.snapshot import Snapshot
            from driftaudit.sources import resolve_spec

            tree = self.trees[index] or resolve_spec(self.versions[index], self.cache_dir)
            self.trees[index] = tree
            self._snapshots[index] = Snapshot(tree, self.store)
        return self._snapshots[index]

    def forget(self, index: int) -> None:
        """Drop release `index`'s snapshot (its answers stay in the store)."""
        if index not in (0, len(self.versions) - 1):  # the ends: every state's references
            self._snapshots.pop(index, None)

    def _entry(self, index: int, name: str) -> Entry[State]:
        tree_key = self.identities[index] or self.snapshot(index).digest
        last = len(self.versions) - 1
        return state_entry(
            tree_key,
            name,
            lambda: self.snapshot(index),
            lambda: [self.snapshot(0), self.snapshot(last)],
        )

    def fetch(self, indexes: list[int]) -> None:
        """Resolve the releases at `indexes` not resolved yet, several at once."""
        from driftaudit.sources.index import release_identity
        from driftaudit.sources.releases import fetch_releases

        todo = [i for i in indexes if self.trees[i] is None]
        trees = fetch_releases([self.versions[i] for i in todo], self.cache_dir)
        for index, tree in zip(todo, trees, strict=True):
            self.trees[index] = tree
            self.identities[index] = release_identity(self.versions[index], self.cache_dir)

    def states(self, names: list[str]) -> dict[str, list[State]]:
        """Each name's state in every release: kept ones read at once; the releases
        that miss some are fetched together first."""
        count = len(self.versions)
        self.fetch([i for i in range(count) if self.identities[i] is None])
        wanted = {(n, i): self._entry(i, n) for n in names for i in range(count)}
        found = self.store.found_many(list(wanted.values()))
        missing = sorted({i for (_, i), e in wanted.items() if e.key not in found})
        self.fetch(missing)
        for index in missing:
            step(f"reading {len(names)} names in sglang {self.versions[index]}")
            for name in names:
                entry = wanted[(name, index)]
                if entry.key not in found:
                    found[entry.key] = self.store.get(entry)
        return {n: [found[wanted[(n, i)].key] for i in range(count)] for n in names}

    def rows(self, name: str) -> list[Row]:
        states = self.states([name])[name]
        rows = [Row(self.versions[0], states[0])]
        for version, before, after in zip(self.versions[1:], states[:-1], states[1:], strict=True):
            rows.append(Row(version, after, changed_aspects(before, after)))
        return rows

    def resolved(self, index: int) -> SourceTree:
        """The tree of release `index` (fetched if it was not; no snapshot opened)."""
        self.fetch([index % len(self.versions)])
        tree = self.trees[index]
        assert tree is not None
        return tree
