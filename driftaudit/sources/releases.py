"""The releases between two versions: the index's listing (the one `latest` reads,
`index.available_versions`), final releases only, in packaging's order, each fetched as
`resolve_spec` fetches a release (cached, verified), several at once.

The listing is kept a day per index (`releases-sglang.json`), as `latest` keeps its
answer: a warm run asks the network nothing. Offline, the releases already unpacked in
the cache stand for the listing.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.version import Version

from driftaudit.errors import DriftauditError
from driftaudit.progress import step
from driftaudit.sources import index
from driftaudit.sources.latest import MAX_AGE_SECONDS, cached_releases, final_releases
from driftaudit.sources.tree import SourceTree

CACHE_FILE = "releases-sglang.json"
# downloads are network-bound and an unpack's hashing and inflating release the GIL:
# threads, a few at a time (each wheel is tens of MB)
_FETCHERS = 4


def listed_releases(cache_dir: Path, offline: bool, now: float | None = None) -> list[str]:
    """sglang's final releases on the index (offline: in the cache), oldest first."""
    if offline:
        return final_releases(cached_releases(cache_dir))
    now = time.time() if now is None else now
    record = cache_dir / CACHE_FILE
    source = index.source()
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
        if (
            0 <= now - float(kept["checked"]) < MAX_AGE_SECONDS
            and kept.get("index") == source
            and isinstance(kept["versions"], list)
            and all(isinstance(v, str) and index.looks_like_version(v) for v in kept["versions"])
        ):
            return final_releases(kept["versions"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    versions = final_releases(index.available_versions())
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        entry = {"checked": now, "index": source, "versions": versions}
        record.write_text(json.dumps(entry) + "\n")
    except OSError:
        pass  # not kept: the next run asks again
    return versions


def releases_between(
    old: str, new: str, cache_dir: Path, offline: bool, include_old: bool = False
) -> list[str]:
    """The final releases after `old` (or from it, `include_old`) up to `new`, oldest
    first; `old` and `new` themselves are in it whether listed or not."""
    low, high = Version(old), Version(new)
    if low > high:
        raise DriftauditError(f"--old {old} is newer than --new {new}")
    listed = listed_releases(cache_dir, offline)
    inside = [v for v in listed if low < Version(v) < high]
    return ([old] if include_old else []) + inside + ([new] if low != high else [])


def releases_in(spec: str, cache_dir: Path, offline: bool, what: str = "supports") -> list[str]:
    """The final releases of the listing inside the specifier set `spec` (a supported
    range: `>=0.5.22,<=0.5.23`), oldest first; an error when `spec` is not a specifier
    set or no listed release is in it."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(spec)
    except InvalidSpecifier:
        raise DriftauditError(
            f"{what} {spec!r} is not a version range (expected e.g. '>=0.5.22,<=0.5.23')"
        ) from None
    if not str(specifier):
        raise DriftauditError(f"{what} must not be empty (expected e.g. '>=0.5.22,<=0.5.23')")
    listed = listed_releases(cache_dir, offline)
    inside = [v for v in listed if specifier.contains(v, prereleases=False)]
    if not inside:
        where = "cached" if offline else "listed on the index"
        raise DriftauditError(f"{what} {spec!r}: no final sglang release {where} is in it")
    return inside


def fetch_releases(versions: list[str], cache_dir: Path) -> list[SourceTree]:
    """Each release's tree (`resolve_spec`), fetched a few at once; in order."""
    from driftaudit.sources.resolve import resolve_spec

    if not versions:
        return []
    step(f"fetching {len(versions)} sglang releases ({versions[0]} .. {versions[-1]})")
    workers = min(_FETCHERS, len(versions))
    if workers == 1:
        return [resolve_spec(v, cache_dir) for v in versions]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda v: resolve_spec(v, cache_dir), versions))
