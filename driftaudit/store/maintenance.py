"""`driftaudit cache info|clean|prune`: what the cache directory holds, and removing it.

Only what driftaudit lays out in the cache directory is ever touched (`_layout`):
`sources/sglang-<version>/` and `sources/git-<sha>/` holding driftaudit's record or
manifest, the temporary folders of an unpack or export (`sources/.download-*`,
`.git-*`, `.discard-*`), `latest-sglang.json`, and the three SQLite stores with their
`-wal`/`-shm`/`-journal` files. Anything else there is listed as not driftaudit's and
left alone (a `--cache-dir ~` removes nothing of the home directory). A symlink is
removed as a link, never followed; a folder is removed with `shutil.rmtree`, which
does not follow the links inside it either. The cache directory itself is never removed.

Another driftaudit running meanwhile is not broken:
- a tree is removed only under the exclusive lock on its use marker, taken without
  waiting (`sources/in_use.py`): a tree a run holds is skipped ("in use"), and the
  tree is moved aside under the lock before it is deleted, so a run opening it sees it
  whole or not at all (and fetches it again);
- a temporary folder is a leftover only when nothing in it changed for an hour (an
  unpack under way is younger);
- the stores are emptied and pruned through the store's own connection (`db.BlobStore`:
  WAL, the 30 s busy timeout): rows deleted in a transaction, then VACUUM; the files are
  never deleted under a run that has them open (a run that asks for a removed entry
  computes it again).

`prune` removes what the current driftaudit can no longer use (as `uv cache prune`):
store entries of another schema, of an unknown namespace or of another version of their
namespace (`current_versions`); a directory's stat cache whose directory is gone; the
entries about a file's content (`module`, `callgraph`, `fingerprints`, `global_attrs`)
no tree in the cache or stat cache holds; releases and exports whose record does not
verify; leftovers of interrupted unpacks; and trees not used for `keep_days` days or
beyond the `keep` most recently used. Removing a release also removes the entries about
its whole tree (its snapshot digest: names, surfaces, ...) and its files'.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from driftaudit.errors import DriftauditError
from driftaudit.sources import in_use
from driftaudit.sources.index import COMPLETE, MANIFEST, release_version, verify_release
from driftaudit.sources.latest import CACHE_FILE as LATEST_FILE
from driftaudit.sources.releases import CACHE_FILE as RELEASES_FILE
from driftaudit.store import db

SOURCES = "sources"
STORES = ("snapshots.sqlite", "findings.sqlite", "files.sqlite")
_STORE_SIDES = ("-wal", "-shm", "-journal")
_TEMP_PREFIXES = (".download-", ".git-", ".discard-")  # index.py, git.py: tempfile, _discard
LEFTOVER_AGE = 60 * 60  # a temporary folder untouched this long is an interrupted unpack's
DEFAULT_KEEP_DAYS = 30
_PER_FILE = ("module", "callgraph", "fingerprints", "global_attrs")  # key ends in a file digest
_STATS = "stats"


def current_versions() -> dict[str, dict[str, str]]:
    """Store file -> namespace -> the version of its entries this driftaudit reads (each
    imported from the module that owns the namespace; `tests/test_cache_command.py`
    checks that every namespace the code writes is here)."""
    from driftaudit import findings_cache
    from driftaudit.drift.deprecations import DEPRECATIONS_VERSION
    from driftaudit.drift.differ import ATTR_GATES_VERSION, ATTR_READS_VERSION
    from driftaudit.drift.pairs import NAMESPACE as PAIR
    from driftaudit.drift.pairs import PAIRS_VERSION
    from driftaudit.history.states import STATES_VERSION
    from driftaudit.snapshot.api_model import EXTRACTOR_VERSION
    from driftaudit.snapshot.callgraph import CALLGRAPH_VERSION
    from driftaudit.snapshot.entries import NAMES_VERSION
    from driftaudit.snapshot.fingerprints import FINGERPRINTS_VERSION
    from driftaudit.snapshot.listing import STATS_VERSION
    from driftaudit.snapshot.owned_globals import GLOBAL_ATTRS_VERSION
    from driftaudit.snapshot.selfreads import SELFREADS_VERSION
    from driftaudit.snapshot.surfaces import serverargs
    from driftaudit.snapshot.surfaces.registry import SURFACES_VERSION
    from driftaudit.usage import file_cache

    snapshots = {
        "module": EXTRACTOR_VERSION,
        "callgraph": CALLGRAPH_VERSION,
        "calling": CALLGRAPH_VERSION,
        "fingerprints": FINGERPRINTS_VERSION,
        "serverargs": serverargs.EXTRACTOR_VERSION,
        "names": NAMES_VERSION,
        "definers": NAMES_VERSION,
        "surface": SURFACES_VERSION,
        "envindex": SURFACES_VERSION,
        "env": SURFACES_VERSION,
        "envnames": SURFACES_VERSION,
        "stats": STATS_VERSION,
        "selfreads": SELFREADS_VERSION,
        "deprecated": DEPRECATIONS_VERSION,
        "deprecation": DEPRECATIONS_VERSION,
        "attr_reads": ATTR_READS_VERSION,
        "attr_gates": ATTR_GATES_VERSION,
        "symstate": STATES_VERSION,
        "envdelta": STATES_VERSION,
        "global_attrs": GLOBAL_ATTRS_VERSION,
        PAIR: PAIRS_VERSION,
    }
    return {
        "snapshots.sqlite": {k: str(v) for k, v in snapshots.items()},
        "findings.sqlite": {"findings": str(findings_cache.SCHEMA_VERSION)},
        "files.sqlite": {"file": str(file_cache.SCHEMA_VERSION)},
    }


# ---- what the cache holds -----------------------------------------------------------------


@dataclass
class Tree:
    """An unpacked release or a git export under `sources/`."""

    kind: str  # "release" | "git"
    name: str  # its folder's name
    path: Path
    version: str | None  # a release's version
    link: bool = False  # a symlink in the cache's place of a tree (removed as a link)
    size: int = 0  # bytes on disk
    last_used: float | None = None

    def label(self) -> str:
        return f"sglang {self.version}" if self.kind == "release" else self.name


@dataclass
class Namespace:
    namespace: str
    version: str
    current: bool  # the version this driftaudit reads
    entries: int = 0
    size: int = 0  # stored (compressed) bytes


@dataclass
class StoreFile:
    name: str
    path: Path
    size: int  # the file and its -wal/-shm on disk
    schema: int | None = None
    namespaces: list[Namespace] = field(default_factory=list)
    link: bool = False
    problem: str | None = None  # not readable as a store

    @property
    def entries(self) -> int:
        return sum(n.entries for n in self.namespaces)


@dataclass
class Inventory:
    cache_dir: Path
    exists: bool
    trees: list[Tree] = field(default_factory=list)
    leftovers: list[tuple[Path, int]] = field(default_factory=list)  # (path, bytes)
    stores: list[StoreFile] = field(default_factory=list)
    latest: dict | None = None  # the record, its path and size
    unknown: list[str] = field(default_factory=list)  # entries that are not driftaudit's

    @property
    def total(self) -> int:
        return (
            sum(t.size for t in self.trees)
            + sum(size for _, size in self.leftovers)
            + sum(s.size for s in self.stores)
            + (self.latest["bytes"] if self.latest else 0)
        )


@dataclass
class Outcome:
    """What `clean` or `prune` did."""

    removed: list[tuple[str, int]] = field(default_factory=list)  # (what, bytes freed)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what, why)

    @property
    def freed(self) -> int:
        return sum(size for _, size in self.removed)


def check_dir(cache_dir: Path, write: bool) -> bool:
    """Whether the cache directory exists; an error when it is not a directory, or (to
    remove from it) not writable."""
    try:
        info = cache_dir.stat()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise DriftauditError(f"cache directory {str(cache_dir)!r}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise DriftauditError(f"cache directory {str(cache_dir)!r} is not a directory")
    if write and not os.access(cache_dir, os.W_OK | os.X_OK):
        raise DriftauditError(f"cache directory {str(cache_dir)!r} is not writable")
    return True


def disk_size(path: Path) -> int:
    """Bytes on disk (allocated blocks, as `du`) of a file, link or folder, links not
    followed."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    total = _allocated(info)
    if not stat.S_ISDIR(info.st_mode):
        return total
    pending = [os.fspath(path)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    try:
                        found = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += _allocated(found)
                    if stat.S_ISDIR(found.st_mode):
                        pending.append(entry.path)
        except OSError:
            continue
    return total


def _allocated(info: os.stat_result) -> int:
    blocks = getattr(info, "st_blocks", None)
    return blocks * 512 if blocks is not None else info.st_size


def _ours(tree: Path) -> bool:
    """A folder driftaudit wrote: it holds its record or its manifest (regular files)."""
    for name in (COMPLETE, MANIFEST):
        try:
            if stat.S_ISREG(os.lstat(tree / name).st_mode):
                return True
        except OSError:
            continue
    return False


def _tree(entry: os.DirEntry) -> Tree | None:
    """The tree a `sources/` entry is, if it is named as driftaudit names them."""
    name = entry.name
    if name.startswith("sglang-"):
        try:
            version: str | None = release_version(name.removeprefix("sglang-"))
        except DriftauditError:
            return None
        kind = "release"
    elif name.startswith("git-") and _is_sha(name.removeprefix("git-")):
        kind, version = "git", None
    else:
        return None
    return Tree(kind, name, Path(entry.path), version, link=entry.is_symlink())


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _layout(cache_dir: Path) -> Inventory:
    """What lies in the cache directory, sorted into driftaudit's parts and the rest
    (sizes not measured yet)."""
    found = Inventory(cache_dir, exists=True)
    own = {
        SOURCES,
        LATEST_FILE,
        RELEASES_FILE,
        *STORES,
        *(s + side for s in STORES for side in _STORE_SIDES),
    }
    with os.scandir(cache_dir) as entries:
        top = sorted(entries, key=lambda e: e.name)
    found.unknown = [e.name for e in top if e.name not in own]
    sources = cache_dir / SOURCES
    if sources.is_dir() and not sources.is_symlink():
        with os.scandir(sources) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                tree = _tree(entry)
                if tree is not None and (tree.link or (entry.is_dir() and _ours(tree.path))):
                    found.trees.append(tree)
                elif entry.name.startswith(_TEMP_PREFIXES) and entry.is_dir(follow_symlinks=False):
                    found.leftovers.append((Path(entry.path), 0))
                else:
                    found.unknown.append(f"{SOURCES}/{entry.name}")
    elif sources.is_symlink():
        found.unknown.append(f"{SOURCES} (a symlink: not followed)")
    elif sources.exists():
        found.unknown.append(f"{SOURCES} (not a directory)")
    for name in STORES:
        path = cache_dir / name
        if path.is_symlink():
            found.stores.append(StoreFile(name, path, 0, link=True, problem="a symlink"))
        elif path.is_file():
            found.stores.append(StoreFile(name, path, 0))
    return found


def inventory(cache_dir: Path, now: float | None = None) -> Inventory:
    """Everything `driftaudit cache info` shows (an absent cache: empty)."""
    if not check_dir(cache_dir, write=False):
        return Inventory(cache_dir, exists=False)
    found = _layout(cache_dir)
    now = time.time() if now is None else now
    for tree in found.trees:
        tree.size = disk_size(tree.path)
        if not tree.link:
            tree.last_used = in_use.last_used(tree.path, COMPLETE)
    releases = [t for t in found.trees if t.kind == "release"]
    releases.sort(key=lambda t: Version(t.version or "0"), reverse=True)
    exports = sorted((t for t in found.trees if t.kind == "git"), key=lambda t: -(t.last_used or 0))
    found.trees = releases + exports  # releases newest first, exports last used first
    found.leftovers = [(path, disk_size(path)) for path, _ in found.leftovers if _stale(path, now)]
    versions = current_versions()
    for store in found.stores:
        store.size = sum(disk_size(Path(f"{store.path}{side}")) for side in ("", *_STORE_SIDES))
        if store.link:
            continue
        try:
            schema, rows = db.entry_sizes(store.path)
        except db.sqlite3.DatabaseError as exc:
            store.problem = f"not readable: {exc}"
            continue
        store.schema = schema
        current = versions[store.name] if schema == db.SCHEMA_VERSION else {}
        by_namespace: dict[tuple[str, str], Namespace] = {}
        for key, size in rows:
            namespace, version = _namespace(key)
            slot = by_namespace.get((namespace, version))
            if slot is None:
                live = current.get(namespace) == version
                slot = by_namespace[namespace, version] = Namespace(namespace, version, live)
            slot.entries += 1
            slot.size += size or 0
        store.namespaces = sorted(by_namespace.values(), key=lambda n: (n.namespace, n.version))
    latest = cache_dir / LATEST_FILE
    if latest.is_file() and not latest.is_symlink():
        try:
            record = json.loads(latest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = None
        found.latest = {
            "path": str(latest),
            "bytes": disk_size(latest),
            "version": record.get("version") if isinstance(record, dict) else None,
            "checked": record.get("checked") if isinstance(record, dict) else None,
        }
    return found


def _namespace(key: str) -> tuple[str, str]:
    parts = key.split(":", 2)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _stale(path: Path, now: float) -> bool:
    """Nothing in the temporary folder (itself or what it holds directly) changed for
    `LEFTOVER_AGE`: no unpack is writing it."""
    times = []
    try:
        times.append(os.lstat(path).st_mtime)
        with os.scandir(path) as entries:
            times += [e.stat(follow_symlinks=False).st_mtime for e in entries]
    except OSError:
        pass
    return bool(times) and now - max(times) >= LEFTOVER_AGE


# ---- removing -----------------------------------------------------------------------------


def _remove_tree(tree: Tree, outcome: Outcome, why: str) -> bool:
    """Remove a tree no run holds (moved aside under its claim, then deleted)."""
    size = tree.size or disk_size(tree.path)
    if tree.link:
        tree.path.unlink(missing_ok=True)
        outcome.removed.append((f"{tree.label()} (a symlink: removed as a link)", size))
        return True
    try:
        claim = in_use.claim(tree.path)
    except OSError as exc:
        outcome.skipped.append((tree.label(), f"cannot lock it: {exc.strerror or exc}"))
        return False
    if claim is None:
        outcome.skipped.append((tree.label(), "in use by another driftaudit run"))
        return False
    doomed = tree.path.with_name(f".discard-{tree.name}-{os.getpid()}")
    try:
        tree.path.rename(doomed)
    except OSError as exc:
        outcome.skipped.append((tree.label(), f"cannot move it aside: {exc.strerror or exc}"))
        return False
    finally:
        claim.release()
    _rmtree(doomed)
    outcome.removed.append((f"{tree.label()}{why}", size))
    return True


def _rmtree(path: Path) -> None:
    """Delete a folder: symlinks inside it are unlinked, never followed (rmtree's own
    rule: it refuses a symlink as its root, and uses the fd-based walk where the
    platform allows, safe against a link swapped in meanwhile)."""
    shutil.rmtree(path, ignore_errors=True)


def _remove_leftovers(found: Inventory, outcome: Outcome) -> None:
    for path, size in found.leftovers:
        _rmtree(path)
        outcome.removed.append((f"{SOURCES}/{path.name} (left by an interrupted run)", size))


def _remove_listings(cache_dir: Path, outcome: Outcome) -> None:
    """The index's answers kept a day: `latest` and the releases of a range."""
    for name in (LATEST_FILE, RELEASES_FILE):
        listing = cache_dir / name
        if listing.is_symlink() or listing.is_file():
            size = disk_size(listing)
            listing.unlink(missing_ok=True)
            outcome.removed.append((name, size))


def _open_store(store: StoreFile, outcome: Outcome) -> db.BlobStore | None:
    """The store through its own connection rules (a corrupt file is recreated, one of
    another schema emptied: `db.BlobStore`), or None (noted)."""
    if store.link:
        outcome.skipped.append((store.name, "a symlink: not followed"))
        return None
    try:
        return db.BlobStore(store.path)
    except db.sqlite3.Error as exc:
        outcome.skipped.append((store.name, f"cannot open it: {exc}"))
        return None


def _shrink(store: StoreFile, blob: db.BlobStore, outcome: Outcome, what: str) -> None:
    """VACUUM, and note the space freed (`what`: the entries removed)."""
    try:
        if not blob.compact():
            reason = "another run is reading it: its write-ahead log is left for SQLite"
            outcome.skipped.append((f"{store.name}: truncating the log", reason))
    except db.sqlite3.Error as exc:
        outcome.skipped.append((f"{store.name}: vacuum", str(exc)))
    finally:
        blob.close()
    after = sum(disk_size(Path(f"{store.path}{side}")) for side in ("", *_STORE_SIDES))
    if what or store.size > after:
        outcome.removed.append(
            (f"{store.name}: {what or 'free pages'}", max(store.size - after, 0))
        )


def clean(cache_dir: Path, releases: list[str] | None = None) -> Outcome:
    """Everything driftaudit keeps in the cache directory (trees in use are skipped),
    or only the named releases (`0.5.14`, or an export's `git-<sha>`) and the entries
    about them."""
    outcome = Outcome()
    if not check_dir(cache_dir, write=True):
        if releases:
            raise DriftauditError(f"{releases[0]!r} is not in the cache ({cache_dir} is empty)")
        return outcome
    found = _layout(cache_dir)
    if releases:
        chosen = _named(found, releases)
        found.stores = [s for s in found.stores if not s.link]
        _measure_stores(found)
        _drop_trees(found, chosen, outcome, {})
        return outcome
    _measure_stores(found)
    for tree in found.trees:
        _remove_tree(tree, outcome, "")
    now = time.time()
    fresh = [(p, s) for p, s in found.leftovers if not _stale(p, now)]
    for path, _ in fresh:
        outcome.skipped.append((f"{SOURCES}/{path.name}", "an unpack under way"))
    found.leftovers = [(p, disk_size(p)) for p, _ in found.leftovers if _stale(p, now)]
    _remove_leftovers(found, outcome)
    _remove_listings(cache_dir, outcome)
    for store in found.stores:
        if store.link:
            for side in ("", *_STORE_SIDES):
                Path(f"{store.path}{side}").unlink(missing_ok=True)
            outcome.removed.append((f"{store.name} (a symlink, not followed)", 0))
            continue
        blob = _open_store(store, outcome)
        if blob is not None:
            count = len(blob.sizes())
            blob.clear()
            _shrink(store, blob, outcome, f"{count} entries")
    _note_unknown(found, outcome)
    return outcome


def _note_unknown(found: Inventory, outcome: Outcome) -> None:
    for name in found.unknown:
        outcome.skipped.append((name, "not driftaudit's: left alone"))


def _named(found: Inventory, names: list[str]) -> list[Tree]:
    """The trees the user named; an error for a name that is not in the cache."""
    chosen = []
    for name in names:
        want = name.strip()
        if want.startswith("git-"):
            tree = next((t for t in found.trees if t.name == want), None)
        else:
            version = Version(release_version(want))  # 0.5.4.post1 is 0.5.4-post1
            tree = next(
                (t for t in found.trees if t.version and Version(t.version) == version), None
            )
        if tree is None:
            cached = ", ".join(t.version or t.name for t in found.trees) or "none"
            raise DriftauditError(f"{name!r} is not in the cache (cached: {cached})")
        if tree not in chosen:
            chosen.append(tree)
    return chosen


def _measure_stores(found: Inventory) -> None:
    for store in found.stores:
        store.size = sum(disk_size(Path(f"{store.path}{side}")) for side in ("", *_STORE_SIDES))


def prune(
    cache_dir: Path,
    keep_days: float = DEFAULT_KEEP_DAYS,
    keep: int | None = None,
    now: float | None = None,
) -> Outcome:
    """What the current driftaudit cannot use, and trees not used for `keep_days` days or
    beyond the `keep` most recently used (see the module docstring)."""
    outcome = Outcome()
    if not check_dir(cache_dir, write=True):
        return outcome
    now = time.time() if now is None else now
    found = _layout(cache_dir)
    _measure_stores(found)
    doomed: list[tuple[Tree, str]] = []
    kept: list[Tree] = []
    for tree in found.trees:
        problem = _tree_problem(tree)
        if problem is not None:
            doomed.append((tree, f" ({problem})"))
        else:
            tree.last_used = in_use.last_used(tree.path, COMPLETE)
            kept.append(tree)
    kept.sort(key=lambda t: -(t.last_used or 0))
    for rank, tree in enumerate(kept):
        idle = (now - (tree.last_used or 0)) / 86400
        if idle > keep_days:
            doomed.append((tree, f" (not used for {int(idle)} days)"))
        elif keep is not None and rank >= keep:
            doomed.append((tree, f" (not among the {keep} most recently used)"))
    found.leftovers = [(p, disk_size(p)) for p, _ in found.leftovers if _stale(p, now)]
    _remove_leftovers(found, outcome)
    reasons = {tree.name: why for tree, why in doomed}
    _drop_trees(found, [t for t, _ in doomed], outcome, reasons, everything=True)
    return outcome


def _tree_problem(tree: Tree) -> str | None:
    """Why the current driftaudit would not read the tree as it is, if it would not."""
    if tree.link:
        return "a symlink"
    if tree.kind == "git":
        return None if (tree.path / COMPLETE).is_file() else "no record"
    assert tree.version is not None
    _, problem = verify_release(tree.path, tree.version)
    return None if problem is None else f"does not verify: {problem}"


@dataclass
class _Known:
    """What the cache's trees hold, after a removal: the content digests of the kept
    releases' files and their snapshot digests (`sure`: every kept release's are known),
    and of the removed trees (files, snapshot digests, roots as the stat caches key
    them)."""

    kept_files: set[str] = field(default_factory=set)
    kept_trees: set[str] = field(default_factory=set)
    sure: bool = True
    gone_files: set[str] = field(default_factory=set)
    gone_trees: set[str] = field(default_factory=set)
    gone_roots: set[str] = field(default_factory=set)


def _drop_trees(
    found: Inventory,
    doomed: list[Tree],
    outcome: Outcome,
    why: dict[str, str],
    everything: bool = False,
) -> None:
    """Remove `doomed` trees, then from the stores what only they used; with
    `everything` (prune), also every entry the current driftaudit cannot use."""
    facts = {t.name: _tree_facts(t) for t in found.trees}
    roots = {t.name: os.path.realpath(t.path) for t in found.trees if not t.link}
    known = _Known()
    for tree in doomed:
        if _remove_tree(tree, outcome, why.get(tree.name, "")):
            files, digest = facts.pop(tree.name)
            known.gone_files |= files or set()
            known.gone_trees |= {digest} if digest else set()
            if tree.name in roots:
                known.gone_roots.add(roots[tree.name])
    for files, digest in facts.values():  # the trees kept
        if files is None:
            known.sure = False
            continue
        known.kept_files |= files
        known.kept_trees |= {digest} if digest else set()
    known.gone_trees -= known.kept_trees
    versions = current_versions()
    for store in found.stores:
        if store.link:
            if everything:
                outcome.skipped.append((store.name, "a symlink: not followed"))
            continue
        blob = _open_store(store, outcome)
        if blob is None:
            continue
        stale = _stale_keys(blob, versions[store.name], known, everything)
        if stale:
            blob.delete_many(stale)
            _shrink(store, blob, outcome, f"{len(stale)} entries")
        elif everything:
            _shrink(store, blob, outcome, "")
        else:
            blob.close()
    if everything:
        _note_unknown(found, outcome)


def _stale_keys(
    blob: db.BlobStore, wanted: dict[str, str], known: _Known, everything: bool
) -> list[str]:
    """The keys to remove: about the trees removed (their files no kept tree holds,
    their whole tree, their stat caches), and (`everything`) those the current
    driftaudit cannot use."""
    keys = [key for key, _ in blob.sizes()]
    stats = {key: key.split(":", 2)[2] for key in keys if key.startswith(f"{_STATS}:")}
    live_stats = {k for k, root in stats.items() if root and os.path.isdir(root)}
    gone_stats = {k for k, root in stats.items() if root in known.gone_roots}
    walked = _stat_digests(blob, live_stats)  # the files of the trees read by a walk
    gone_files = (known.gone_files | _stat_digests(blob, gone_stats)) - known.kept_files - walked
    live_files = known.kept_files | walked
    stale = []
    for key in keys:
        parts = key.split(":")
        namespace, version = parts[0], parts[1] if len(parts) > 1 else ""
        if everything and wanted.get(namespace) != version:
            stale.append(key)  # another version's, or no namespace this driftaudit has
        elif key in gone_stats or (everything and key in stats and key not in live_stats):
            stale.append(key)  # the stat cache of a directory that is gone
        elif namespace in _PER_FILE and (
            parts[-1] in gone_files or (everything and known.sure and parts[-1] not in live_files)
        ):
            stale.append(key)  # about a file no tree in the cache holds
        elif known.gone_trees and not known.gone_trees.isdisjoint(parts[2:]):
            stale.append(key)  # about a removed release's whole tree
    return stale


def _stat_digests(blob: db.BlobStore, keys: set[str]) -> set[str]:
    """The file digests these stat caches hold (of trees read by a walk)."""
    digests: set[str] = set()
    for data in blob.get_many(sorted(keys)).values():
        try:
            table = json.loads(data)
        except ValueError:
            continue
        if isinstance(table, dict):
            digests.update(
                v[2]
                for v in table.values()
                if isinstance(v, list) and len(v) == 3 and isinstance(v[2], str)
            )
    return digests


def _tree_facts(tree: Tree) -> tuple[set[str] | None, str | None]:
    """(the content digests of a tree's files, its snapshot digest): a release's from
    its manifest; None for what is not known (a git export is read by a walk: its
    files' digests are in its stat cache, counted there)."""
    if tree.link:
        return set(), None
    if tree.kind == "git":
        return set(), None
    try:
        manifest = json.loads((tree.path / MANIFEST).read_bytes())
        files = {entry[2] for entry in manifest.values()}
    except (OSError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        return None, None
    from driftaudit.snapshot.api_model import EXTRACTOR_VERSION
    from driftaudit.snapshot.listing import from_manifest

    return files, from_manifest(manifest, EXTRACTOR_VERSION).digest
