"""A stage computed in a forked child while this process goes on with another.

A cold run has two independent halves once the consumer is read: matching the usages
(`match/`) and the behaviour checks (DA701 copies, DA702 reach), which parse and walk
sglang modules of their own. On two cores or more the second half runs in a forked
child: it inherits everything loaded (the snapshots, the consumer index, the usages)
and sends back its value, pickled. The child writes the sglang-side entries it builds
to the snapshot store itself (its own connection); what it derived from consumer files
travels back with the value, for this process to store with its own.

A child that fails (an exception, killed, a value that does not pickle) yields no
value: the caller computes it in this process, so errors surface as they would without
the child.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
_FAILED = b""


class Forked(Generic[T]):
    """`compute()` run in a forked child; `before()` runs first in the child (reopen
    what must not be shared across a fork: SQLite connections)."""

    def __init__(self, compute: Callable[[], T], before: Callable[[], None] = lambda: None):
        import multiprocessing  # a cold run only

        context = multiprocessing.get_context("fork")
        self._conn, child_end = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_run, args=(compute, before, child_end), daemon=True
        )
        self._process.start()
        child_end.close()

    def result(self) -> tuple[bool, T | None]:
        """(True, the value) once the child is done; (False, None) when it failed."""
        try:
            data = self._conn.recv_bytes()
        except (EOFError, OSError):
            data = _FAILED
        finally:
            self._conn.close()
            self._process.join()
        if data == _FAILED:
            return False, None
        try:
            return True, pickle.loads(data)
        except Exception:  # noqa: BLE001 -- a value that does not load: computed here
            return False, None


def _run(compute: Callable, before: Callable[[], None], conn) -> None:
    """In the child: the value, pickled, or an empty message; then exit without running
    the parent's finalizers (its SQLite connections and files are the parent's)."""
    try:
        try:
            before()
            data = pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # noqa: BLE001 -- the parent computes it and reports errors
            data = _FAILED
        conn.send_bytes(data)
    except (OSError, EOFError):
        pass  # the parent has gone
    finally:
        os._exit(0)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
