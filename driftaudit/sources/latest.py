"""`latest`: the newest sglang release on the package index (pre-releases excluded).

The index is asked at most once a day (its project listing, `index.available_versions`);
the answer is cached with its timestamp and the index it came from. A record is taken
only when it names a final release (not a directory, a `git:` spec or a pre-release: the
cache directory is not the user's word) of the same index, less than a day old. Offline,
the newest release already unpacked in the cache is taken instead.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

from driftaudit.errors import DriftauditError
from driftaudit.sources import index

LATEST = "latest"
MAX_AGE_SECONDS = 24 * 60 * 60
CACHE_FILE = "latest-sglang.json"


def final_releases(versions: list[str]) -> list[str]:
    """The final releases of `versions` (no rc, dev, alpha or beta), oldest first
    (packaging ordering)."""
    parsed = []
    for text in versions:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if not version.is_prerelease:
            parsed.append((version, text))
    return [text for _, text in sorted(parsed)]


def newest_release(versions: list[str]) -> str | None:
    """The highest final release (packaging ordering; rc/dev/alpha/beta skipped)."""
    finals = final_releases(versions)
    return finals[-1] if finals else None


def cached_releases(cache_dir: Path) -> list[str]:
    """Releases unpacked in the cache (complete ones only)."""
    sources = cache_dir / "sources"
    if not sources.is_dir():
        return []
    return [
        d.name.removeprefix("sglang-")
        for d in sources.glob("sglang-*")
        if (d / "sglang").is_dir() and (d / index.COMPLETE).is_file()
    ]


def latest_release(cache_dir: Path, offline: bool = False, now: float | None = None) -> str:
    now = time.time() if now is None else now
    if offline:
        version = newest_release(cached_releases(cache_dir))
        if version is None:
            raise DriftauditError("--offline: no sglang release in the cache to take as 'latest'")
        return version
    record = cache_dir / CACHE_FILE
    source = index.source()
    cached = _cached(record, source, now)
    if cached is not None:
        return cached
    version = newest_release(index.available_versions())
    if version is None:
        raise DriftauditError(
            "cannot find the latest sglang release on the package index "
            "(no network? --offline takes the newest cached release)"
        )
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        entry = {"checked": now, "version": version, "index": source}
        record.write_text(json.dumps(entry) + "\n")
    except OSError:
        pass  # a record that cannot be written only costs another look-up
    return version


def _cached(record: Path, source: str, now: float) -> str | None:
    """The version a record holds, if it is a final release the same index gave less
    than a day ago."""
    try:
        cached = json.loads(record.read_text(encoding="utf-8"))
        checked, version = float(cached["checked"]), cached["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (0 <= now - checked < MAX_AGE_SECONDS) or cached.get("index") != source:
        return None
    if not isinstance(version, str) or not index.looks_like_version(version):
        return None
    try:
        index.release_version(version)
    except DriftauditError:
        return None
    return version if newest_release([version]) == version else None


def resolve_latest(spec: str | None, cache_dir: Path, offline: bool = False) -> str | None:
    """`latest` -> the version it stands for; any other spec unchanged (for a caller that
    needs the version before resolving: `resolve_spec` takes `latest` itself)."""
    if spec is not None and spec.strip().lower() == LATEST:
        return latest_release(cache_dir, offline)
    return spec
