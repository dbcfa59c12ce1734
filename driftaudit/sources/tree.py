"""A located sglang source tree: where the `sglang` package lies and what it is."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import PathDistribution

_VERSION_FILES = ("_version.py", "version.py")  # setuptools-scm's (0.5.9 on), the literal
_MAX_VERSION_FILE = 1 << 20


@dataclass(frozen=True)
class Manifest:
    """What a release's unpack holds, as just verified: {posix path relative to the root:
    [size, mtime_ns, sha256]} of every file, and the sha256 of the manifest's text (it
    stands for the tree's content)."""

    files: dict[str, list]
    digest: str


@dataclass(frozen=True)
class Provenance:
    """Where a compare's spec was written: `source` is "command line", "config" (the
    consumer's `[tool.driftaudit]`) or "pin" (--old read from the consumer's sglang pin
    at `path`:`line`, relative to the consumer root)."""

    source: str
    path: str | None = None
    line: int | None = None

    @property
    def pin(self) -> dict | None:
        """The report contract's `pin`: {"path", "line"}, or None when not a pin."""
        if self.path is None or self.line is None:
            return None
        return {"path": self.path, "line": self.line}

    @property
    def where(self) -> str | None:
        return None if self.pin is None else f"{self.path}:{self.line}"

    def label(self) -> str:
        """For people: "pinned at pyproject.toml:5", "from the config" or ""."""
        if self.where is not None:
            return f"pinned at {self.where}"
        return "from the config" if self.source == "config" else ""


@dataclass
class SourceTree:
    spec: str  # what the user wrote
    origin: str  # index | directory | git | installed
    root: Path  # the folder that contains the `sglang` package
    version: str | None = None
    manifest: Manifest | None = None  # a release from the index: its verified files
    # where the spec was written (a compare sets it; a diff does not)
    provenance: Provenance | None = None
    # a tree in the cache: this run's hold on it (`sources/in_use.py`), kept while it lives
    in_use: object = field(default=None, repr=False, compare=False)

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

    def report(self) -> dict:
        """`describe()` and, when known, where the spec came from: `source` and `pin`
        (null unless --old was read from a pin), as the report contract shows them."""
        if self.provenance is None:
            return self.describe()
        return self.describe() | {"source": self.provenance.source, "pin": self.provenance.pin}


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
    """The version the tree itself states: its dist-info's METADATA, else the
    `__version__` literal of `sglang/_version.py` (what setuptools-scm writes into a
    build or an editable install: sglang 0.5.9 on) or `sglang/version.py` (0.5.8 and
    older), else a static `[project] version` in `pyproject.toml` beside the package.
    None when it states none (a checkout of 0.5.9 or later that was never built: its
    version comes from git tags, see sources/git.py)."""
    info = _dist_info(root)
    version = _metadata_version(info) if info is not None else None
    if version:
        return version
    for name in _VERSION_FILES:
        version = _literal_version(root / "sglang" / name)
        if version:
            return version
    return _pyproject_version(root / "pyproject.toml")


def _read_small(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_VERSION_FILE + 1)
    except OSError:
        return None
    return data if len(data) <= _MAX_VERSION_FILE else None


def _literal_version(path: Path) -> str | None:
    """A module-level `__version__ = "x"` in every spelling: chained (`__version__ =
    version = "x"`, `version = __version__ = 'x'`), annotated, any quotes; not one in a
    fallback branch (`try: from ._version import ...` / `except: __version__ = ...`)."""
    data = _read_small(path)
    if data is None:
        return None
    import ast

    try:
        module = ast.parse(data)
    except (SyntaxError, ValueError):
        return None
    found = None
    for node in module.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__version__" for t in targets):
            found = None  # the last binding counts
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found = value.value.strip()
    return _stated(found)


def _pyproject_version(path: Path) -> str | None:
    data = _read_small(path)
    if data is None:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        project = tomllib.loads(data.decode("utf-8")).get("project")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(project, dict) or "version" in (project.get("dynamic") or ()):
        return None
    version = project.get("version")
    return _stated(version if isinstance(version, str) else None)


def _stated(version: str | None) -> str | None:
    """`version` unless it is setuptools-scm's stand-in for "unknown" (0.0.0, 0.0.0.dev0:
    a build without git metadata)."""
    if not version:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        if Version(version).release == (0, 0, 0):
            return None
    except InvalidVersion:
        pass  # kept: the pipeline says it does not parse
    return version


def unversioned_warning(tree: SourceTree) -> str | None:
    """What a compare says of a tree that states no version: the checks that select by
    it are off. None for a versioned tree."""
    if tree.version is not None:
        return None
    return (
        f"sglang {tree.spec} states no version (no dist-info, _version.py or version.py "
        "literal, pyproject.toml version or v* git tag): the packs (DA901, DA902) are "
        "off and sglang version guards are not applied"
    )


def has_metadata(root: Path) -> bool:
    """Whether the tree has a wheel's dist-info METADATA (its Requires-Dist)."""
    return _dist_info(root) is not None


def tree_from_root(
    spec: str, origin: str, root: Path, manifest: Manifest | None = None
) -> SourceTree:
    return SourceTree(spec, origin, root, read_version(root), manifest)
