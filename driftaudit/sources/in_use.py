"""A cached tree in use: when it was last opened, and which runs are reading it.

Each unpacked release and git export holds a marker, `.driftaudit-used`, beside its
record. A run that opens the tree takes a shared `flock` on the marker and sets its
mtime to now (a few system calls: an open, a lock, two stats, a utime), and holds the
lock until the tree is dropped (`SourceTree.in_use`). `driftaudit cache clean|prune`
(`store/maintenance.py`) removes a tree only after taking the exclusive lock without
waiting: a tree another run is reading is skipped, never pulled from under it. The
remover moves the tree aside while it holds the lock; a run that opened the marker
just before finds, once it has the lock, that the marker is no longer at the tree's
path (`GONE`), and fetches the tree again.

A cache that cannot be written (a read-only mount) is still read: no marker, no lock.
`flock` is POSIX; elsewhere the marker's mtime is still kept, without the lock.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover -- Windows: no advisory locks through flock
    fcntl = None  # type: ignore[assignment]

USED = ".driftaudit-used"  # its mtime: when the tree was last opened
GONE = "gone"  # `hold`: the tree was moved aside (removed) while it was being opened
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Hold:
    """A shared lock on a tree's marker, released when the object is dropped."""

    def __init__(self, fd: int):
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None

    def __del__(self) -> None:
        self.release()

    def __reduce__(self):  # a copy in another process holds nothing
        return (_released, ())


def _released() -> None:
    return None


def _lock(fd: int, exclusive: bool) -> bool:
    """Lock `fd`: shared, waiting; or exclusive, not waiting (False: it is held)."""
    if fcntl is None:
        return True
    if not exclusive:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def hold(tree: Path) -> Hold | str | None:
    """Open the tree at `tree` for this run: its marker's mtime set to now, a shared lock
    held while the `Hold` lives. `GONE` when the tree is no longer there (removed, or
    moved aside by a remover); None when the marker cannot be written (a read-only
    cache: the tree is read without a lock)."""
    marker = tree / USED
    try:
        fd = os.open(marker, _FLAGS, 0o644)
    except OSError as exc:
        return GONE if exc.errno in (errno.ENOENT, errno.ENOTDIR) else None
    try:
        _lock(fd, exclusive=False)
        if not _same_file(fd, marker):  # moved aside while we waited for the lock
            os.close(fd)
            return GONE
        os.utime(fd if os.utime in os.supports_fd else marker)
    except OSError:
        os.close(fd)
        return None
    return Hold(fd)


def claim(tree: Path) -> Hold | None:
    """The exclusive lock on the tree's marker, if no run holds it (None: in use). The
    caller moves the tree aside while it holds the claim, then releases it."""
    fd = os.open(tree / USED, _FLAGS, 0o644)
    try:
        if not _lock(fd, exclusive=True) or not _same_file(fd, tree / USED):
            os.close(fd)  # held; or replaced meanwhile (a damaged tree fetched again)
            return None
    except OSError:
        os.close(fd)
        raise
    return Hold(fd)


def last_used(tree: Path, record: str) -> float | None:
    """When the tree was last opened: its marker's mtime, else (a tree from a
    driftaudit that kept no marker) when it was unpacked, its `record`'s mtime."""
    for name in (USED, record):
        try:
            return os.stat(tree / name, follow_symlinks=False).st_mtime
        except OSError:
            continue
    return None
