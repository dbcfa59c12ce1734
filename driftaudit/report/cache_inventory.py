"""`driftaudit cache info|clean|prune` as text and as JSON: what `store/maintenance.py`
found in the cache directory and what it removed."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from driftaudit.store.maintenance import LATEST_FILE, SOURCES, Inventory, Outcome, Tree


def human(size: int) -> str:
    """1536 -> '1.5 KiB' (binary units, as pip's cache info)."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _when(stamp: float | None, now: float) -> str:
    if stamp is None:
        return "never"
    days = (now - stamp) / 86400
    ago = "today" if days < 1 else f"{int(days)} days ago"
    return f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(stamp))} ({ago})"


def info_lines(found: Inventory, now: float | None = None) -> Iterator[str]:
    """`driftaudit cache info` as text."""
    now = time.time() if now is None else now
    yield f"cache directory: {found.cache_dir}"
    if not found.exists:
        yield "  (does not exist: nothing cached)"
        return
    releases = [t for t in found.trees if t.kind == "release"]
    exports = [t for t in found.trees if t.kind == "git"]
    yield f"releases ({SOURCES}/sglang-*): {len(releases)}, {human(sum(t.size for t in releases))}"
    for tree in releases:
        link = "  (a symlink)" if tree.link else f"  last used {_when(tree.last_used, now)}"
        yield f"  {tree.version:<16} {human(tree.size):>11}{link}"
    yield f"git exports ({SOURCES}/git-*): {len(exports)}, {human(sum(t.size for t in exports))}"
    for tree in exports:
        link = "  (a symlink)" if tree.link else f"  last used {_when(tree.last_used, now)}"
        yield f"  {tree.name[:16]:<16} {human(tree.size):>11}{link}"
    if found.leftovers:
        size = sum(s for _, s in found.leftovers)
        yield f"leftovers of interrupted unpacks: {len(found.leftovers)}, {human(size)}"
    for store in found.stores:
        if store.problem:
            yield f"{store.name}: {human(store.size)} ({store.problem})"
            continue
        yield f"{store.name}: {human(store.size)}, {store.entries} entries"
        for ns in store.namespaces:
            mark = "" if ns.current else "  (not read by this driftaudit: prune removes it)"
            label = f"{ns.namespace}:{ns.version}"
            yield f"  {label:<16} {ns.entries:>7} entries {human(ns.size):>11}{mark}"
    if found.latest is not None:
        checked = found.latest.get("checked")
        when = _when(checked, now) if isinstance(checked, (int, float)) else "unknown"
        yield f"{LATEST_FILE}: latest = {found.latest.get('version')}, checked {when}"
    if found.unknown:
        shown = ", ".join(found.unknown[:8]) + (" ..." if len(found.unknown) > 8 else "")
        yield f"not driftaudit's (left alone, not counted): {shown}"
    yield f"total: {human(found.total)}"


def info_json(found: Inventory) -> dict:
    """`driftaudit cache info --format json` (sizes in bytes, times in seconds since
    the epoch)."""

    def tree(t: Tree) -> dict:
        return {"name": t.name, "version": t.version, "path": str(t.path), "bytes": t.size,
                "last_used": t.last_used, "symlink": t.link}  # fmt: skip

    return {
        "cache_dir": str(found.cache_dir),
        "exists": found.exists,
        "releases": [tree(t) for t in found.trees if t.kind == "release"],
        "git_exports": [tree(t) for t in found.trees if t.kind == "git"],
        "leftovers": [{"path": str(p), "bytes": s} for p, s in found.leftovers],
        "stores": [
            {
                "name": s.name,
                "path": str(s.path),
                "bytes": s.size,
                "entries": s.entries,
                "schema": s.schema,
                "problem": s.problem,
                "namespaces": [
                    {
                        "namespace": n.namespace,
                        "version": n.version,
                        "current": n.current,
                        "entries": n.entries,
                        "bytes": n.size,
                    }  # fmt: skip
                    for n in s.namespaces
                ],
            }
            for s in found.stores
        ],
        "latest": found.latest,
        "not_driftaudits": found.unknown,
        "total_bytes": found.total,
    }


def outcome_lines(outcome: Outcome, verb: Callable[[int], str]) -> Iterator[str]:
    """What was removed and skipped, then the space freed (`verb(n)`: the last line)."""
    for what, size in outcome.removed:
        yield f"removed {what} ({human(size)})"
    for what, why in outcome.skipped:
        yield f"skipped {what}: {why}"
    yield verb(outcome.freed)
