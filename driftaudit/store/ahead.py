"""Entries built ahead, in a forked child, while this process goes on (a cold run).

The trees' consumer-independent entries (ServerArgs model, name index, surfaces) and the
models of the modules the consumer imports are declared by the snapshot as `Entry`s;
the pipeline, which decides the run's parallelism (`forked.Parallelism`), hands them to
`Ahead`, which builds them in a child (`forked.Forked`) that stores each itself (a
connection of its own: SQLite serialises the writers). A lookup in this process
(`Store.get`) waits according to the policy the entry was scheduled with:

- "wait": block until the child has stored it; one the child has not started yet is
  taken over (computed here, skipped there);
- "share": block, never take over (the surfaces: the child reads the tree once for all
  of them; taken over, one would cost this process a read of its own);
- "guess": never block (a model the consumer probably needs): taken over if not started,
  else computed here if the child has not stored it yet.

A job the child cannot finish (an error, the child killed) is computed by the lookup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit.store.store import Entry, collector_paused

if TYPE_CHECKING:
    from driftaudit.store.store import Store

POLICIES = ("wait", "share", "guess")


class Ahead:
    """A child building `jobs` ((entry, policy), in order) into `store`'s database; a
    lookup of a key an entry `provides` waits for that entry."""

    def __init__(self, store: Store, jobs: list[tuple[Entry, str]]):
        from driftaudit.forked import Forked

        self._policy = {entry.key: policy for entry, policy in jobs}
        self._job_of = {k: e.key for e, _ in jobs for k in (e.key, *e.provides)}
        db = store.db

        def before() -> None:  # in the child, which ends when its jobs are done
            import gc

            gc.disable()  # it only builds entries: `collector_paused` for its whole life
            db.reopen_in_child()

        def storing(entry: Entry):
            def job() -> None:
                if entry.key in db:  # the parent did not wait for it
                    return
                data, also = entry.build()
                rows = [(entry.key, data), *also]
                db.put_many([(k, v) for k, v in rows if k == entry.key or k not in db])

            return job

        with collector_paused():
            self._child = Forked({entry.key: storing(entry) for entry, _ in jobs}, before)

    def wait(self, key: str) -> None:
        """Until the child has stored what `key` needs, by its job's policy (a key no job
        of this child builds returns at once)."""
        job = self._job_of.get(key)
        if job is None:
            return
        policy = self._policy[job]
        if policy != "share" and self._child.take(job):
            return  # not started: computed by the caller
        if policy != "guess":
            self._child.wait(job)

    def join(self) -> None:
        """Until the child has ended."""
        self._child.join()
