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
from driftaudit.similarity import compare
from driftaudit.snapshot.fingerprints import FunctionPrint, find_function

MAX_MOVED_CANDIDATES = 10  # modules of the new tree defining the same top-level name
MIN_MOVED_SIMILARITY = 0.5  # a moved function still looks like the original

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class BodyChanged(Change):
    """The code of `symbol` changed (or the function is gone from the new release)."""

    diff: str = ""  # unified diff old -> new, paths and line numbers of the real files
    changed_lines: set[int] = field(default_factory=set)  # old lines the change touches
    added: int = 0
    removed: int = 0
    gone: bool = False
    moved_to: str = ""  # the module that defines it now, when it moved

    code = codes.COPIED_CODE_DRIFTED

    def explain(self) -> str:
        if self.gone:
            return f"`{short_name(self.symbol)}` is gone from the new release"
        if self.moved_to:
            return f"`{short_name(self.symbol)}` moved to `{self.moved_to}`"
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
    found = _in_new_tree(new_snapshot, original)
    if found is None:
        return BodyChanged(original.symbol, old_location, None, gone=True)
    new, new_module, new_code = found
    if new.tokens == original.tokens:
        return None  # the same code (perhaps in another module): nothing to port
    old_source = (old_snapshot.source(original.module) or "").splitlines()
    new_path = new_snapshot.files[new_module]
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
        moved_to=new_module if new_module != original.module else "",
    )


def _in_new_tree(new_snapshot, original: FunctionPrint):
    """The function in the new tree: same module and qualified name, else (a module split
    or renamed) a definition of the same top-level name elsewhere, the closest one."""
    code = new_snapshot.source(original.module)
    found = find_function(code, original.qualname) if code is not None else None
    if found is not None:
        return found, original.module, code
    best = None
    top = original.qualname.split(".")[0]
    for module in new_snapshot.definers([top])[top][:MAX_MOVED_CANDIDATES]:
        code = new_snapshot.source(module) or ""
        candidate = find_function(code, original.qualname)
        if candidate is None:
            continue
        similarity = compare(candidate.tokens, original.tokens, original.lines)
        ratio = similarity.ratio if similarity else 0.0
        if ratio >= MIN_MOVED_SIMILARITY and (best is None or ratio > best[0]):
            best = (ratio, candidate, module, code)
    return best[1:] if best else None
