"""A located sglang source tree: where the `sglang` package lies and what it is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import PathDistribution

_VERSION_RE = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.M)


@dataclass
class SourceTree:
    spec: str  # what the user wrote
    origin: str  # index | directory | git | installed
    root: Path  # the folder that contains the `sglang` package
    version: str | None = None

    @property
    def package_dir(self) -> Path:
        return self.root / "sglang"

    def describe(self) -> dict:
        return {
            "spec": self.spec,
            "version": self.version,
            "origin": self.origin,
            "path": str(self.root),
        }


def find_package_root(directory: Path) -> Path | None:
    """The folder holding `sglang/` for a checkout, a `python/` dir or the package itself."""
    for candidate in (directory, directory / "python"):
        if (candidate / "sglang" / "__init__.py").is_file():
            return candidate
    if directory.name == "sglang" and (directory / "__init__.py").is_file():
        return directory.parent
    return None


def _dist_info(root: Path) -> Path | None:
    """The wheel's `sglang-*.dist-info` next to the package (first one with METADATA)."""
    for info in sorted(root.glob("sglang-*.dist-info")):
        if (info / "METADATA").is_file():
            return info
    return None


def distribution(root: Path) -> PathDistribution | None:
    """The wheel's dist-info as a distribution, if any: its `.requires` (Requires-Dist)
    come from METADATA."""
    from importlib.metadata import PathDistribution  # 7 ms with email: not on every run

    info = _dist_info(root)
    return PathDistribution(info) if info is not None else None


def _metadata_version(info: Path) -> str | None:
    """The `Version` header of a dist-info's METADATA: read from the header lines (what
    importlib.metadata gives, without importing it and the email parser each run)."""
    try:
        text = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        name, colon, value = line.partition(":")
        if colon and name.strip().lower() == "version" and value.strip():
            return value.strip()
    return None


def read_version(root: Path) -> str | None:
    info = _dist_info(root)
    version = _metadata_version(info) if info is not None else None
    if version:
        return version
    version_file = root / "sglang" / "version.py"
    if version_file.is_file():
        match = _VERSION_RE.search(version_file.read_text(errors="replace"))
        if match:
            return match.group(1)
    return None


def tree_from_root(spec: str, origin: str, root: Path) -> SourceTree:
    return SourceTree(spec, origin, root, read_version(root))
