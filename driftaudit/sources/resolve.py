"""Dispatch a version spec to the source that provides it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from driftaudit.errors import DriftauditError
from driftaudit.sources.index import fetch_release, looks_like_version, offline, release_version
from driftaudit.sources.latest import LATEST, latest_release
from driftaudit.sources.tree import SourceTree, find_package_root, tree_from_root


def resolve_spec(
    spec: str, cache_dir: Path, allow_paths: bool = True, consumer: Path | None = None
) -> SourceTree:
    """The tree a spec names (`latest`: the release it stands for). `allow_paths=False`
    (a spec from the consumer's own config, without --trust-config-paths) admits only
    releases, `latest` and `installed`: a directory or git spec would have driftaudit
    read, or run git in, whatever the consumer commits.
    """
    spec = spec.strip()
    if spec == "installed":
        return _installed(spec)
    if spec.lower() == LATEST:  # a release: also from the consumer's config
        return _release(spec, latest_release(cache_dir, offline()), cache_dir)
    if not allow_paths and not looks_like_version(spec):
        raise DriftauditError(
            f"the consumer's config asks for {spec!r}, a local path; only release versions "
            "are read from config unless --trust-config-paths is given"
        )
    if spec.startswith("git:"):
        from driftaudit.sources.git import export_ref  # subprocess, tempfile: git specs only

        root, tagged, held = export_ref(spec, cache_dir, consumer)
        tree = tree_from_root(spec, "git", root)
        tree.version = tree.version or tagged  # what the tree states first
        tree.in_use = held
        return tree
    path = Path(spec).expanduser()
    if allow_paths and path.is_dir():
        package = find_package_root(path)
        if package is None:
            raise DriftauditError(f"no sglang package found in directory {spec!r}")
        return tree_from_root(spec, "directory", package)
    if looks_like_version(spec):
        return _release(spec, release_version(spec), cache_dir)
    raise DriftauditError(
        f"cannot resolve sglang spec {spec!r}: expected a version (0.5.14), a directory, "
        "git:PATH@REF or 'installed'"
    )


def _release(spec: str, version: str, cache_dir: Path) -> SourceTree:
    root, manifest, held = fetch_release(version, cache_dir)
    tree = tree_from_root(spec, "index", root, manifest)
    tree.version = tree.version or version
    tree.in_use = held
    return tree


def _installed(spec: str) -> SourceTree:
    found = importlib.util.find_spec("sglang")
    if found is None or not found.submodule_search_locations:
        raise DriftauditError("'installed': no sglang package is importable here")
    package_dir = Path(list(found.submodule_search_locations)[0])
    tree = tree_from_root(spec, "installed", package_dir.parent)
    if tree.version is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            tree.version = version("sglang")
        except PackageNotFoundError:
            pass
    return tree
