"""Where a finding is, as a region of its file: start and end (line, column), both
1-based, the end exclusive: the finding's own end. Only a finding recorded as a point
(no end known: a text match, a patch hunk) is widened to the dotted name there, so an
annotation underlines the name rather than nothing."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from driftaudit.findings import Finding

if TYPE_CHECKING:
    from driftaudit.usage.files import ConsumerFiles

_WORD = re.compile(r"[\w.]+")


def region(finding: Finding, files: ConsumerFiles | None) -> tuple[int, int, int, int]:
    """`files`: the consumer's index, whose lines widen a point (None: left a point)."""
    end_line = finding.end_line or finding.line
    end_column = finding.end_column or finding.column
    if (end_line, end_column) == (finding.line, finding.column) and files is not None:
        end_column = word_end(files.line(finding.path, finding.line), finding.column)
    return finding.line, finding.column, end_line, end_column


def word_end(text: str, column: int) -> int:
    """1-based column just past the dotted name starting at `column` (a point widened
    to the word, for SARIF and annotation regions); `column` itself if there is none."""
    match = _WORD.match(text, max(column - 1, 0))
    return match.end() + 1 if match else column
