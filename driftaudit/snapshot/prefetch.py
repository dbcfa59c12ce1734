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

import gc
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from driftaudit.cache import BlobStore
from driftaudit.forked import cores as _cores

if TYPE_CHECKING:
    from driftaudit.snapshot.snapshot import Snapshot

MIN_FILES = 500  # a tree with fewer modules builds its entries faster than a fork pays off

# a job's value: the entry's bytes, or (key, bytes) of it and of entries read alongside
Job = bytes | list[tuple[str, bytes]]


class Prefetch:
    """The child building `jobs` (key -> compute), in order (`driftaudit.forked`): it
    stores each result in the cache itself (`store` reopened in the child: a connection
    of its own, which the jobs use too; SQLite serialises the writers) and reports each
    key as started and as done, so this process never decodes what it does not ask
    for. A key this process asks for before the child started it is taken over (this
    process computes it; the child skips it)."""

    def __init__(self, jobs: dict[str, Callable[[], Job]], store: BlobStore):
        from driftaudit.forked import Forked

        self.keys = set(jobs)

        def before() -> None:  # in the child, which ends when its jobs are done
            gc.disable()  # it builds trees of models: the collector would walk them all
            store.reopen_in_child()

        def storing(key: str, compute: Callable[[], Job]) -> Callable[[], None]:
            def job() -> None:
                if key in store:  # the parent did not wait for it
                    return
                value = compute()
                entries = value if isinstance(value, list) else [(key, value)]
                store.put_many([(k, v) for k, v in entries if k == key or k not in store])

            return job

        self._child = Forked({key: storing(key, f) for key, f in jobs.items()}, before)

    def wait(self, key: str, block: bool = True, take: bool = True) -> None:
        """Until the child has stored `key` (or ended, or failed). When the child has not
        started `key` yet and `take`, or without `block`, return at once: the caller
        computes what is missing (a key not started is taken over)."""
        if take and self._child.take(key):
            return
        if block:
            self._child.wait(key)

    def join(self) -> None:
        """Until the child has ended."""
        self._child.join()


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


def prefetch_tree_entries(
    snapshots: Iterable[Snapshot], modules: Iterable[str] = (), env_names: Iterable[str] = ()
) -> None:
    """Start building, for each tree, its uncached tree-wide entries, then the models of
    `modules` (a guess: a lookup never waits for one of those), each with what the
    snapshot's `side` asks of it from the same parse (`Snapshot.module_entry`). A child
    per tree: the trees' entries are independent, and one child building both was the
    critical path of a cold run on miles (3.5 s of work, while the other processes
    waited for it)."""
    if _cores() < 2:
        return
    modules, env_names = list(modules), list(env_names)
    for snapshot in snapshots:
        if len(snapshot.files) < MIN_FILES:
            continue
        wide = list(snapshot.tree_entries(env_names).items())
        guessed: dict[str, Callable[[], bytes]] = {}
        for name in modules:
            guessed.update(snapshot.module_entry(name))
        # ServerArgs and the name index, the modules the consumer imports, then the
        # surfaces: the order a run asks for them
        ordered = wide[:2] + list(guessed.items()) + wide[2:]
        jobs = {key: compute for key, compute in ordered if key not in snapshot.store}
        if not jobs:
            continue
        import multiprocessing  # a cold run only

        if "fork" not in multiprocessing.get_all_start_methods():
            return
        if any(key.startswith("module:") for key in jobs):
            # griffe (0.18 s to import, with griffecli, ctypes, email...) once, here: the
            # children inherit it, and so does the behaviour child forked later
            import driftaudit.snapshot.extract  # noqa: F401
        snapshot.prefetch = Prefetch(jobs, snapshot.store)
