"""Which files make up a consumer, and the module name of each."""

from __future__ import annotations

import os
from pathlib import Path

SKIP_DIRS = {
    ".git",
    ".hg",
    ".venv",
    "venv",
    "env",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
    ".tox",
    ".nox",
    ".eggs",
    "site-packages",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}


def python_files(root: Path, exclude: list[str] | None = None) -> list[Path]:
    """Every .py file under root, sorted, outside virtualenvs, caches and excluded globs."""
    exclude = exclude or []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = Path(dirpath) / name
                rel = path.relative_to(root).as_posix()
                if not any(Path(rel).match(pattern) for pattern in exclude):
                    found.append(path)
    return found


def module_name(root: Path, path: Path) -> str:
    """Dotted module name of a consumer file (a `src/` layout is looked through)."""
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
