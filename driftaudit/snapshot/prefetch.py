"""A cold run computes the trees' consumer-independent entries in a second process.

The surfaces (routes, env vars, ...), the ServerArgs model and the name index of a tree
depend on the tree alone, yet a cold run builds them one after the other, in the middle
of matching: about 4 s of CPU for two releases of 4,000 files. Started as soon as the
snapshots are open, a forked child builds them while this process reads the consumer;
the first lookup of one of them waits for the child. It also extracts the models of the
modules the consumer imports by name (a guess at what matching asks for first; a lookup
never waits for one of those, it computes what the child has not stored yet). Results are
the same bytes the lookup would compute (the same functions, on the same tree); a job the
child cannot finish (an error, the child killed) is computed by the lookup as before.

Only with two cores or more (else the child competes with this process), `fork` (the
child inherits the loaded modules and the trees' file lists: nothing to pickle but the
results), and a tree large enough to be worth a process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.cache import BlobStore
from driftaudit.forked import cores as _cores
from driftaudit.snapshot.gcpause import gc_paused

if TYPE_CHECKING:
    from driftaudit.snapshot.snapshot import Snapshot

MIN_FILES = 500  # a tree with fewer modules builds its entries faster than a fork pays off


class Prefetch:
    """The child building `jobs` (key -> compute): it stores each result in the cache
    itself (`BlobStore.helper`: its own connection; SQLite serialises the writers) and
    reports each key as started and as done, so the pipe never fills and this process
    never decodes what it does not ask for. A key this process asks for before the child
    started it is taken over (this process computes it; the child skips it)."""

    def __init__(self, jobs: dict[str, Callable[[], bytes]], store: BlobStore):
        self.keys = set(jobs)
        self._started: set[str] = set()
        self._received: set[str] = set()
        import multiprocessing  # a cold run only

        context = multiprocessing.get_context("fork")
        self._conn, child_end = context.Pipe(duplex=True)
        self._process = context.Process(
            target=_build, args=(jobs, store.path, child_end), daemon=True
        )
        self._process.start()
        child_end.close()
        self._done = False

    def wait(self, key: str, block: bool = True, take: bool = True) -> None:
        """Until the child has stored `key` (or ended, or failed). When the child has not
        started `key` yet and `take`, or without `block`, only take note of what it
        reported so far and return: the caller computes what is missing (a key not
        started is taken over)."""
        self._drain(block=False)
        if self._done or key in self._received:
            return
        if key not in self._started and take:
            self._take(key)
            return
        while block and not self._done and key not in self._received:
            self._drain(block=True)

    def join(self) -> None:
        """Until the child has ended."""
        while not self._done:
            self._drain(block=True)

    def _take(self, key: str) -> None:
        try:
            self._conn.send(key)
        except (OSError, ValueError):
            pass  # the child has ended: nothing to tell it

    def _drain(self, block: bool) -> None:
        """Read the child's reports: everything waiting, or (`block`) at least one."""
        while not self._done and (block or self._conn.poll()):
            block = False
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                message = None
            if message is None:  # all done, or the child died: the lookups compute the rest
                self._done = True
                self._conn.close()
                self._process.join()
                return
            state, key = message
            (self._started if state == "started" else self._received).add(key)


def _build(jobs: dict[str, Callable[[], bytes]], path: Path, conn) -> None:
    """In the child: each job not taken over by the parent is reported started, computed,
    stored and reported done (a job that fails is left to the parent, which reports the
    error), then None; then exit without running the parent's finalizers (the inherited
    SQLite connection belongs to the parent)."""
    taken: set[str] = set()
    try:
        store = BlobStore.helper(path)
        with gc_paused():
            for key, compute in jobs.items():
                while conn.poll():
                    taken.add(conn.recv())
                if key in taken:
                    continue
                if key in store:  # the parent did not wait for it
                    conn.send(("done", key))
                    continue
                conn.send(("started", key))
                try:
                    store.put(key, compute())
                except Exception:  # noqa: BLE001
                    continue
                conn.send(("done", key))
        conn.send(None)
    except (OSError, EOFError):
        pass  # the parent has gone
    finally:
        os._exit(0)


_IMPORT_RE = re.compile(  # `from sglang.x import a, b` (its first line) or `import sglang.x`
    r"^[ \t]*(?:from[ \t]+(sglang[\w.]*)[ \t]+import[ \t]+\(?([\w, \t]*)"
    r"|import[ \t]+(sglang[\w.]*))",
    re.M,
)


def imported_modules(texts: Iterable[str | None]) -> list[str]:
    """The sglang modules `texts` import by name (and their packages), in first-seen
    order: a guess at the models a run will ask for, extracted by the child ahead."""
    names: dict[str, None] = {}
    for text in texts:
        if not text or "sglang" not in text:
            continue
        for match in _IMPORT_RE.finditer(text):
            module = match.group(1) or match.group(3)
            parts = module.split(".")
            names.update((".".join(parts[:i]), None) for i in range(1, len(parts) + 1))
            for symbol in (match.group(2) or "").split(","):
                words = symbol.split()  # `a as b`: a
                if words:  # `from sglang.srt import managers`: maybe a module
                    names[f"{module}.{words[0]}"] = None
    return list(names)


def prefetch_tree_entries(snapshots: Iterable[Snapshot], modules: Iterable[str] = ()) -> None:
    """Start building the uncached tree-wide entries of `snapshots` (one shared store),
    then the models of `modules` (a guess: a lookup never waits for one of those)."""
    snapshots = list(snapshots)
    if _cores() < 2:
        return
    entries = [
        list(snapshot.tree_entries().items())
        for snapshot in snapshots
        if len(snapshot.files) >= MIN_FILES and snapshot.store is snapshots[0].store
    ]
    store = snapshots[0].store
    wide: dict[str, Callable[[], bytes]] = {}
    for row in zip(*entries, strict=True):  # the trees in turn: a run asks for an entry of each
        wide.update(row)
    guessed: dict[str, Callable[[], bytes]] = {}
    for name in modules:
        for snapshot in snapshots:
            if len(snapshot.files) >= MIN_FILES and snapshot.store is store:
                guessed.update(snapshot.module_entry(name))
    # ServerArgs and the name index, the modules the consumer imports, then the surfaces:
    # the order a run asks for them
    ordered = list(wide.items())[: 2 * len(entries)] + list(guessed.items())
    ordered += list(wide.items())[2 * len(entries) :]
    jobs = {key: compute for key, compute in ordered if key not in store}
    if not jobs:
        return
    import multiprocessing  # a cold run only

    if "fork" not in multiprocessing.get_all_start_methods():
        return
    prefetch = Prefetch(jobs, store)
    for snapshot in snapshots:
        snapshot.prefetch = prefetch
