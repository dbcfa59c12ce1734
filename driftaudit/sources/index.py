"""Releases from the package index: `pip download` a wheel and unpack its Python source.

sglang wheels carry the whole source. Since 0.5.11 they are manylinux x86_64 only,
one per CPython, so a wheel is asked for explicitly by platform tag; the source
inside is the same on every platform, so any tag will do.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    import subprocess

from driftaudit.errors import DriftauditError
from driftaudit.progress import step

_WHEEL_TAGS = [
    ("manylinux_2_34_x86_64", "3.11"),
    ("manylinux_2_34_x86_64", "3.12"),
    ("manylinux_2_28_x86_64", "3.11"),
    ("manylinux_2_17_x86_64", "3.10"),
]
_COMPLETE = ".driftaudit-complete"
_MANIFEST = ".driftaudit-manifest.json"  # relpath -> [size, mtime_ns, sha256] of the unpack
# Only decides "is this meant as a version?" (a cheap, linear test: no nested repetition);
# `parse_version` validates it with packaging.
_LOOKS_LIKE_VERSION_RE = re.compile(r"^v?\d[\w.!+-]*$")
_MAX_VERSION_LENGTH = 64
# root -> the sha256 of the manifest a release was just verified against: what its files
# hold, by path (the findings cache's tree digest: `verified_digest`)
_VERIFIED: dict[str, str] = {}
# root -> its manifest ({posix path: [size, mtime_ns, sha256]}), verified or just written
# by this process: the snapshot lists the tree's modules and their digests from it
_MANIFESTS: dict[str, dict[str, list]] = {}


def looks_like_version(spec: str) -> bool:
    return bool(_LOOKS_LIKE_VERSION_RE.match(spec))


def parse_version(spec: str) -> str:
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


def fetch_release(version: str, cache_dir: Path) -> Path:
    """Unpacked root of sglang==version (holds `sglang/`); offline once cached.

    A cached release is checked against the manifest written when it was unpacked
    (sizes and mtimes; a file is hashed only when they differ): a tree that lost or
    changed files is unpacked again, never read as it is.
    """
    version = parse_version(version)
    target = release_dir(cache_dir, version)
    if (target / _COMPLETE).is_file() and (target / "sglang").is_dir():
        problem = verify_manifest(target)
        if problem is None:
            return target
        print(
            f"driftaudit: warning: cached sglang {version} is damaged ({problem}); "
            "fetching it again",
            file=sys.stderr,
        )
    if target.exists():  # a partial, corrupt or damaged unpack: start again
        _discard(target)
    import tempfile  # a download: the rare path (a warm run imports none of it)

    target.parent.mkdir(parents=True, exist_ok=True)
    step(f"downloading sglang=={version} from the package index")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        wheel = _download_wheel(version, Path(tmp))
        staging = Path(tmp) / "unpacked"
        _unpack(wheel, staging)
        write_manifest(staging)
        (staging / _COMPLETE).write_text(wheel.name + "\n")
        publish(staging, target)
    verify_manifest(target)  # keeps its listing for the snapshot (stats only: no hashing)
    return target


def publish(staging: Path, target: Path) -> None:
    """Move a finished tree into place; another run that got there first wins."""
    try:
        staging.rename(target)
    except OSError:
        if not (target / _COMPLETE).is_file():
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
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def write_manifest(root: Path) -> None:
    manifest = {}
    for rel, path in _walk_files(root):
        stat = os.stat(path)
        manifest[rel] = [stat.st_size, stat.st_mtime_ns, _sha256(path)]
    (root / _MANIFEST).write_text(json.dumps(manifest, separators=(",", ":")))


def verify_manifest(root: Path) -> str | None:
    """None if the tree is what was unpacked, else what is wrong with it.

    A release cached before manifests existed gets one now (trusted on first use).
    """
    try:
        text = (root / _MANIFEST).read_bytes()
        manifest = json.loads(text)
    except FileNotFoundError:
        try:
            write_manifest(root)
        except OSError:
            pass  # a read-only cache: still usable
        return None
    except (OSError, ValueError):
        return "its manifest is unreadable"
    if not isinstance(manifest, dict):
        return "its manifest is unreadable"
    _VERIFIED.pop(os.fspath(root), None)
    _MANIFESTS.pop(os.fspath(root), None)
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
    _VERIFIED[os.fspath(root)] = hashlib.sha256(text).hexdigest()
    _MANIFESTS[os.fspath(root)] = manifest
    return None


def verified_manifest(root: Path) -> dict[str, list] | None:
    """{posix path relative to `root`: [size, mtime_ns, sha256]} of every file of the
    release at `root`, if this process has just verified it (or unpacked it); None
    otherwise."""
    return _MANIFESTS.get(os.fspath(root))


def verified_digest(root: Path) -> str | None:
    """The sha256 of the manifest the release at `root` matches, if this process has just
    verified it (`verify_manifest`): every file's path and content digest, so it stands
    for the tree's content; None otherwise."""
    return _VERIFIED.get(os.fspath(root))


def _pip(*args: str) -> subprocess.CompletedProcess:
    import subprocess

    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"]
    return subprocess.run(cmd, capture_output=True, text=True)


def _download_wheel(version: str, dest: Path) -> Path:
    requirement = f"sglang=={version}"
    attempts = [
        [
            "--only-binary=:all:",
            "--platform",
            plat,
            "--python-version",
            py,
            "--implementation",
            "cp",
        ]
        for plat, py in _WHEEL_TAGS
    ]
    last = None
    for extra in attempts:
        last = _pip("download", "--no-deps", "-d", str(dest), *extra, requirement)
        wheels = list(dest.glob("sglang-*.whl"))
        if last.returncode == 0 and wheels:
            return wheels[0]
        if "No matching distribution" not in last.stderr and "from versions" not in last.stderr:
            break  # not a tag problem (network, index): trying other tags will not help
    available = available_versions()
    if available and version not in available:
        shown = ", ".join(available[:15]) + (" ..." if len(available) > 15 else "")
        raise DriftauditError(f"unknown sglang version {version!r}; available: {shown}")
    detail = (last.stderr.strip().splitlines() or ["pip download failed"])[-1] if last else ""
    raise DriftauditError(f"could not download sglang=={version}: {detail}")


def available_versions() -> list[str]:
    """Versions of sglang on the package index, newest first (empty if unknown)."""
    result = _pip("index", "versions", "sglang")
    match = re.search(r"Available versions:\s*(.+)", result.stdout)
    return [v.strip() for v in match.group(1).split(",")] if match else []


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
