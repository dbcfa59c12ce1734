"""The text of a consumer file's lines, read once per file version (for fingerprints and
regions). Only a regular file in the consumer tree is read (a path from a baseline entry
is the consumer's word: a symlink out of the tree or a device reads as no lines)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from driftaudit.confined import read_bytes
from driftaudit.errors import DriftauditError

_WORD = re.compile(r"[\w.]+")


@lru_cache(maxsize=256)
def _lines(root: Path, path: Path, stamp: tuple[int, int]) -> tuple[str, ...]:
    try:
        data = read_bytes(root, path, "file")
    except DriftauditError:
        return ()
    return tuple(data.decode("utf-8", errors="replace").splitlines()) if data else ()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)
    return stat.st_mtime_ns, stat.st_size


def line_text(root: Path, relpath: str, line: int) -> str:
    """The line's text ('' when the file or line does not exist, or is not the tree's)."""
    if os.path.isabs(relpath) or ".." in relpath.replace("\\", "/").split("/"):
        return ""
    root = Path(os.path.realpath(root))
    path = root / relpath
    lines = _lines(root, path, _stamp(path))
    return lines[line - 1] if 0 < line <= len(lines) else ""


def word_end(text: str, column: int) -> int:
    """1-based column just past the dotted name starting at `column` (a point widened
    to the word, for SARIF and annotation regions); `column` itself if there is none."""
    match = _WORD.match(text, max(column - 1, 0))
    return match.end() + 1 if match else column


def clear_cache() -> None:
    _lines.cache_clear()
