"""The on-disk cache: unpacked sglang releases and parsed module snapshots.

Location: --cache-dir, else $DRIFTAUDIT_CACHE_DIR, else $XDG_CACHE_HOME/driftaudit,
else ~/.cache/driftaudit. An empty (or blank) variable counts as unset, and a relative
$XDG_CACHE_HOME is ignored, as the XDG spec says (the CLI refuses an empty --cache-dir).
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path


def default_cache_dir() -> Path:
    if (env := os.environ.get("DRIFTAUDIT_CACHE_DIR", "")).strip():
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(Path.home(), ".cache")
    return Path(base) / "driftaudit"


SCHEMA_VERSION = 2  # bump when the table layout or the meaning of its keys changes
_TIMEOUT = 30  # seconds a connection waits for another's write
_LOG_WAIT_MS = 2000  # how long `compact` waits for readers before leaving the log as it is


def _connect(path: Path) -> sqlite3.Connection:
    """A connection that does not sync the disk on every commit: in WAL mode, NORMAL
    still never corrupts the database; a crash may only lose the last entries written,
    which a cache computes again. (A cold run commits a few hundred times: on a laptop's
    disk, a sync each costs more than the writes.)"""
    db = sqlite3.connect(path, timeout=_TIMEOUT, check_same_thread=False)
    db.execute("PRAGMA synchronous=NORMAL")
    return db


class BlobStore:
    """A key -> bytes store in one SQLite file, compressed.

    A corrupt database is never fatal and never stays corrupt: a file that is not a
    database, is shorter than its header says, or reports corruption on a read or
    write is deleted and recreated (the cache only costs time). A store of another
    schema version is emptied. An entry that does not decompress reads as missing;
    the caller validates what it decodes and rebuilds it.
    """

    def __init__(self, path: Path):
        self.path = path
        self._repairs = True
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError:
            self._db = self._recreate()

    @classmethod
    def helper(cls, path: Path) -> BlobStore:
        """A second connection, for a helper process, to a store its parent has open: it
        adds entries, and never checks, empties or recreates the database (the parent
        does, if it must)."""
        store = cls.__new__(cls)
        store.path = path
        store._repairs = False
        store._db = _connect(path)
        return store

    def reopen_in_child(self) -> None:
        """In a forked child: a connection of its own (one inherited across a fork must
        not be used), which never checks, empties or recreates the database."""
        self._repairs = False
        self._db = _connect(self.path)

    def _open(self) -> sqlite3.Connection:
        db = _connect(self.path)
        try:
            if not self._whole(db):
                raise sqlite3.DatabaseError("truncated")
            db.execute("PRAGMA journal_mode=WAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                with db:
                    db.execute("DROP TABLE IF EXISTS blobs")
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, data BLOB)")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _whole(self, db: sqlite3.Connection) -> bool:
        """A cheap check on open (a full integrity check reads every page): the file is
        as long as its header says, unless a WAL still holds pages."""
        if not self.path.exists() or Path(f"{self.path}-wal").exists():
            return True
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
        return self.path.stat().st_size >= pages * size

    def _recreate(self) -> sqlite3.Connection:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        return self._open()

    def _corrupt(self, exc: sqlite3.DatabaseError) -> bool:
        """Rebuild the database after a corruption error; True if it was one."""
        if isinstance(exc, sqlite3.OperationalError):  # locked, busy, read-only: transient
            return False
        if not self._repairs:
            return False
        try:
            self._db.close()
            self._db = self._recreate()
        except sqlite3.DatabaseError:
            return False
        return True

    def get(self, key: str) -> bytes | None:
        try:
            row = self._db.execute("SELECT data FROM blobs WHERE key = ?", (key,)).fetchone()
            return zlib.decompress(row[0]) if row else None
        except sqlite3.DatabaseError as exc:
            self._corrupt(exc)
            return None
        except (zlib.error, TypeError):
            return None

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The entries stored under `keys` (one query per 500 keys; a missing or
        damaged entry is left out)."""
        found: dict[str, bytes] = {}
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT key, data FROM blobs WHERE key IN ({marks})"
                for key, data in self._db.execute(query, chunk):
                    try:
                        found[key] = zlib.decompress(data)
                    except (zlib.error, TypeError):
                        pass
        except sqlite3.DatabaseError as exc:
            self._corrupt(exc)
        return found

    def __contains__(self, key: str) -> bool:
        """Is an entry stored under `key` (not read, not checked)?"""
        try:
            query = "SELECT 1 FROM blobs WHERE key = ?"
            return self._db.execute(query, (key,)).fetchone() is not None
        except sqlite3.DatabaseError as exc:
            self._corrupt(exc)
            return False

    def put_many(self, items: list[tuple[str, bytes]]) -> None:
        if not items:
            return
        rows = [(k, zlib.compress(v, 3)) for k, v in items]
        for _attempt in range(2):
            try:
                with self._db:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO blobs (key, data) VALUES (?, ?)", rows
                    )
                return
            except sqlite3.DatabaseError as exc:
                if not self._corrupt(exc):
                    return  # a cache that cannot be written only costs time

    def put(self, key: str, data: bytes) -> None:
        self.put_many([(key, data)])

    # ---- upkeep (`driftaudit cache`: store/maintenance.py) ------------------------------

    def sizes(self) -> list[tuple[str, int]]:
        """(key, stored bytes) of every entry."""
        return list(self._db.execute("SELECT key, length(data) FROM blobs"))

    def delete_many(self, keys: list[str]) -> None:
        """Remove these entries, in one transaction (a run reading them meanwhile finds
        them missing: computed again)."""
        with self._db:
            self._db.executemany("DELETE FROM blobs WHERE key = ?", [(k,) for k in keys])

    def clear(self) -> None:
        with self._db:
            self._db.execute("DELETE FROM blobs")

    def compact(self) -> bool:
        """Give the free pages back to the file system: VACUUM (it waits for other
        connections' writes, as any writer, up to the connection's timeout), then the
        write-ahead log copied in and truncated. False when a reader kept the log from
        being truncated (waited for 2 s, not the writers' 30: a run may read for long;
        SQLite's next checkpoint copies it in)."""
        self._db.execute("VACUUM")
        self._db.execute(f"PRAGMA busy_timeout = {_LOG_WAIT_MS}")
        try:
            busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {_TIMEOUT * 1000}")
        return not busy

    def close(self) -> None:
        self._db.close()


def entry_sizes(path: Path) -> tuple[int, list[tuple[str, int]]]:
    """(the schema version, [(key, stored bytes)]) of the store file at `path`, read
    only: nothing is checked, emptied or created (`driftaudit cache info`)."""
    db = _connect(path)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        try:
            rows = list(db.execute("SELECT key, length(data) FROM blobs"))
        except sqlite3.OperationalError:  # no table: a store of another layout, or empty
            rows = []
        return version, rows
    finally:
        db.close()
