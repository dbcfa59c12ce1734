"""What a function of the two sglang trees alone computes, kept per version pair: a
warm run after a consumer edit asks again only for what it never asked before.

A pair entry is a store namespace ("pair"): keyed by both snapshots' content digests
(`Snapshot.digest`), driftaudit itself (`findings_cache.tool_digest`: its code, its
dependencies), the computation and the question; pickled (driftaudit's own classes),
and accepted back only as an instance of the kind asked for. A `--no-cache` run (or
`$DRIFTAUDIT_NO_RESULT_CACHE`) neither reads nor writes them (the store's `off`).
"""

from __future__ import annotations

from typing import Any

from driftaudit.store import Entry, Pickled, key
from driftaudit.store.keys import question as digest_of

PAIRS_VERSION = "1"  # bump when the stored form or the key's meaning changes
NAMESPACE = "pair"
MISSING: Any = object()


def _unasked() -> Any:
    raise AssertionError("a pair answer is computed by its caller (PairMemo.answer)")


class PairMemo:
    """The answers of one computation (`namespace`) for the pair (`old`, `new`)."""

    def __init__(self, old, new, namespace: str):
        from driftaudit.findings_cache import tool_digest

        self.store = old.store
        self.prefix = digest_of(tool_digest(), namespace, old.digest, new.digest)
        self.pending: list[tuple[Entry, Any]] = []

    def _entry(self, question: str, kind: type | None) -> Entry:
        name = digest_of(self.prefix, question)
        return Entry(key(NAMESPACE, PAIRS_VERSION, name), _unasked, Pickled(kind or object))

    def get(self, question: str, kind: type | None = None):
        """The stored answer, or `MISSING` (also for one that does not load or is not a
        `kind`)."""
        entry = self._entry(question, kind)
        return self.store.found_many([entry]).get(entry.key, MISSING)

    def answer(self, question: str, compute, kind: type | None = None):
        """The stored answer to `question`, else `compute()`, stored (written at `flush`)."""
        value = self.get(question, kind)
        if value is MISSING:
            value = compute()
            self.put(question, value)
        return value

    def put(self, question: str, value) -> None:
        """Kept at `flush` (an answer that does not pickle is not: `Store.put_many`)."""
        self.pending.append((self._entry(question, None), value))

    def flush(self) -> None:
        self.store.put_many(self.pending)
        self.pending = []
