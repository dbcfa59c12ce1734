"""A cold run computes the trees' consumer-independent entries in a second process.

The surfaces (routes, env vars, ...), the ServerArgs model and the name index of a tree
depend on the tree alone, yet a cold run builds them one after the other, in the middle
of matching: about 4 s of CPU for two releases of 4,000 files. Started as soon as the
snapshots are open, a forked child builds them while this process reads the consumer;
the first lookup of one of them waits for the child and stores what it sent. Results are
the same bytes the lookup would compute (the same functions, on the same tree); a job the
child cannot finish (an error, the child killed) is computed by the lookup as before.

Only with two cores or more (else the child competes with this process), `fork` (the
child inherits the loaded modules and the trees' file lists: nothing to pickle but the
results), and a tree large enough to be worth a process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from driftaudit.cache import BlobStore
from driftaudit.snapshot.gcpause import gc_paused

if TYPE_CHECKING:
    from driftaudit.snapshot.snapshot import Snapshot

MIN_FILES = 500  # a tree with fewer modules builds its entries faster than a fork pays off


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Prefetch:
    """The child building `jobs` (key -> compute), sending each result as it is done."""

    def __init__(self, jobs: dict[str, Callable[[], bytes]], store: BlobStore):
        self.keys = set(jobs)
        self._store = store
        self._received: set[str] = set()
        context = multiprocessing.get_context("fork")
        self._conn, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_build, args=(jobs, send), daemon=True)
        self._process.start()
        send.close()
        self._done = False

    def wait(self, key: str) -> None:
        """Store what the child sent, until `key` is in (or the child ended or failed)."""
        while not self._done and key not in self._received:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                message = None
            if message is None:  # all sent, or the child died: the lookups compute the rest
                self._done = True
                self._conn.close()
                self._process.join()
                return
            sent_key, data = message
            self._received.add(sent_key)
            if data is not None:
                self._store.put(sent_key, data)


def _build(jobs: dict[str, Callable[[], bytes]], conn) -> None:
    """In the child: each job's result (None when it fails: the parent computes it and
    reports the error), then None; then exit without running the parent's finalizers
    (its SQLite connection belongs to the parent)."""
    try:
        with gc_paused():
            for key, compute in jobs.items():
                try:
                    data = compute()
                except Exception:  # noqa: BLE001
                    data = None
                conn.send((key, data))
        conn.send(None)
    finally:
        os._exit(0)


def prefetch_tree_entries(snapshots: Iterable[Snapshot]) -> None:
    """Start building the uncached tree-wide entries of `snapshots` (one shared store)."""
    snapshots = list(snapshots)
    if _cores() < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return
    entries = [
        list(snapshot.tree_entries().items())
        for snapshot in snapshots
        if len(snapshot.files) >= MIN_FILES and snapshot.store is snapshots[0].store
    ]
    store = snapshots[0].store
    jobs: dict[str, Callable[[], bytes]] = {}
    for row in zip(*entries, strict=True):  # the trees in turn: a run asks for an entry of each
        jobs.update((key, compute) for key, compute in row if key not in store)
    if not jobs:
        return
    prefetch = Prefetch(jobs, store)
    for snapshot in snapshots:
        snapshot.prefetch = prefetch
