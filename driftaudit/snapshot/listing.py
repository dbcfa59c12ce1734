"""The modules of a tree: every module and folder below `sglang/`, each file's content
digest (a cache key for what is extracted from it), and a digest of the whole tree.

A release this process has just checked against its manifest (`sources.index`) is
listed from that manifest: no walk, no stat and no hashing, its sha256 are the digests.
Another tree (a directory, a git checkout) is walked, and a file is hashed only when its
size or mtime changed since the last run (a stat cache in the store). Both list in the
walk's order: a folder's files (sorted), then its subfolders (sorted).
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from stat import S_ISREG
from typing import Any

from driftaudit.sources.tree import SourceTree
from driftaudit.store import Entry, Json, Store, key

UNREADABLE = "unreadable-"  # the digest of a file that cannot be read (never cached)


@dataclass
class Listing:
    files: dict[str, str] = field(default_factory=dict)  # module -> path relative to root
    packages: set[str] = field(default_factory=set)  # every folder, __init__.py or not
    digests: dict[str, str] = field(default_factory=dict)  # module -> content digest
    digest: str = ""  # of the tree: every module's name and digest


def list_tree(
    tree: SourceTree, store: Store, salt: str, unreadable: Callable[[str, OSError], None]
) -> Listing:
    """`salt`: what else the tree's digest depends on (the model's version);
    `unreadable(path, error)`: told of each file that cannot be read."""
    if tree.manifest is not None:
        return from_manifest(tree.manifest.files, salt)
    listing = Listing()
    _by_walk(tree, store, listing, unreadable)
    return _digested(listing, salt)


def from_manifest(files: dict[str, list], salt: str) -> Listing:
    """The listing of a release from its manifest alone (also what the store's entries
    about it are keyed by, for `driftaudit cache`: `store/maintenance.py`)."""
    listing = Listing()
    _from_manifest(files, listing)
    return _digested(listing, salt)


def _digested(listing: Listing, salt: str) -> Listing:
    tree_hash = hashlib.sha1(salt.encode())
    for name, digest in listing.digests.items():
        tree_hash.update(f"{name}\0{digest}\n".encode())
    listing.digest = tree_hash.hexdigest()
    return listing


def _folders(parts: Sequence[str]) -> bool:
    """Would the walk enter these folders (no `__pycache__`, no dotted name)?"""
    return all(part != "__pycache__" and "." not in part for part in parts)


def _module(folders: Sequence[str], filename: str) -> str | None:
    """The module a `.py` file in `folders` is (None: not importable by that name)."""
    if not filename.endswith(".py"):
        return None
    stem = filename[:-3]
    name = ".".join(folders if stem == "__init__" else [*folders, stem])
    return name if all(part.isidentifier() for part in name.split(".")) else None


def _from_manifest(manifest: dict[str, list], listing: Listing) -> None:
    entries = []
    folders_of: dict[str, tuple[str, ...] | None] = {}  # each folder judged once
    for rel, entry in manifest.items():
        folder, _, filename = rel.rpartition("/")
        if folder not in folders_of:
            parts = tuple(folder.split("/"))
            kept = parts[0] == "sglang" and _folders(parts)
            folders_of[folder] = parts if kept else None
            if kept:
                listing.packages.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        folders = folders_of[folder]
        if folders is None:
            continue
        name = _module(folders, filename)
        if name is not None:
            # the walk's order: a folder's files ("\0" sorts first), then its subfolders
            entries.append(((*folders, "\0" + filename), name, rel, str(entry[2])))
    for _, name, rel, digest in sorted(entries):
        listing.files[name] = rel
        listing.digests[name] = digest


def _by_walk(
    tree: SourceTree,
    store: Store,
    listing: Listing,
    unreadable: Callable[[str, OSError], None],
) -> None:
    root = tree.root
    entry = Entry(key("stats", STATS_VERSION, str(root.resolve())), dict, _STATS)
    known = store.found_many([entry]).get(entry.key) or {}
    seen: dict[str, list] = {}
    top = os.fspath(root)  # strings, not Paths: pathlib costs more than the stat
    for dirpath, dirnames, filenames in os.walk(tree.package_dir):
        dirnames[:] = sorted(d for d in dirnames if _folders([d]))
        rel_parts = os.path.relpath(dirpath, top).split(os.sep)
        listing.packages.add(".".join(rel_parts))
        for filename in sorted(filenames):
            name = _module(rel_parts, filename)
            if name is None:
                continue
            posix = "/".join([*rel_parts, filename])
            try:
                stat = os.stat(os.path.join(dirpath, filename))
                if not S_ISREG(stat.st_mode):  # a FIFO or a device would block or never end
                    raise OSError(errno.EINVAL, "not a regular file")
                previous = known.get(posix)
                if (
                    isinstance(previous, list)
                    and len(previous) == 3
                    and previous[:2] == [stat.st_size, stat.st_mtime_ns]
                    and isinstance(previous[2], str)
                ):
                    digest = previous[2]
                else:
                    digest = hashlib.sha1((root / posix).read_bytes()).hexdigest()
            except OSError as exc:
                unreadable(posix, exc)
                digest = f"{UNREADABLE}{exc.errno}"
            else:
                seen[posix] = [stat.st_size, stat.st_mtime_ns, digest]
            listing.files[name] = posix
            listing.digests[name] = digest
    if seen != known:
        store.put(entry, seen)


def _stats(data: Any) -> dict:
    """posix path -> [size, mtime_ns, digest] (an entry of any other shape is ignored
    file by file when read: `_by_walk` checks each)."""
    if not isinstance(data, dict):
        raise TypeError("not a table of file stats")
    return data


STATS_VERSION = "1"
_STATS = Json(_stats)
