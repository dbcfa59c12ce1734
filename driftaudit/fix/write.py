"""Write the fixed files all or nothing, keeping what a file is besides its text.

Every file is checked first (unchanged since it was read, a regular file with one link,
writable, ours to keep owned as it is), then every new content goes to a temporary file
next to its target (`.driftaudit-<pid>-*.tmp`, with the target's mode and owner) and the
target gets a backup hard link; only then are the temporary files renamed over the
targets. A failure restores the targets already replaced from their backups; temporary
files and backups are removed in any case. A symlink is written through (its target is
replaced, the link stays). A kill -9 between creating and renaming can leave
`.driftaudit-<pid>-*` files: the next run removes those of processes no longer alive.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from driftaudit.fix.source import digest_of

PREFIX = ".driftaudit-"
_STALE = re.compile(r"\.driftaudit-(\d+)-.*\.(tmp|bak)$")
_SKIP_DIRS = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox"}


class WriteRefused(Exception):
    """Nothing was written (or everything written was restored): `problems` say why."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{path}: {reason}" for path, reason in problems))
        self.problems = problems


@dataclass
class _Planned:
    path: str  # as the report names it
    target: Path  # the real file (through symlinks)
    data: bytes
    temporary: Path | None = None
    backup: Path | None = None
    replaced: bool = False


def refusal(root: Path, path: str, digest: str) -> str | None:
    """Why the file must not be rewritten, or None."""
    link = root / path
    target = Path(os.path.realpath(link))
    try:
        status = os.stat(target)
        current = target.read_bytes()
    except OSError as exc:
        return f"cannot read it again: {exc.strerror}"
    if not stat.S_ISREG(status.st_mode):
        return "not a regular file"
    if digest_of(current) != digest:
        return "changed since the scan; run again"
    if status.st_nlink > 1:
        return f"has {status.st_nlink} hard links (a rewrite would split them)"
    if not status.st_mode & stat.S_IWUSR or not os.access(target, os.W_OK):
        return "write-protected"
    if hasattr(os, "geteuid") and os.geteuid() not in (0, status.st_uid):
        return f"owned by uid {status.st_uid} (a rewrite would change its owner)"
    if not os.access(target.parent, os.W_OK | os.X_OK):
        return f"its folder {target.parent} is not writable"
    return None


def write_all(root: Path, files: list[tuple[str, bytes, str]]) -> None:
    """Write (path, new bytes, digest when read) for every file, or none of them."""
    problems = [(p, r) for p, _, d in files if (r := refusal(root, p, d)) is not None]
    by_target: dict[Path, _Planned] = {}
    for path, data, _ in files:
        target = Path(os.path.realpath(root / path))
        if target in by_target and by_target[target].data != data:  # two links, two fixes
            problems.append((path, f"the same file as {by_target[target].path}, fixed otherwise"))
        by_target.setdefault(target, _Planned(path, target, data))
    if problems:
        raise WriteRefused(problems)
    planned = list(by_target.values())
    current = None
    try:
        for current in planned:
            _prepare(current)
        for current in planned:
            os.replace(current.temporary, current.target)
            current.replaced = True
    except BaseException as exc:
        failed = [] if current is None else [(current.path, _why(exc))]
        problems = failed + _restore(planned)
        if isinstance(exc, Exception):
            raise WriteRefused(problems) from exc
        raise
    finally:
        for item in planned:
            for leftover in (item.temporary, item.backup):
                if leftover is not None:
                    _remove(leftover)


def _prepare(item: _Planned) -> None:
    status = os.stat(item.target)
    handle, name = tempfile.mkstemp(
        dir=item.target.parent, prefix=f"{PREFIX}{os.getpid()}-", suffix=".tmp"
    )
    item.temporary = Path(name)
    with os.fdopen(handle, "wb") as stream:
        stream.write(item.data)
        stream.flush()
        os.fsync(stream.fileno())
    os.chmod(item.temporary, stat.S_IMODE(status.st_mode))
    created = os.stat(item.temporary)
    if hasattr(os, "chown") and (created.st_uid, created.st_gid) != (
        status.st_uid,
        status.st_gid,
    ):
        os.chown(item.temporary, status.st_uid, status.st_gid)
    backup = item.target.parent / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}.bak"
    os.link(item.target, backup)
    item.backup = backup


def _restore(planned: list[_Planned]) -> list[tuple[str, str]]:
    """Put the replaced files back; say which could not be (their backup is kept)."""
    problems = []
    for item in reversed(planned):
        if not item.replaced:
            continue
        try:
            os.replace(item.backup, item.target)
            item.replaced = False
            item.backup = None
        except OSError as exc:
            problems.append((item.path, f"could not be restored ({exc.strerror}): {item.backup}"))
            item.backup = None  # keep it for the user
    return problems


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{type(exc).__name__}: {exc}"


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        pass  # swept by the next run


def sweep_stale(root: Path) -> list[Path]:
    """Remove the temporary files and backups that a killed run left behind."""
    removed = []
    for folder, folders, names in os.walk(root):
        folders[:] = [f for f in folders if f not in _SKIP_DIRS]
        for name in names:
            match = _STALE.match(name)
            if match and not _alive(int(match.group(1))):
                path = Path(folder) / name
                _remove(path)
                removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours
    return True
