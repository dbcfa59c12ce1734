"""What a function of the two sglang trees alone computes, stored per version pair: a
warm run after a consumer edit asks again only for what it never asked before.

An entry is keyed by both snapshots' content digests (`Snapshot.digest`: every module's
bytes), driftaudit itself (`findings_cache.tool_digest`: its code, its dependencies),
a namespace naming the computation and the question (e.g. an entry callable). Values
are pickled into the snapshot store (the user's own cache directory); one that does not
load is computed again and replaced. The store grows with the questions asked of a pair,
not with consumer edits. `--no-cache` (or `$DRIFTAUDIT_NO_RESULT_CACHE`) neither reads
nor writes it.
"""

from __future__ import annotations

import hashlib
import pickle

SCHEMA_VERSION = 1  # bump when the stored form or the key's meaning changes
_MISSING = object()
_enabled = True  # off for a `--no-cache` run: `use`


def use(enabled: bool) -> None:
    """Read and write the memo in this process (a compare sets it: off with `--no-cache`
    or `$DRIFTAUDIT_NO_RESULT_CACHE`)."""
    global _enabled
    _enabled = enabled


class PairMemo:
    def __init__(self, old, new, namespace: str):
        from driftaudit.findings_cache import enabled, tool_digest

        self.store = old.store
        self.enabled = _enabled and enabled()
        self.prefix = hashlib.sha256(
            f"{SCHEMA_VERSION}\0{tool_digest()}\0{namespace}\0{old.digest}\0{new.digest}".encode()
        ).hexdigest()
        self.pending: list[tuple[str, bytes]] = []

    def _key(self, question: str) -> str:
        digest = hashlib.sha256(f"{self.prefix}\0{question}".encode()).hexdigest()
        return f"pair:{digest}"

    def get(self, question: str, kind: type | None = None):
        """The stored answer, or `MISSING` (also for one that does not load or is not a
        `kind`)."""
        if not self.enabled:
            return _MISSING
        data = self.store.get(self._key(question))
        if data is None:
            return _MISSING
        try:
            value = pickle.loads(data)
        except Exception:  # noqa: BLE001 -- corrupt or of another form: computed again
            return _MISSING
        if kind is not None and not isinstance(value, kind):
            return _MISSING
        return value

    def answer(self, question: str, compute, kind: type | None = None):
        """The stored answer to `question`, else `compute()`, stored (written at `flush`)."""
        value = self.get(question, kind)
        if value is _MISSING:
            value = compute()
            self.put(question, value)
        return value

    def put(self, question: str, value) -> None:
        if not self.enabled:
            return
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 -- something that does not pickle: not stored
            return
        self.pending.append((self._key(question), data))

    def flush(self) -> None:
        self.store.put_many(self.pending)
        self.pending = []


MISSING = _MISSING
