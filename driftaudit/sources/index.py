"""Releases from the package index: a wheel fetched through the simple API
(`simple_api.py`, no pip) and its Python source unpacked into the cache.

sglang wheels carry the whole source. Since 0.5.11 they are manylinux x86_64 only, one
per CPython (0.5.9 and older: one pure wheel); the source inside is the same on every
platform, so the wheel this interpreter would install is taken, else any.

An unpack is bound to its release: `.driftaudit-complete` records the version, the
wheel, its sha256 (checked against the index's when it was downloaded) and the digest
of the manifest of what was unpacked; on open, the manifest must match the files, the
record the manifest, and the release the record and the METADATA names. A tree that
fails is fetched again, never read as that release.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from driftaudit.errors import DriftauditError
from driftaudit.progress import step
from driftaudit.sources import in_use
from driftaudit.sources.tree import Manifest

PROJECT = "sglang"
COMPLETE = ".driftaudit-complete"  # {"version", "wheel", "sha256", "manifest"}
MANIFEST = ".driftaudit-manifest.json"  # relpath -> [size, mtime_ns, sha256] of the unpack
# Only decides "is this meant as a version?" (a cheap, linear test: no nested repetition);
# `release_version` validates it with packaging.
_LOOKS_LIKE_VERSION_RE = re.compile(r"^v?\d[\w.!+-]*$")
_MAX_VERSION_LENGTH = 64
_OPTIONS: dict[str, object] = {"index_url": None, "offline": False}  # see configure()


def looks_like_version(spec: str) -> bool:
    return bool(_LOOKS_LIKE_VERSION_RE.match(spec))


def release_version(spec: str) -> str:
    """A release spec (`0.5.14`, `v0.5.4.post1`) as pip will ask for it, or an error."""
    text = spec.removeprefix("v")
    if len(text) > _MAX_VERSION_LENGTH:
        raise DriftauditError(f"invalid sglang version {spec[:40]!r}...: too long")
    try:
        Version(text)
    except InvalidVersion:
        raise DriftauditError(f"invalid sglang version {spec!r} (PEP 440)") from None
    return text


def release_dir(cache_dir: Path, version: str) -> Path:
    return cache_dir / "sources" / f"sglang-{version}"


def fetch_release(
    version: str, cache_dir: Path
) -> tuple[Path, Manifest | None, in_use.Hold | str | None]:
    """Unpacked root of sglang==version (holds `sglang/`), the manifest its files were
    just verified against, and this run's hold on it (`in_use.hold`: marked used now,
    not removed by `driftaudit cache` while held); offline once cached.

    A cached release is checked against the manifest written when it was unpacked
    (sizes and mtimes; a file is hashed only when they differ) and against the release
    it is filed under: a tree that lost or changed files, or holds another release, is
    unpacked again, never read as it is.
    """
    version = release_version(version)
    target = release_dir(cache_dir, version)
    if (target / COMPLETE).is_file() and (target / "sglang").is_dir():
        held = in_use.hold(target)  # first: a tree being removed is not verified as kept
        if held != in_use.GONE:
            verified, problem = verify_release(target, version)
            if problem is None:
                return target, verified, held
            print(
                f"driftaudit: warning: cached sglang {version} is damaged ({problem}); "
                "fetching it again",
                file=sys.stderr,
            )
            if isinstance(held, in_use.Hold):
                held.release()  # this run replaces it
    if offline():
        raise DriftauditError(
            f"sglang {version} is not in the cache ({target.parent}) and --offline "
            "forbids the download"
        )
    if target.exists():  # a partial, corrupt or damaged unpack: start again
        _discard(target)
    import tempfile  # a download: the rare path (a warm run imports none of it)

    target.parent.mkdir(parents=True, exist_ok=True)
    step(f"downloading sglang=={version} from the package index")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        wheel, sha256 = _download_wheel(version, Path(tmp))
        staging = Path(tmp) / "unpacked"
        _unpack(wheel, staging)
        unpacked = _unpacked_version(staging)
        if unpacked is not None and _differs(unpacked, version):
            raise DriftauditError(
                f"the index's wheel {wheel.name} holds sglang {unpacked}, not {version}"
            )
        manifest = write_manifest(staging)
        record = {"version": version, "wheel": wheel.name, "sha256": sha256,
                  "manifest": manifest}  # fmt: skip
        (staging / COMPLETE).write_text(json.dumps(record) + "\n")
        staged = in_use.hold(staging)  # held across the move: no remover takes it meanwhile
        publish(staging, target)
        held = in_use.hold(target)
        if isinstance(staged, in_use.Hold):
            staged.release()
    checked = check_manifest(target)  # its listing, for the snapshot (stats: no hashing)
    if isinstance(checked, str) or held == in_use.GONE:
        why = "it was removed" if held == in_use.GONE else checked
        raise DriftauditError(f"sglang {version} changed while it was unpacked ({why})")
    return target, checked, held


def _differs(found: str, version: str) -> bool:
    try:
        return Version(found) != Version(version)
    except InvalidVersion:
        return True


def _unpacked_version(root: Path) -> str | None:
    from driftaudit.sources.tree import read_version

    return read_version(root)


def verify_release(root: Path, version: str) -> tuple[Manifest | None, str | None]:
    """(its manifest, None) when the unpack at `root` is sglang `version` as it was
    unpacked (its files, its manifest, its record); else (None, what is wrong)."""
    checked = check_manifest(root)
    if isinstance(checked, str):
        return None, checked
    problem = _binding_problem(root, version, checked)
    return (checked, None) if problem is None else (None, problem)


def _binding_problem(root: Path, version: str, manifest: Manifest | None) -> str | None:
    """None if the verified tree at `root` is sglang `version`, else what says otherwise:
    its record (written at unpack: a JSON object, or, from older driftaudit, the wheel's
    name alone), or the version its METADATA (else version.py) names."""
    try:
        text = (root / COMPLETE).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "its record is unreadable"
    try:
        record = json.loads(text)
    except ValueError:
        record = {"wheel": text}  # an older driftaudit's record: the wheel's name
    if not isinstance(record, dict) or not isinstance(record.get("wheel"), str):
        return "its record is unreadable"
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        wheel_version = str(parse_wheel_filename(record["wheel"])[1])
    except (InvalidWheelFilename, InvalidVersion):
        return f"its record names no wheel ({record['wheel'][:60]!r})"
    for what, found in (("wheel", wheel_version), ("record", record.get("version"))):
        if found is not None and (not isinstance(found, str) or _differs(found, version)):
            return f"its {what} is sglang {str(found)[:40]}"
    bound = record.get("manifest")
    if bound is not None and (manifest is None or bound != manifest.digest):
        return "its manifest is not the one it was unpacked with"
    unpacked = _unpacked_version(root)
    if unpacked is not None and _differs(unpacked, version):
        return f"it holds sglang {unpacked[:40]}"
    return None


def release_identity(version: str, cache_dir: Path) -> str | None:
    """What stands for cached release `version` without reading its tree: the sha256 of
    the wheel its record says it was unpacked from (checked against the index's when it
    was downloaded). An answer computed from the verified tree holds for the release
    whatever becomes of the unpack later; None: no such record (not fetched yet)."""
    try:
        record = json.loads((release_dir(cache_dir, version) / COMPLETE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != version:
        return None
    sha256 = record.get("sha256")
    if not isinstance(sha256, str) or re.fullmatch(r"[0-9a-f]{64}", sha256) is None:
        return None
    return f"{version}-{sha256}"


def publish(staging: Path, target: Path) -> None:
    """Move a finished tree into place; another run that got there first wins."""
    try:
        staging.rename(target)
    except OSError:
        if not (target / COMPLETE).is_file():
            raise


def _discard(target: Path) -> None:
    """Move a tree aside before deleting it, so a concurrent reader never sees half."""
    doomed = target.with_name(f".discard-{target.name}-{os.getpid()}")
    try:
        target.rename(doomed)
    except OSError:
        return
    import shutil

    shutil.rmtree(doomed, ignore_errors=True)


def _walk_files(root: Path):
    """(posix path relative to root, full path) of every file; strings, not Paths: a
    warm run checks every file of both releases, and pathlib costs more than the stat."""
    for rel, entry in _file_entries(root).items():
        yield rel, entry.path


def _file_entries(root: Path) -> dict[str, os.DirEntry]:
    """posix path relative to root -> the directory entry of every file (what `os.walk`
    lists: symlinked folders neither followed nor listed, `__pycache__` left out). One
    scandir pass, and an entry's `stat()` later costs no path handling: a warm run
    checks every file of both releases (os.walk, then a stat by path: 1.5x the time)."""
    found: dict[str, os.DirEntry] = {}
    pending = [(os.fspath(root), "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__" and not entry.is_symlink():
                        pending.append((entry.path, prefix + entry.name + "/"))
                elif not (prefix == "" and entry.name.startswith(".driftaudit-")):
                    found[prefix + entry.name] = entry
    return found


def _sha256(path: str) -> str:
    """In chunks: releases are unpacked several at once (`releases.fetch_releases`), and
    a wheel holds native libraries of tens of MB (hashlib.file_digest: Python 3.11)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_manifest(root: Path) -> str:
    """Write the manifest of the tree at `root`; its sha256."""
    manifest = {}
    for rel, path in _walk_files(root):
        stat = os.stat(path)
        manifest[rel] = [stat.st_size, stat.st_mtime_ns, _sha256(path)]
    text = json.dumps(manifest, separators=(",", ":")).encode()
    (root / MANIFEST).write_bytes(text)
    return hashlib.sha256(text).hexdigest()


def check_manifest(root: Path) -> Manifest | str | None:
    """The manifest the tree at `root` matches (what was unpacked), else what is wrong.

    A release cached before manifests existed gets one now (trusted on first use; not
    by `_binding_problem`, when the record names the manifest it was unpacked with);
    None when it cannot be written (a read-only cache: still usable, listed by a walk).
    """
    try:
        text = (root / MANIFEST).read_bytes()
    except FileNotFoundError:
        try:
            write_manifest(root)
            text = (root / MANIFEST).read_bytes()
        except OSError:
            return None
    except OSError:
        return "its manifest is unreadable"
    try:
        manifest = json.loads(text)
    except ValueError:
        return "its manifest is unreadable"
    if not isinstance(manifest, dict):
        return "its manifest is unreadable"
    try:
        present = _file_entries(root)
    except OSError:
        return "its files cannot be listed"
    missing = manifest.keys() - present.keys()
    if missing:
        return f"{len(missing)} files missing, e.g. {sorted(missing)[0]}"
    extra = present.keys() - manifest.keys()
    if extra:
        return f"{len(extra)} unexpected files, e.g. {sorted(extra)[0]}"
    for rel, entry in manifest.items():
        try:
            size, mtime, digest = entry
            path = present[rel].path
            stat = present[rel].stat()  # follows a link, as os.stat does
            if [stat.st_size, stat.st_mtime_ns] != [size, mtime] and _sha256(path) != digest:
                return f"{rel} changed"
        except (OSError, ValueError, TypeError):
            return f"{rel} unreadable"
    return Manifest(manifest, hashlib.sha256(text).hexdigest())


def configure(index_url: str | None = None, offline: bool = False) -> None:
    """The command's `--index-url` and `--offline` (no download, no look-up)."""
    _OPTIONS.update(index_url=index_url, offline=offline)


def offline() -> bool:
    return bool(_OPTIONS["offline"])


def _settings():
    from driftaudit.sources.index_settings import index_settings

    return index_settings(_OPTIONS["index_url"])  # type: ignore[arg-type]


def source() -> str:
    """What the settings read releases from (indexes and find-links, without
    credentials): `latest` is remembered per source."""
    from driftaudit.sources.simple_api import redact

    settings = _settings()
    return " ".join(redact(url) for url in (*settings.indexes, *settings.find_links))


def _listing():
    """sglang's files on the index (and find-links) the settings name."""
    from driftaudit.sources.simple_api import Client, Listing

    return Listing(Client(_settings()), PROJECT)


def _releases(listing) -> dict[Version, list]:
    """Version -> its wheels of sglang in `listing` (a file whose name does not parse, or
    of another project, is left out)."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    found: dict[Version, list] = {}
    for file in listing.files:
        if not file.filename.endswith(".whl"):
            continue
        try:
            name, version, _build, _tags = parse_wheel_filename(file.filename)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if name == canonicalize_name(PROJECT):
            found.setdefault(version, []).append(file)
    return found


def choose_wheel(wheels: list):
    """The wheel to read: the one this interpreter would install (its best tag, as
    `packaging.tags` ranks them), else any (a manylinux wheel on a Mac: the Python
    source inside is the same on every platform); not yanked before yanked."""
    from packaging.tags import sys_tags
    from packaging.utils import parse_wheel_filename

    rank = {tag: i for i, tag in enumerate(sys_tags())}
    worst = len(rank)

    def key(file):
        tags = parse_wheel_filename(file.filename)[3]
        best = min((rank.get(tag, worst) for tag in tags), default=worst)
        pure = any(tag.platform == "any" for tag in tags)
        return (file.yanked, best, not pure, file.filename)

    return min(wheels, key=key) if wheels else None


def _shown(versions: list[Version], at_most: int = 15) -> str:
    newest = sorted(versions, reverse=True)
    return ", ".join(str(v) for v in newest[:at_most]) + (" ..." if len(newest) > at_most else "")


def _unreachable(listing) -> str:
    return "; ".join(listing.problems[:2]) + (" ..." if len(listing.problems) > 2 else "")


def _download_wheel(version: str, dest: Path) -> tuple[Path, str]:
    """(the wheel of sglang==version, its sha256), saved in `dest`."""
    listing = _listing()
    releases = _releases(listing)
    wheel = choose_wheel(releases.get(Version(version), []))
    if wheel is None:
        if listing.problems and not releases:
            raise DriftauditError(
                f"could not download sglang=={version}: cannot read the package index "
                f"({_unreachable(listing)})"
            )
        available = [v for v, files in releases.items() if not all(f.yanked for f in files)]
        raise DriftauditError(
            f"unknown sglang version {version!r}; available: {_shown(available) or 'none'}"
        )
    if wheel.yanked:
        print(f"driftaudit: warning: sglang {version} is yanked from the index", file=sys.stderr)
    from driftaudit.sources.simple_api import download

    return download(listing.client, wheel, dest)


def available_versions() -> list[str]:
    """sglang's versions on the package index with a wheel not yanked, newest first;
    an error when the index cannot be read at all."""
    listing = _listing()
    releases = _releases(listing)
    if listing.problems and not releases:
        raise DriftauditError(f"cannot read the package index ({_unreachable(listing)})")
    usable = [v for v, files in releases.items() if not all(f.yanked for f in files)]
    return [str(v) for v in sorted(usable, reverse=True)]


def _unpack(wheel: Path, dest: Path) -> None:
    """Extract the `sglang` package and the dist-info metadata, nothing else."""
    import zipfile

    dest.mkdir(parents=True)
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.startswith("sglang/") or name.endswith(".dist-info/METADATA"):
                    zf.extract(name, dest)
    except zipfile.BadZipFile as exc:
        raise DriftauditError(f"downloaded wheel {wheel.name} is not a valid zip: {exc}") from None
