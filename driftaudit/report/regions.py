"""Where a finding is, as a region of its file: start and end (line, column), both
1-based, the end exclusive: the finding's own end. Only a finding recorded as a point
(no end known: a text match, a patch hunk) is widened to the dotted name there, so an
annotation underlines the name rather than nothing."""

from __future__ import annotations

from pathlib import Path

from driftaudit.check.sourcelines import line_text, word_end
from driftaudit.findings import Finding


def region(finding: Finding, root: Path | None) -> tuple[int, int, int, int]:
    end_line = finding.end_line or finding.line
    end_column = finding.end_column or finding.column
    if (end_line, end_column) == (finding.line, finding.column) and root is not None:
        end_column = word_end(line_text(root, finding.path, finding.line), finding.column)
    return finding.line, finding.column, end_line, end_column
