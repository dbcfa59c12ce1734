"""The text of a consumer file's lines, read once per file version (for fingerprints and
regions)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_WORD = re.compile(r"[\w.]+")


@lru_cache(maxsize=256)
def _lines(path: Path, stamp: tuple[int, int]) -> tuple[str, ...]:
    try:
        return tuple(path.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return ()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)
    return stat.st_mtime_ns, stat.st_size


def line_text(root: Path, relpath: str, line: int) -> str:
    """The line's text ('' when the file or line does not exist)."""
    path = (root / relpath).resolve()
    lines = _lines(path, _stamp(path))
    return lines[line - 1] if 0 < line <= len(lines) else ""


def word_end(text: str, column: int) -> int:
    """1-based column just past the dotted name starting at `column` (a point widened
    to the word, for SARIF and annotation regions); `column` itself if there is none."""
    match = _WORD.match(text, max(column - 1, 0))
    return match.end() + 1 if match else column


def clear_cache() -> None:
    _lines.cache_clear()
