"""The text-edit path: a span of one line (1-based line, 1-based character column, the old
text) replaced by new text, in files that are not Python (shell scripts, YAML/TOML/JSON
configs, Dockerfiles). An edit applies only where its old text stands at its place as a
whole word; edits that overlap are skipped; the result must still parse as its format
(`formats.py`), or nothing in the file changes. Written by `write.py`, all or nothing,
like the Python rewrites.
"""

from __future__ import annotations

import re

from driftaudit.fix.edits import Edit
from driftaudit.fix.formats import format_problem
from driftaudit.fix.source import Source

_LINE_ENDS = re.compile(r"\r\n|\r|\n")  # ast's line ends (str.splitlines knows more)

KIND = "replace-text"
_WORD = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def bounded(text: str, start: int, old: str) -> bool:
    """`old` stands at `start` as a whole flag or name: not the head of a longer one
    (`--x` in `--x-y`) nor the tail (`x` in `sglang_x`)."""
    end = start + len(old)
    if start < 0 or text[start:end] != old:
        return False
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if before and (before in _WORD or (before == "-" and not old.startswith("-"))):
        return False
    return not (after and (after in _WORD or after == "-"))


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (line ends as ast counts them: \\r\\n, \\r, \\n)."""
    return [0] + [m.end() for m in _LINE_ENDS.finditer(text)]


def splice(text: str, edits: list[Edit]) -> tuple[str, list[Edit], list[tuple[Edit, str]]]:
    """Apply replace-text edits to a text: (new text, applied, skipped with why)."""
    starts = line_starts(text)
    placed, skipped = [], []
    for edit in edits:
        old, new = edit.params["old"], edit.params["new"]
        if not 1 <= edit.line <= len(starts):
            skipped.append((edit, "no such line"))
            continue
        start = starts[edit.line - 1] + edit.column - 1
        line_end = starts[edit.line] if edit.line < len(starts) else len(text)
        if start + len(old) > line_end or not bounded(text, start, old):
            skipped.append((edit, f"`{old}` is not at that place any more"))
            continue
        placed.append((start, start + len(old), new, edit))
    placed.sort(key=lambda p: p[0])
    kept, end = [], -1
    for item in placed:
        if item[0] < end:
            skipped.append((item[3], "overlaps another edit"))
            continue
        kept.append(item)
        end = item[1]
    pieces, end = [], 0  # one join: a slice per edit copied the text once per edit
    for start, stop, new, _ in kept:
        pieces += [text[end:start], new]
        end = stop
    pieces.append(text[end:])
    return "".join(pieces), [item[3] for item in kept], skipped


def rewrite_text(
    path: str, source: Source, edits: list[Edit]
) -> tuple[str, list[Edit], list[tuple[Edit, str]]]:
    """A non-Python file's replace-text edits: (new text, applied, skipped with why); the
    text unchanged when the result would not parse as the file's format."""
    others = [(e, f"`{e.kind}` applies to Python files only") for e in edits if e.kind != KIND]
    after, applied, skipped = splice(source.text, [e for e in edits if e.kind == KIND])
    why = format_problem(path, source.text, after) if applied else None
    if why is None:
        try:
            source.encode(after)
        except UnicodeEncodeError as exc:
            why = f"cannot encode the result: {exc}"
    if why is not None:
        reason = f"the result would not parse ({why}); left unchanged"
        return source.text, [], [(e, reason) for e in edits]
    return after, applied, skipped + others
