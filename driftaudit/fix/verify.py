"""The re-audit's verdict: which fixes a second audit of the fixed files confirms.

A fix (every edit one finding asked for, kept or held back together) is confirmed when
the finding it fixes is gone and nothing new is reported. A finding of either audit is
placed in the old file: on an unchanged line, that line (mapped through the lines the
fix left as they were, `difflib`); on lines the fixes changed, that block of changed
lines. Findings of the same rule and sglang symbol at the same place are the same
finding (counted: two alike need two). A new finding is blamed on the fixes of its file
that brought in the name it is about (in their parameters: a replaced callee, a moved
import; any fix's, in a file no fix touched), else on the fix whose edits start nearest
above the old line it stands for (an edit rewrites the node that starts at its position,
and a finding inside that node may stand on a line it left as it was), else on every fix
of its file or, in a file no fix touched, every fix.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from dataclasses import dataclass, field

from driftaudit.findings import Finding
from driftaudit.fix.edits import Edit

_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Fix:
    """The edits one finding asked for, applied together or not at all."""

    finding: Finding
    edits: list[Edit] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.finding.path


class LineMap:
    """One fixed file's lines, before and after, as the old file numbers them."""

    def __init__(self, before: str, after: str):
        matcher = difflib.SequenceMatcher(
            None, before.split("\n"), after.split("\n"), autojunk=False
        )
        self.blocks = matcher.get_opcodes()  # (tag, i1, i2, j1, j2), in order
        self._starts = ([b[1] for b in self.blocks], [b[3] for b in self.blocks])

    def place(self, line: int, side: int) -> tuple[str, int]:
        """("line", n): old line n, unchanged; ("block", i): in the changed block that
        starts at old line i + 1. `side`: 0 for a line of the old file, 1 of the new."""
        index = line - 1
        starts = self._starts[side]
        at = bisect.bisect_right(starts, index) - 1
        while at > 0 and self._span(at, side)[0] == self._span(at, side)[1]:
            at -= 1  # an empty block (an insertion seen from the old side): the one before
        tag, i1, _, j1, _ = self.blocks[max(at, 0)]
        if tag == "equal":
            return "line", i1 + (index - (j1 if side else i1)) + 1
        return "block", i1 + 1

    def _span(self, at: int, side: int) -> tuple[int, int]:
        block = self.blocks[at]
        return (block[3], block[4]) if side else (block[1], block[2])

    def old_line(self, line: int) -> int:
        """The old line a new line stands for: through an unchanged block exactly, inside
        a changed one at the same offset (clamped to the block; an insertion: the line
        above it)."""
        index = line - 1
        at = max(bisect.bisect_right(self._starts[1], index) - 1, 0)
        _, i1, i2, j1, _ = self.blocks[at]
        return i1 + min(index - j1, max(i2 - i1 - 1, 0)) + (1 if i2 > i1 else 0)


def blame(
    fixes: list[Fix],
    before: list[Finding],
    after: list[Finding],
    texts: dict[str, tuple[str, str]],
) -> dict[int, str]:
    """id(fix) -> why it is held back, for the applied `fixes` (`texts`: path -> the text
    before and after, for the files they changed)."""
    maps = {path: LineMap(old, new) for path, (old, new) in texts.items()}

    def key(finding: Finding, side: int) -> tuple:
        line = finding.line
        where = maps[finding.path].place(line, side) if finding.path in maps else ("line", line)
        return finding.code.code, finding.path, finding.symbol, where

    reasons: dict[int, list[str]] = {}
    before_keys = Counter(key(f, 0) for f in before)
    after_keys = Counter(key(f, 1) for f in after)
    # the finding a fix fixes is gone: one fewer of it per fix that claims it
    claimed: dict[tuple, list[Fix]] = {}
    for fix in fixes:
        claimed.setdefault(key(fix.finding, 0), []).append(fix)
    for found, claimants in claimed.items():
        if after_keys[found] > before_keys[found] - len(claimants):
            for fix in claimants:
                reasons.setdefault(id(fix), []).append("the re-audit still reports it")
    # nothing new: each finding the first audit did not have
    by_path: dict[str, list[Fix]] = {}
    for fix in fixes:
        by_path.setdefault(fix.path, []).append(fix)
    for finding in after:
        found = key(finding, 1)
        if before_keys[found] > 0:
            before_keys[found] -= 1
            continue
        own = by_path.get(finding.path, [])
        culprits = _bringers(finding, own or fixes) or _culprits(
            finding, own, maps.get(finding.path)
        )
        if not culprits:  # placed by no edit: any fix of its file, else any fix
            culprits = own or fixes
        for fix in culprits:
            reasons.setdefault(id(fix), []).append(f"the fixed code gets {_where(finding)}")
    return {fix: _say(found) for fix, found in reasons.items()}


def _where(finding: Finding) -> str:
    return f"{finding.code.code} at {finding.path}:{finding.line}:{finding.column}"


def _bringers(finding: Finding, fixes: list[Fix]) -> list[Fix]:
    """The fixes that brought in the name the new finding is about (a replaced callee,
    a moved import, a new member): its symbol's last name among their parameters."""
    name = finding.symbol.rpartition(".")[2]
    return [fix for fix in fixes if name and name in _names(fix)]


def _names(fix: Fix) -> set[str]:
    values = [value for edit in fix.edits for value in edit.params.values()]
    names: set[str] = set()
    while values:
        value = values.pop()
        if isinstance(value, str):
            names.update(_NAME.findall(value))
        elif isinstance(value, list):
            values.extend(value)
    return names


def _culprits(finding: Finding, fixes: list[Fix], lines: LineMap | None) -> list[Fix] | None:
    """The fixes whose edits start nearest above the old line a new finding stands for
    (a changed line, or one inside a node an edit rewrote, such as a keyword of the call
    whose callee was replaced); None when no edit starts above it."""
    if not fixes or lines is None:
        return None
    at = lines.old_line(finding.line)
    starts = [(edit.line, fix) for fix in fixes for edit in fix.edits if edit.line <= at]
    if not starts:
        return None
    nearest = max(start for start, _ in starts)
    return list({id(fix): fix for start, fix in starts if start == nearest}.values())


def _say(reasons: list[str]) -> str:
    unique = list(dict.fromkeys(reasons))
    shown = "; ".join(unique[:3])
    more = f" (and {len(unique) - 3} more)" if len(unique) > 3 else ""
    return f"held back: {shown}{more}"
