"""A function's code changed between two releases: the change a copy of it has to port.

The body is compared normalised (`similarity.function_tokens`: comments, docstrings and
formatting do not count); the diff shown is the plain unified diff of the two sources,
with the line numbers of the real files, so it reads (and applies) like an upstream patch.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from driftaudit import codes
from driftaudit.drift.changes import Change, short_name
from driftaudit.snapshot.fingerprints import FunctionPrint, find_function

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class BodyChanged(Change):
    """The code of `symbol` changed (or the function is gone from the new release)."""

    diff: str = ""  # unified diff old -> new, paths and line numbers of the real files
    changed_lines: set[int] = field(default_factory=set)  # old lines the change touches
    added: int = 0
    removed: int = 0
    gone: bool = False

    code = codes.COPIED_CODE_DRIFTED

    def explain(self) -> str:
        if self.gone:
            return f"`{short_name(self.symbol)}` is gone from the new release"
        return f"`{short_name(self.symbol)}` changed (+{self.added} -{self.removed} lines)"


def _unified(
    old_path: str,
    old_lines: list[str],
    old_start: int,
    new_path: str,
    new_lines: list[str],
    new_start: int,
) -> tuple[str, set[int], int, int]:
    """The diff of two source segments, renumbered to the files' lines; and the old lines
    it changes (a pure insertion counts the line before it), lines added and removed."""
    out = []
    changed: set[int] = set()
    added = removed = 0
    old_line = old_start
    for line in difflib.unified_diff(
        old_lines, new_lines, f"a/{old_path}", f"b/{new_path}", lineterm=""
    ):
        match = _HUNK.match(line)
        if match:
            a, b, c, d = match.groups()
            old_line = int(a) + old_start - 1
            line = f"@@ -{old_line},{b or 1} +{int(c) + new_start - 1},{d or 1} @@"
        elif line.startswith(("---", "+++")):
            pass
        elif line.startswith("-"):
            changed.add(old_line)
            removed += 1
            old_line += 1
        elif line.startswith("+"):
            changed.add(max(old_line - 1, old_start))
            added += 1
        else:
            old_line += 1
        out.append(line)
    return "\n".join(out) + "\n", changed, added, removed


def body_change(old_snapshot, new_snapshot, original: FunctionPrint) -> BodyChanged | None:
    """What changed in `original` (a function of the old tree), or None when its
    normalised body is the same in the new tree. The function is looked up in the new tree
    by module and qualified name."""
    old_path = old_snapshot.files[original.module]
    old_location = f"{old_path}:{original.lineno}"
    new_code = new_snapshot.source(original.module)
    new = find_function(new_code, original.qualname) if new_code is not None else None
    if new is None:
        return BodyChanged(original.symbol, old_location, None, gone=True)
    if new.tokens == original.tokens:
        return None
    old_source = (old_snapshot.source(original.module) or "").splitlines()
    new_path = new_snapshot.files[original.module]
    diff, changed, added, removed = _unified(
        old_path,
        old_source[original.start - 1 : original.end],
        original.start,
        new_path,
        new_code.splitlines()[new.start - 1 : new.end],
        new.start,
    )
    return BodyChanged(
        original.symbol,
        old_location,
        f"{new_path}:{new.lineno}",
        diff=diff,
        changed_lines=changed,
        added=added,
        removed=removed,
    )
