"""`Store`: the run's one way to a cached answer (see the package docstring)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from driftaudit.store.codecs import Codec, Invalid
from driftaudit.store.db import BlobStore

if TYPE_CHECKING:
    from driftaudit.store.ahead import Ahead

T = TypeVar("T")


@dataclass(frozen=True)
class Yield:
    """What a computation gives: its entry's value, and entries of other namespaces read
    from the same work (a module's call data and fingerprints from the parse of its
    model), as (key, bytes) already encoded by their codecs."""

    value: Any
    also: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A declared answer: where it is kept, how it is computed, how it is encoded and
    checked. `compute` returns the value (or a `Yield`)."""

    key: str
    compute: Callable[[], Any]
    codec: Codec
    # keys whose answers the computation stores too (a batch read together): a lookup of
    # one of them waits for this entry's build ahead (ahead.py)
    provides: tuple[str, ...] = ()

    @property
    def namespace(self) -> str:
        return self.key.split(":", 1)[0]

    def build(self) -> tuple[bytes, list[tuple[str, bytes]]]:
        """Compute: the entry's bytes and those of the entries computed alongside."""
        with collector_paused():
            value = self.compute()
        also: list[tuple[str, bytes]] = []
        if isinstance(value, Yield):
            value, also = value.value, value.also
        return self.codec.encode(value), also


@contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage-collector policy, in one place: no cyclic collection while an entry is
    computed. Building a model allocates hundreds of thousands of AST nodes and griffe
    objects; each burst would trigger full collections walking everything built so far
    (measured at a quarter of a cold compare). What a computation discards is freed by
    reference counting or by the first collection after it. Nests."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Store:
    """Entries of one cache directory's store, for one run. `off`: namespaces neither
    read nor written on disk in this run (pair answers with `--no-cache`); they are still
    computed, and remembered for the run."""

    def __init__(self, db: BlobStore, off: Iterable[str] = ()):
        self.db = db
        self.off = frozenset(off)
        self._memory: dict[str, Any] = {}  # key -> value, this run
        self._ahead: list[Ahead] = []  # children building entries (`ahead.py`)

    # ---- answers -----------------------------------------------------------------------

    def get(self, entry: Entry[T]) -> T:
        """The entry's value: remembered in this run, else stored, else computed (and
        stored). A cold run decodes what it computed, so it sees what a warm run will."""
        return self.get_many([entry])[0]

    def get_many(self, entries: list[Entry[T]]) -> list[T]:
        """The values of `entries`, read from disk in one query; the missing computed."""
        found = self.found_many(entries)
        built: list[tuple[str, bytes]] = []
        also: list[tuple[str, bytes]] = []
        for entry in entries:
            if entry.key in found:
                continue
            data, more = entry.build()
            if entry.namespace not in self.off:
                built.append((entry.key, data))
            also += more
            found[entry.key] = self._memory[entry.key] = entry.codec.decode(data)
        self._write(built, also)
        return [found[e.key] for e in entries]

    def found_many(self, entries: list[Entry[T]], remember: bool = True) -> dict[str, T]:
        """key -> value of those of `entries` remembered or stored (and whole): nothing
        computed (for answers computed in batches by the caller: `put`). Without
        `remember`, read from disk only and not remembered (an entry whose codec checks
        it against a question the key does not hold: the findings cache's slots)."""
        memory = self._memory if remember else {}
        found = {e.key: memory[e.key] for e in entries if e.key in memory}
        wanted = [e for e in entries if e.key not in found and e.namespace not in self.off]
        for entry in wanted:
            self._wait(entry.key)
        stored = self.db.get_many([e.key for e in wanted]) if wanted else {}
        for entry in wanted:
            data = stored.get(entry.key)
            if data is None:
                continue
            try:
                found[entry.key] = memory[entry.key] = entry.codec.decode(data)
            except Invalid:
                pass  # damaged, or of another shape: the caller computes it
        return found

    def has(self, key: str) -> bool:
        """Is an entry stored under `key` (not read, not checked)?"""
        return key in self._memory or key in self.db

    def put(self, entry: Entry[T], value: T, remember: bool = True) -> None:
        """Store `value` as the entry's answer (an answer computed by the caller in a
        batch with others)."""
        if remember:
            self._memory[entry.key] = value
        if entry.namespace not in self.off:
            self.db.put(entry.key, entry.codec.encode(value))

    def keep(self, entry: Entry[T], value: T) -> None:
        """Remember `value` as the entry's answer for the run (stored by `put_many`)."""
        self._memory[entry.key] = value

    def put_many(self, answers: list[tuple[Entry[T], T]]) -> None:
        """Store answers computed by the caller in a batch, in one transaction; an answer
        its codec cannot encode (something that does not pickle) is remembered for the
        run only."""
        rows = []
        for entry, value in answers:
            self._memory[entry.key] = value
            if entry.namespace in self.off:
                continue
            try:
                rows.append((entry.key, entry.codec.encode(value)))
            except Exception:  # noqa: BLE001 -- not encodable: not kept on disk
                continue
        self.db.put_many(rows)

    def put_encoded(self, entry: Entry[T], data: bytes) -> None:
        """Store the entry's answer, encoded already (by a pool of processes)."""
        if entry.namespace not in self.off:
            self.db.put(entry.key, data)

    # ---- children ----------------------------------------------------------------------

    def building(self, ahead: Ahead) -> None:
        """Entries `ahead` builds in a child: a lookup of one waits for it (ahead.py)."""
        self._ahead.append(ahead)

    def in_child(self) -> None:
        """In a forked child: a connection of its own, and no parent's children to wait
        for (they report to the parent)."""
        self.db.reopen_in_child()
        self._ahead = []

    # ---- internals ---------------------------------------------------------------------

    def _wait(self, key: str) -> None:
        for ahead in self._ahead:
            ahead.wait(key)

    def _write(self, own: list[tuple[str, bytes]], also: list[tuple[str, bytes]]) -> None:
        rows = own + [(k, v) for k, v in also if k not in self.db]
        if rows:
            self.db.put_many(rows)


_MISS: Any = object()
