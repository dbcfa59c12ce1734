"""Stages computed in a forked child while this process goes on with another.

A cold run has two independent halves once the consumer is read: matching the usages
(`match/`) and the behaviour checks (DA702 reach, DA701 copies), which parse and walk
sglang modules of their own. On two cores or more the second half runs in a forked
child: it inherits everything loaded (the snapshots, the consumer index, the usages)
and sends back each job's value, pickled. The child writes the sglang-side entries it
builds to the snapshot store itself (its own connection); what it derived from consumer
files travels back with the value, for this process to store with its own.

The child runs its jobs in order and says when it starts one. A job it has not started
when this process is free can be taken back (`take`): the child skips it and this
process computes it, so the two cores share the tail of the run instead of one waiting
for the other. (A value larger than the pipe's buffer holds the child until this process
reads it: the jobs are ordered so that the small ones come first.)

A job that fails in the child (an exception, the child killed, a value that does not
pickle) yields no value: the caller computes it in this process, so errors surface as
they would without the child.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Forked:
    """`jobs` (name -> compute) run in a forked child, in order; `before()` runs first in
    the child (reopen what must not be shared across a fork: SQLite connections)."""

    def __init__(
        self, jobs: dict[str, Callable[[], Any]], before: Callable[[], None] = lambda: None
    ):
        import multiprocessing  # a cold run only

        context = multiprocessing.get_context("fork")
        self._conn, child_end = context.Pipe(duplex=True)
        self._process = context.Process(target=_run, args=(jobs, before, child_end), daemon=True)
        self._process.start()
        child_end.close()
        self._started: set[str] = set()
        self._values: dict[str, bytes] = {}
        self._ended = False

    def take(self, name: str) -> bool:
        """True when the child had not started job `name`: it will skip it and the caller
        computes it (a job the child was just starting is then computed twice, and the
        child's value ignored); False when the child has started or ended."""
        self._drain(block=False)
        if self._ended or name in self._started:
            return False
        try:
            self._conn.send(name)
        except (OSError, ValueError):
            return False  # the child has ended: its value, if any, is in the pipe
        return True

    def wait(self, name: str) -> None:
        """Until the child has sent job `name`'s value, or ended."""
        while not self._ended and name not in self._values:
            self._drain(block=True)

    def join(self) -> None:
        """Until the child has ended."""
        while not self._ended:
            self._drain(block=True)

    def result(self, name: str) -> tuple[bool, Any]:
        """(True, the value) once the child has computed job `name`; (False, None) when it
        could not (the caller computes it)."""
        self.wait(name)
        data = self._values.pop(name, None)
        if data is None:
            return False, None
        try:
            return True, pickle.loads(data)
        except Exception:  # noqa: BLE001 -- a value that does not load: computed here
            return False, None

    def _drain(self, block: bool) -> None:
        """Read the child's reports: everything waiting, or (`block`) at least one."""
        while not self._ended and (block or self._conn.poll()):
            block = False
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                message = None
            if message is None:  # all done, or the child died
                self._ended = True
                self._conn.close()
                self._process.join()
                return
            state, name, data = message
            if state == "started":
                self._started.add(name)
            elif data:
                self._values[name] = data


def _run(jobs: dict[str, Callable[[], Any]], before: Callable[[], None], conn) -> None:
    """In the child: each job not taken back, reported started then sent with its value
    pickled (empty: it failed); None at the end; then exit without running the parent's
    finalizers (its SQLite connections and files are the parent's)."""
    taken: set[str] = set()
    try:
        try:
            before()
        except BaseException:  # noqa: BLE001 -- every job is left to the parent
            jobs = {}
        for name, compute in jobs.items():
            while conn.poll():
                taken.add(conn.recv())
            if name in taken:
                continue
            conn.send(("started", name, b""))
            try:
                data = pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:  # noqa: BLE001 -- the parent computes it, reports errors
                data = b""
            conn.send(("value", name, data))
        conn.send(None)
    except (OSError, EOFError):
        pass  # the parent has gone
    finally:
        os._exit(0)


JOBS_ENV = "DRIFTAUDIT_JOBS"  # the public switch: 1 never forks, 2+ forks wherever it can
# unset: a tree with fewer modules builds its entries faster than a fork pays off
MIN_FILES = 500


@dataclass(frozen=True)
class Parallelism:
    """How a run uses the machine, decided once by the pipeline from the work and the
    machine, and handed to every stage that may fork: the builds ahead
    (store/ahead.py) and the behaviour checks (match/behaviour.py)."""

    children: bool  # may the run fork children alongside it

    @classmethod
    def decide(cls, cold: bool, files: int) -> Parallelism:
        """Children only for a cold run (something to build: on a warm one a fork costs
        more than it saves) of trees of `files` modules or more than `MIN_FILES` (unless
        `$DRIFTAUDIT_JOBS` is set), with two cores or more (else they compete with this
        process; `$DRIFTAUDIT_JOBS` caps the cores used) and `fork` (the children inherit
        the loaded modules and the trees' file lists: nothing to pickle but results)."""
        import multiprocessing

        setting = _setting()
        forks = "fork" in multiprocessing.get_all_start_methods()
        large = setting is not None or files >= MIN_FILES
        return cls(children=cold and large and forks and jobs() >= 2)


def _setting() -> int | None:
    setting = os.environ.get(JOBS_ENV, "").strip()
    return int(setting) if setting.isdigit() and int(setting) > 0 else None


def jobs() -> int:
    """The processes a run may use: `$DRIFTAUDIT_JOBS`, else the cores."""
    return _setting() or cores()


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
