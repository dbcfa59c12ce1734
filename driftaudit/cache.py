"""The on-disk cache: unpacked sglang releases and parsed module snapshots.

Location: --cache-dir, else $DRIFTAUDIT_CACHE_DIR, else $XDG_CACHE_HOME/driftaudit,
else ~/.cache/driftaudit.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path


def default_cache_dir() -> Path:
    if env := os.environ.get("DRIFTAUDIT_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "driftaudit"


class BlobStore:
    """A key -> bytes store in one SQLite file, compressed.

    A corrupt database or entry is never fatal: the database is recreated, and an
    entry that does not decompress reads as missing (the caller rebuilds it).
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError:
            path.unlink(missing_ok=True)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        db.execute("CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, data BLOB)")
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def get(self, key: str) -> bytes | None:
        try:
            row = self._db.execute("SELECT data FROM blobs WHERE key = ?", (key,)).fetchone()
            return zlib.decompress(row[0]) if row else None
        except (sqlite3.DatabaseError, zlib.error, TypeError):
            return None

    def put_many(self, items: list[tuple[str, bytes]]) -> None:
        if not items:
            return
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO blobs (key, data) VALUES (?, ?)",
                    [(k, zlib.compress(v, 3)) for k, v in items],
                )
        except sqlite3.DatabaseError:
            pass  # a cache that cannot be written only costs time

    def put(self, key: str, data: bytes) -> None:
        self.put_many([(key, data)])
