"""Per-file usages, cached: a run after a few consumer files changed visits only those.

What the usage visitor finds in a file depends on the file (its text: the tree and the
columns come from it), where it lies (its path, module name, whether it is a package)
and, across files, on nothing but the consumer's export table (`ConsumerExports`: which
consumer modules exist, what each binds at module level, what it star-imports, and for
each class with bases those bases and the names its body defines: all the visitor reads
of another file). An entry is keyed by all of that and by driftaudit itself
(`findings_cache.tool_digest`), so an edit that changes what another file re-exports
or a base class defines makes every file's entry miss, and they are visited again.

One slot per (consumer, file) holds the latest entry, so the store does not grow with
every edit. Entries are pickled (the store is the user's own cache directory); one that
does not load, or holds something of another form, is visited again and replaced.
"""

from __future__ import annotations

import ast
import hashlib
import pickle
from pathlib import Path

from driftaudit.cache import BlobStore
from driftaudit.usage.exports import ConsumerExports, class_names
from driftaudit.usage.exports import _module_level as module_level
from driftaudit.usage.model import Usage

SCHEMA_VERSION = 1  # bump when the stored form or the key's meaning changes


def exports_digest(exports: ConsumerExports, names_of=class_names) -> str:
    """A digest of everything the usage visitor may read of other files (`names_of`:
    `class_names`, or a memo of it)."""
    digest = hashlib.sha256(b"exports\n")
    digest.update(repr(sorted(exports.modules)).encode())
    for module in sorted(exports.bindings):
        digest.update(f"\nb\0{module}\0{sorted(exports.bindings[module].items())!r}".encode())
    for module in sorted(exports.stars):
        digest.update(f"\ns\0{module}\0{exports.stars[module]!r}".encode())
    for module in sorted(exports.classes):
        for name, (bases, node) in sorted(exports.classes[module].items()):
            own = sorted(names_of(node))
            digest.update(f"\nc\0{module}\0{name}\0{bases!r}\0{own!r}".encode())
    return digest.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class UsageCache:
    """The latest usages of each consumer file (see the module docstring).

    A file's slot also holds the names each of its classes defines (`class_names`, a
    walk of the class body: most of what the export digest costs), by the file's text.
    """

    def __init__(self, cache_dir: Path, root: Path, tool: str):
        self.store = BlobStore(cache_dir / "usages.sqlite")
        self.root = str(Path(root).resolve())
        self.tool = tool
        self.context: str | None = None  # set from the export table: `use_exports`
        self.records: dict[str, dict] = {}  # rel -> the slot's record, as loaded
        self.fresh: dict[str, dict] = {}  # rel -> the record as it is now
        self.dirty: set[str] = set()  # the records to write: `flush`
        self.hits = self.misses = 0

    def use_exports(self, exports: ConsumerExports, files: list) -> None:
        """`files`: the (rel, text, tree) of every file added to the export table."""
        known: dict[int, tuple[str, tuple]] = {}  # class node id -> (rel, its place)
        for rel, text, tree in files:
            record = self._record(rel)
            digest = _sha(text)
            memo = record.get("classes") if record.get("text") == digest else None
            if not isinstance(memo, dict):
                memo = {}
                self.dirty.add(rel)
            self.fresh[rel] = {"text": digest, "classes": dict(memo)}
            for node in module_level(tree.body):
                if isinstance(node, ast.ClassDef):
                    known[id(node)] = (rel, (node.name, node.lineno, node.col_offset))

        def names_of(node: ast.ClassDef) -> frozenset[str]:
            rel, place = known.get(id(node), ("", ()))
            memo = self.fresh[rel]["classes"] if rel else {}
            found = memo.get(place)
            if not isinstance(found, frozenset):
                found = class_names(node)
                if rel:
                    memo[place] = found
                    self.dirty.add(rel)
            return found

        self.context = f"{SCHEMA_VERSION}\0{self.tool}\0{exports_digest(exports, names_of)}"

    def _record(self, rel: str) -> dict:
        if rel not in self.records:
            data = self.store.get(self._slot(rel))
            record = {}
            if data is not None:
                try:
                    record = pickle.loads(data)
                except Exception:  # noqa: BLE001 -- corrupt or of another form: recomputed
                    record = {}
            self.records[rel] = record if isinstance(record, dict) else {}
        return self.records[rel]

    def _slot(self, rel: str) -> str:
        return "usages:" + _sha(f"{SCHEMA_VERSION}\0{self.root}\0{rel}")

    def _entry(self, rel: str, module: str, is_package: bool, text: str) -> str:
        if self.context is None:
            raise RuntimeError("UsageCache.use_exports was not called")
        return _sha(f"{self.context}\0{rel}\0{module}\0{is_package}\0{_sha(text)}")

    def load(
        self, rel: str, module: str, is_package: bool, text: str
    ) -> tuple[list[Usage], set[str]] | None:
        record = self._record(rel)
        found = None
        if record.get("key") == self._entry(rel, module, is_package, text):
            try:
                usages, names = pickle.loads(record["usages"])
                if (
                    isinstance(usages, list)
                    and all(isinstance(u, Usage) for u in usages)
                    and isinstance(names, set)
                ):
                    found = usages, names
            except Exception:  # noqa: BLE001 -- corrupt or of another form: visited again
                found = None
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
            self.fresh.setdefault(rel, {}).update(key=record["key"], usages=record["usages"])
        return found

    def save(
        self,
        rel: str,
        module: str,
        is_package: bool,
        text: str,
        usages: list[Usage],
        names: set[str],
    ) -> None:
        """Pickled now: the matchers fill in some usages' fields later."""
        entry = self._entry(rel, module, is_package, text)
        try:
            data = pickle.dumps((usages, set(names)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 -- something that does not pickle: not stored
            return
        self.fresh.setdefault(rel, {}).update(key=entry, usages=data)
        self.dirty.add(rel)

    def flush(self) -> None:
        """Write the records that changed (one transaction)."""
        changed = []
        for rel in sorted(self.dirty & self.fresh.keys()):
            try:
                data = pickle.dumps(self.fresh[rel], protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 -- something that does not pickle: not stored
                continue
            changed.append((self._slot(rel), data))
        self.store.put_many(changed)
        self.dirty = set()
