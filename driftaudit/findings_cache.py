"""The findings of a compare, cached: a warm run over an unchanged consumer reads its
files, stats the two sglang trees and returns what the last run found.

An entry is valid only for the exact inputs it was computed from, all in its key:
- the bytes of every file the consumer walk yields (its path and content) and what
  the walk left out, the consumer's path, `--exclude` and the wrap prefixes;
- each sglang tree (its description and the snapshot's content digest of every module);
- the packs (the bytes of every pack file in the pack directories);
- driftaudit itself: its version, the digest of its own source files and
  `SCHEMA_VERSION` (bump it when the stored form changes), and the Python version.

One slot per (consumer path, trees, options) holds the latest entry, so the store
does not grow with every edit. A corrupt or outdated entry is computed again and
replaced: the cache only ever costs time. Findings are stored as tagged JSON and
stored only when they decode to exactly what was computed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

from driftaudit import __version__
from driftaudit.codes import lookup
from driftaudit.findings import Finding, Fix
from driftaudit.store import Entry, Json, Store
from driftaudit.store.db import BlobStore

SCHEMA_VERSION = 5  # bump when the stored form or the key's meaning changes
DISABLE_ENV = "DRIFTAUDIT_NO_RESULT_CACHE"  # set (non-empty): never read or write it
_PACKAGE = Path(__file__).resolve().parent


def enabled() -> bool:
    return not os.environ.get(DISABLE_ENV)


@functools.cache  # the installed code: fixed for the life of the process
def tool_digest() -> str:
    """driftaudit's version, the content of its own modules, the Python version and the
    installed distributions (griffe, packaging, ...: their dist-info names carry their
    versions): any change to the code that computes findings invalidates every entry."""
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0{SCHEMA_VERSION}\n".encode())
    for entry in sys.path:
        try:
            names = sorted(n for n in os.listdir(entry or ".") if n.endswith(".dist-info"))
        except OSError:  # a zip, a missing folder
            continue
        if names:  # the folders themselves do not count: the working directory is one
            digest.update(f"{' '.join(names)}\n".encode())
    for dirpath, dirnames, filenames in os.walk(_PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".toml", ".json")):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as handle:
                    digest.update(f"{os.path.relpath(path, _PACKAGE)}\0".encode())
                    digest.update(handle.read())
    return digest.hexdigest()


def tree_digest(tree) -> str | None:
    """Every file of an sglang tree's package and its dist-info METADATA, by path, size,
    mtime, mode and owner (what the snapshot's own stat cache trusts too); None when one
    cannot be stat'ed (the snapshot warns about it, and the run is not cached). A
    release just verified against its manifest is not walked again: the manifest's
    digest stands for its content (`SourceTree.manifest`)."""
    top = os.fspath(tree.root)
    if tree.origin == "index" and tree.manifest is not None:
        return hashlib.sha256(f"manifest\0{top}\0{tree.manifest.digest}\n".encode()).hexdigest()
    digest = hashlib.sha256(f"{tree.root}\n".encode())
    try:
        for name in sorted(os.listdir(top)):
            if name.startswith("sglang-") and name.endswith(".dist-info"):
                _stat_into(digest, os.path.join(top, name, "METADATA"), os.stat)
        pending = [os.path.join(top, "sglang")]
        while pending:
            with os.scandir(pending.pop()) as scan:
                entries = sorted(scan, key=lambda e: e.name)
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        pending.append(entry.path)
                else:
                    _stat_into(digest, entry.path, entry.stat)
    except OSError:
        return None
    return digest.hexdigest()


def _stat_into(digest, path: str, stat) -> None:
    info = stat(path) if stat is os.stat else stat()
    digest.update(
        f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_mode}\0{info.st_uid}\n".encode()
    )


def packs_digest(directories: list) -> str:
    """The bytes of every file in the pack directories (Paths or package resources)."""
    digest = hashlib.sha256()
    for directory in directories:
        digest.update(f"dir\0{directory}\n".encode())
        for entry in sorted(directory.iterdir(), key=lambda p: p.name):
            if entry.is_file():
                digest.update(f"{entry.name}\0".encode())
                digest.update(entry.read_bytes())
    return digest.hexdigest()


class FindingsCache:
    """The store of the latest findings per slot (see the module docstring)."""

    def __init__(self, cache_dir: Path):
        self.store = Store(BlobStore(cache_dir / "findings.sqlite"))

    @staticmethod
    def keys(slot: dict, inputs: dict) -> tuple[str, str]:
        """(slot key, entry key): where the entry lives and what it must have been
        computed from."""
        slot_key = _digest({"schema": SCHEMA_VERSION, **slot})
        entry_key = _digest({"slot": slot_key, "tool": tool_digest(), **inputs})
        return f"findings:{SCHEMA_VERSION}:{slot_key}", entry_key

    @staticmethod
    def _entry(slot_key: str, entry_key: str) -> Entry[list[Finding]]:
        """The slot's entry, accepted only when computed from `entry_key`'s inputs."""

        def load(stored) -> list[Finding]:
            if stored["key"] != entry_key:
                raise ValueError("another state of the consumer, trees, packs or tool")
            return [_decode(item) for item in stored["findings"]]

        def dump(findings: list[Finding]) -> dict:
            return {"key": entry_key, "findings": [_encode(f) for f in findings]}

        return Entry(slot_key, list, Json(load, dump))

    def load(self, slot_key: str, entry_key: str) -> list[Finding] | None:
        entry = self._entry(slot_key, entry_key)
        return self.store.found_many([entry], remember=False).get(entry.key)

    def save(self, slot_key: str, entry_key: str, findings: list[Finding]) -> None:
        entry = self._entry(slot_key, entry_key)
        try:
            data = entry.codec.encode(findings)
            if entry.codec.decode(data) != findings:
                return  # something this form cannot carry: never store an approximation
        except Exception:  # noqa: BLE001 -- the same: not stored
            return
        self.store.put_encoded(entry, data)


def _digest(value: dict) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _encode(finding: Finding) -> dict:
    fix = finding.fix
    return {
        "code": finding.code.code,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "symbol": finding.symbol,
        "message": finding.message,
        "old_location": finding.old_location,
        "new_location": finding.new_location,
        "fix": None
        if fix is None
        else [fix.description, _tagged(fix.edit), fix.applicability, fix.covered_by],
        "severity": finding.severity,
        "confidence": finding.confidence,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "details": finding.details,
        "anchor": None if finding.anchor is None else list(finding.anchor),
        "introduced": finding.introduced,
        "deprecated": finding.deprecated,
        "dated": finding.dated,
        "fails_on": finding.fails_on,
    }


def _decode(item: dict) -> Finding:
    code = lookup(item["code"])
    if code is None:
        raise KeyError(item["code"])
    fix = item["fix"]
    anchor = item["anchor"]
    return Finding(
        code,
        item["path"],
        item["line"],
        item["column"],
        item["symbol"],
        item["message"],
        item["old_location"],
        item["new_location"],
        None if fix is None else Fix(fix[0], _untagged(fix[1]), fix[2], fix[3]),
        severity=item["severity"],
        confidence=item["confidence"],
        end_line=item["end_line"],
        end_column=item["end_column"],
        details=item["details"],
        anchor=None if anchor is None else (anchor[0], anchor[1]),
        introduced=item["introduced"],
        deprecated=item["deprecated"],
        dated=item["dated"] is True,
        fails_on=None if item["fails_on"] is None else [str(v) for v in item["fails_on"]],
    )


def _tagged(value):
    """JSON keeps lists, not tuples: a tuple is stored as {"__tuple__": [...]}."""
    if isinstance(value, tuple):
        return {"__tuple__": [_tagged(v) for v in value]}
    if isinstance(value, list):
        return [_tagged(v) for v in value]
    if isinstance(value, dict):
        return {k: _tagged(v) for k, v in value.items()}
    return value


def _untagged(value):
    if isinstance(value, list):
        return [_untagged(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(_untagged(v) for v in value["__tuple__"])
        return {k: _untagged(v) for k, v in value.items()}
    return value
