"""Files read and written next to an untrusted tree: the consumer's config and baseline,
and the reports a run writes.

The consumer tree is not the user's word: a pull request may commit a symlink where a
file is expected, or a config that names `../../x.json`. The rules, for every path that
lies in the tree (however it was named):

- a path the consumer names (its config's `baseline`, the default file names) is
  relative, without `..`, and resolves inside the tree;
- a read follows a symlink only when it resolves inside the tree, and reads only a
  regular file (not a FIFO, a device, a folder);
- a write follows no symlink at all (none of the path's folders inside the tree, not
  the file itself), creates missing folders, and replaces the file atomically: a
  temporary file in the same folder, then a rename (so a hard link is replaced, not
  written through).

A path outside the tree that the user named on the command line (`--baseline`,
`--output`) is the user's word: its folders are followed, and a special file under
`/dev` (`/dev/stdout`, `/dev/null`) or any FIFO or device is written in place. A
symlink at the end of any other path is not written through: outside the consumer's
folder, the checkout around it is as untrusted as the folder itself.

Every refusal is a `DriftauditError` (one line, exit 2). Hand-written: the standard
library's `open` follows every symlink, and pathlib cannot open below a folder's file
descriptor, which is what keeps a folder swapped for a symlink meanwhile from leading
the write out.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from driftaudit.errors import DriftauditError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_AT_FD = os.open in os.supports_dir_fd and os.replace in os.supports_dir_fd


def consumer_name(value: str, what: str, where: str) -> str:
    """A path the consumer's config names (`what`, set in `where`): relative to the
    consumer root, without `..`; returned in POSIX form."""
    if "\0" in value:
        raise DriftauditError(f"{where}: {what} holds a NUL character")
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or (path.parts and path.parts[0].endswith(":")):
        raise DriftauditError(f"{where}: {what} {value!r} must be a path inside the consumer")
    if ".." in path.parts:
        raise DriftauditError(f"{where}: {what} {value!r} must not leave the consumer ('..')")
    if not path.parts:
        raise DriftauditError(f"{where}: {what} {value!r} names no file")
    return path.as_posix()


def in_tree(root: Path | None, path: Path) -> list[str] | None:
    """The parts of `path` below `root`, when it lies in the tree (spelled under the
    root, or its folder resolving into it); None when it lies outside."""
    if root is None:
        return None
    absolute = os.path.abspath(path)
    real_root = os.path.realpath(root)
    for base in (os.path.abspath(root), real_root):
        parts = _below(base, absolute)
        if parts is not None:
            return parts
    parts = _below(real_root, os.path.realpath(os.path.dirname(absolute)))
    return None if parts is None else [*parts, os.path.basename(absolute)]


def _below(base: str, path: str) -> list[str] | None:
    try:
        if os.path.commonpath([base, path]) != base:
            return None
    except ValueError:  # different drives
        return None
    return [p for p in path[len(base) :].split(os.sep) if p]


def _within(real_root: str, real: str) -> bool:
    return _below(real_root, real) is not None


# ---- reading ---------------------------------------------------------------------------


def read_bytes(root: Path | None, path: Path, what: str) -> bytes | None:
    """The bytes of the file at `path`; None when there is none. In the tree (`root`):
    a symlink must resolve inside it, and only a regular file is read."""
    parts = in_tree(root, path)
    if parts is None:
        try:
            with open(path, "rb") as stream:
                return stream.read()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise DriftauditError(f"{what} {str(path)!r} is a folder") from None
        except OSError as exc:
            raise DriftauditError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    assert root is not None
    if not parts:
        raise DriftauditError(f"{what} {str(path)!r} is the consumer folder itself")
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, *parts))
    if not _within(real_root, real):
        raise DriftauditError(
            f"{what} {str(path)!r} is a symbolic link out of the consumer tree: not followed"
        )
    try:
        handle = os.open(real, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise DriftauditError(f"cannot read {what} {str(path)!r}: {_why(exc)}") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise DriftauditError(f"{what} {str(path)!r} is not a regular file: not read")
        with os.fdopen(handle, "rb", closefd=False) as stream:
            return stream.read()
    except OSError as exc:
        raise DriftauditError(f"cannot read {what} {str(path)!r}: {_why(exc)}") from None
    finally:
        os.close(handle)


# ---- writing ---------------------------------------------------------------------------


def write_bytes(root: Path | None, path: Path, data: bytes, what: str) -> None:
    """Write `data` to `path` under the rules of the module docstring."""
    parts = in_tree(root, path)
    try:
        if parts is None:
            _write_outside(path, data, what)
        else:
            assert root is not None
            if not parts:
                raise DriftauditError(f"{what} {str(path)!r} is the consumer folder itself")
            _write_in_tree(root, parts, data, what, path)
    except OSError as exc:
        raise DriftauditError(f"cannot write {what} {str(path)!r}: {_why(exc)}") from None


def _write_outside(path: Path, data: bytes, what: str) -> None:
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        link = None
    if link is not None and stat.S_ISLNK(link.st_mode):
        try:
            target = os.stat(path)
        except FileNotFoundError:
            target = None
        special = target is not None and not stat.S_ISREG(target.st_mode)
        if not (special or os.path.abspath(path).startswith("/dev/")):
            raise DriftauditError(
                f"{what} {str(path)!r} is a symbolic link: not written through "
                "(name the file it points to)"
            )
        _write_in_place(path, data)
        return
    if link is not None and stat.S_ISDIR(link.st_mode):
        raise DriftauditError(f"{what} {str(path)!r} is a folder")
    if link is not None and not stat.S_ISREG(link.st_mode):
        _write_in_place(path, data)  # a FIFO or device the user named
        return
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC) if _AT_FD else None
    try:
        _replace(handle, folder, os.path.basename(path), data, link)
    finally:
        if handle is not None:
            os.close(handle)


def _write_in_place(path: Path, data: bytes) -> None:
    with open(path, "wb") as stream:
        stream.write(data)


def _write_in_tree(root: Path, parts: list[str], data: bytes, what: str, path: Path) -> None:
    if not _AT_FD:  # pragma: no cover - no *at() calls (Windows): checked, then written
        _write_in_tree_by_name(root, parts, data, what, path)
        return
    folder = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for depth, name in enumerate(parts[:-1]):
            folder = _subfolder(folder, name, "/".join(parts[: depth + 1]), what, path)
        existing = _lstat_at(folder, parts[-1])
        _refuse_link(existing, what, path)
        _replace(folder, None, parts[-1], data, existing)
    finally:
        os.close(folder)


def _subfolder(folder: int, name: str, rel: str, what: str, path: Path) -> int:
    """The folder `name` below the open `folder` (closed), created when missing; never
    through a symlink."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        try:
            handle = os.open(name, flags, dir_fd=folder)
        except FileNotFoundError:
            try:
                os.mkdir(name, dir_fd=folder)
            except FileExistsError:  # made meanwhile, or a dangling symlink
                pass
            handle = os.open(name, flags, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EEXIST):
            kind = "a symbolic link" if _is_link_at(folder, name) else "not a folder"
            raise DriftauditError(
                f"{what} {str(path)!r}: {rel} in the consumer tree is {kind}: not followed"
            ) from None
        raise
    finally:
        os.close(folder)
    return handle


def _lstat_at(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _is_link_at(folder: int, name: str) -> bool:
    found = _lstat_at(folder, name)
    return found is not None and stat.S_ISLNK(found.st_mode)


def _refuse_link(existing: os.stat_result | None, what: str, path: Path) -> None:
    if existing is None or stat.S_ISREG(existing.st_mode):
        return
    if stat.S_ISLNK(existing.st_mode):
        raise DriftauditError(
            f"{what} {str(path)!r} is a symbolic link in the consumer tree: not written "
            "through (remove it, or name another file on the command line)"
        )
    raise DriftauditError(f"{what} {str(path)!r} is not a regular file: not written")


def _replace(folder: int | None, folder_path: str | None, name: str, data: bytes, existing) -> None:
    """A temporary file next to `name` (below the open `folder`, or at `folder_path`),
    renamed over it; its mode kept. The name is one `fix --apply` sweeps when left."""
    temporary = f".driftaudit-{os.getpid()}-{os.urandom(4).hex()}.tmp"
    at = {"dir_fd": folder} if folder is not None else {}
    where = temporary if folder is not None else os.path.join(folder_path or ".", temporary)
    target = name if folder is not None else os.path.join(folder_path or ".", name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    handle = os.open(where, flags, 0o666, **at)
    try:
        try:
            with os.fdopen(handle, "wb", closefd=False) as stream:
                stream.write(data)
            if existing is not None and stat.S_ISREG(existing.st_mode):
                os.fchmod(handle, stat.S_IMODE(existing.st_mode))
            os.fsync(handle)
        finally:
            os.close(handle)
        if folder is not None:
            os.replace(where, target, src_dir_fd=folder, dst_dir_fd=folder)
        else:
            os.replace(where, target)
    except BaseException:
        try:
            os.unlink(where, **at)
        except OSError:
            pass
        raise


def _write_in_tree_by_name(
    root: Path, parts: list[str], data: bytes, what: str, path: Path
) -> None:  # pragma: no cover - platforms without *at() calls
    folder = Path(root)
    for depth, name in enumerate(parts[:-1]):
        folder = folder / name
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            rel = "/".join(parts[: depth + 1])
            raise DriftauditError(
                f"{what} {str(path)!r}: {rel} in the consumer tree is not a folder: not followed"
            )
        folder.mkdir(exist_ok=True)
    target = folder / parts[-1]
    existing = os.lstat(target) if os.path.lexists(target) else None
    _refuse_link(existing, what, path)
    _replace(None, str(folder), parts[-1], data, existing)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link, not followed"
    return exc.strerror or str(exc)
