"""Per-file results, cached by content: a run after a few consumer files changed parses
and analyses only those (the findings are still matched over the whole consumer).

Two kinds of entry live in a file's record:
- values derived from the file alone (`ConsumerFile.derived`: its module-level exports
  and imports, its functions' token streams, its attribute reads, ...), keyed by the
  file (its text, path, module name, whether it is a package) and driftaudit itself
  (`findings_cache.tool_digest`: its code and dependencies);
- the usages the visitor found in it, which depend on the file and, across files, on
  nothing but the consumer's export table (`ConsumerExports`: which consumer modules
  exist, what each binds at module level, what it star-imports, and for each class its
  bases and the names its body defines: all the visitor reads of another file). They are
  keyed by the file and a digest of that table, so an edit that changes what a module
  re-exports or a base class defines visits every file again. The file's rows of the
  attribute table (`UsageSet.fields`) are kept with them: other files' usages refer to
  those rows by name and read them only when matching.

One record per (consumer, file) holds the latest entries, so the store does not grow
with every edit. Records are pickled (the store is the user's own cache directory); one
that does not load, or holds something of another form, is computed again and replaced.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path

from driftaudit.store import Entry, Pickled, Store, key
from driftaudit.store.db import BlobStore
from driftaudit.usage.exports import ConsumerExports, summary_names
from driftaudit.usage.usages import Usage

SCHEMA_VERSION = 6  # bump when the stored form or the key's meaning changes


def exports_digest(exports: ConsumerExports) -> str:
    """A digest of everything the usage visitor may read of other files."""
    digest = hashlib.sha256(b"exports\n")
    digest.update(repr(sorted(exports.modules)).encode())
    for module in sorted(exports.bindings):
        digest.update(f"\nb\0{module}\0{sorted(exports.bindings[module].items())!r}".encode())
    for module in sorted(exports.stars):
        digest.update(f"\ns\0{module}\0{exports.stars[module]!r}".encode())
    for module in sorted(exports.bound):
        digest.update(f"\nn\0{module}\0{sorted(exports.bound[module])!r}".encode())
    for module in sorted(exports.classes):
        for name, (bases, body) in sorted(exports.classes[module].items()):
            own = sorted(body if isinstance(body, frozenset) else summary_names(body))
            digest.update(f"\nc\0{module}\0{name}\0{bases!r}\0{own!r}".encode())
    for module in sorted(exports.conditions):
        digest.update(f"\nt\0{module}\0{sorted(exports.conditions[module].items())!r}".encode())
    return digest.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class FileCache:
    """The latest per-file results of one consumer (see the module docstring)."""

    def __init__(self, cache_dir: Path, root: Path, tool: str):
        self.store = Store(BlobStore(cache_dir / "files.sqlite"))
        self.root = str(Path(root).resolve())
        self.tool = tool
        self.context: str | None = None  # the export table's digest: `use_exports`
        self.records: dict[str, dict] = {}  # rel -> its record (loaded on first use)
        self.dirty: set[str] = set()  # the records to write: `flush`
        self.keys: dict[str, str] = {}  # rel -> the key of its content
        self.hits = self.misses = 0  # usages reused / visited
        self.computed: list[tuple[str, str]] = []  # (rel, name) of the values computed

    # ---- records ----------------------------------------------------------------

    def _slot(self, rel: str) -> Entry[dict]:
        """The entry of a file's record: the consumer's root and the file's path (its
        content is checked inside: `_record`)."""
        return Entry(key("file", SCHEMA_VERSION, _sha(f"{self.root}\0{rel}")), dict, _RECORD)

    def _record(self, file) -> dict:
        """The record of `file` (a `ConsumerFile`) as it is now: emptied when the file
        or driftaudit changed."""
        rel = file.rel
        if rel not in self.records:
            entry = self._slot(rel)
            self.records[rel] = self.store.found_many([entry]).get(entry.key) or {}
        record = self.records[rel]
        key = self.keys.get(rel)
        if key is None:  # the text does not change during a run
            key = self.keys[rel] = _sha(
                f"{SCHEMA_VERSION}\0{self.tool}\0{rel}\0{file.module}\0{file.is_package}\0"
                f"{_sha(file.text or '')}"
            )
        if record.get("file") != key or not isinstance(record.get("values"), dict):
            record.clear()
            record.update(file=key, values={})
            self.dirty.add(rel)
        return record

    def derived(self, file, name: str, compute: Callable, kind: type | None):
        """See `ConsumerFile.derived`. Not stored when the file does not parse (its
        failure is reported by whichever stage parses it)."""
        values = self._record(file)["values"]
        data = values.get(name)
        if isinstance(data, bytes):
            try:
                value = pickle.loads(data)
                if kind is None or isinstance(value, kind):
                    return value
            except Exception:  # noqa: BLE001 -- corrupt or of another form: recomputed
                pass
        value = compute()
        if not file.parsed or file.tree is not None:
            try:
                values[name] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                self.dirty.add(file.rel)
                self.computed.append((file.rel, name))
            except Exception:  # noqa: BLE001 -- something that does not pickle: not stored
                values.pop(name, None)
        return value

    def computed_since(self, mark: int) -> list[tuple[str, str, bytes]]:
        """(rel, name, value) of what was computed since `len(self.computed)` was `mark`
        (a forked stage sends them back: `absorb`)."""
        return [
            (rel, name, self.records[rel]["values"][name])
            for rel, name in self.computed[mark:]
            if name in self.records[rel]["values"]
        ]

    def absorb(self, values: list[tuple[str, str, bytes]], files) -> None:
        """Store values another process derived from these files (`computed_since`);
        `files`: the `ConsumerFiles` they belong to."""
        for rel, name, data in values:
            file = files.get(rel)
            if file is None or file.text is None:
                continue
            record = self._record(file)
            if name not in record["values"]:
                record["values"][name] = data
                self.dirty.add(rel)

    # ---- usages -------------------------------------------------------------------

    def use_exports(self, exports: ConsumerExports) -> None:
        self.context = exports_digest(exports)

    def _usage_key(self, record: dict) -> str:
        if self.context is None:
            raise RuntimeError("FileCache.use_exports was not called")
        return _sha(f"{record['file']}\0{self.context}")

    def load_usages(self, file) -> tuple[list[Usage], set[str], dict] | None:
        """(usages, defined names, the file's rows of the attribute table), or None."""
        record = self._record(file)
        found = None
        if record.get("usage_key") == self._usage_key(record):
            try:
                usages, names, fields = pickle.loads(record["usages"])
                if (
                    isinstance(usages, list)
                    and all(isinstance(u, Usage) for u in usages)
                    and isinstance(names, set)
                    and isinstance(fields, dict)
                ):
                    found = usages, names, fields
            except Exception:  # noqa: BLE001 -- corrupt or of another form: visited again
                found = None
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def save_usages(self, file, usages: list[Usage], names: set[str], fields: dict) -> None:
        """Pickled now: the matchers fill in some usages' fields later."""
        record = self._record(file)
        try:
            data = pickle.dumps((usages, set(names), fields), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 -- something that does not pickle: not stored
            return
        record.update(usage_key=self._usage_key(record), usages=data)
        self.dirty.add(file.rel)

    def flush(self) -> None:
        """Write the records that changed (one transaction)."""
        # a record that does not pickle is not stored (`Store.put_many`)
        self.store.put_many([(self._slot(rel), self.records[rel]) for rel in sorted(self.dirty)])
        self.dirty = set()


_RECORD = Pickled(dict)
