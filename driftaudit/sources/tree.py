"""A located sglang source tree: where the `sglang` package lies and what it is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.metadata import PathDistribution
from pathlib import Path

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


def distribution(root: Path) -> PathDistribution | None:
    """The wheel's `sglang-*.dist-info` next to the package (first one), if any: its
    `.version` and `.requires` (Requires-Dist) come from METADATA."""
    for info in sorted(root.glob("sglang-*.dist-info")):
        if (info / "METADATA").is_file():
            return PathDistribution(info)
    return None


def read_version(root: Path) -> str | None:
    dist = distribution(root)
    if dist is not None and dist.version:
        return dist.version
    version_file = root / "sglang" / "version.py"
    if version_file.is_file():
        match = _VERSION_RE.search(version_file.read_text(errors="replace"))
        if match:
            return match.group(1)
    return None


def tree_from_root(spec: str, origin: str, root: Path) -> SourceTree:
    return SourceTree(spec, origin, root, read_version(root))
