"""What the fixer would write, as a suggestion for a report (the HTML page): each file's
text before and after its fixable findings' edits, unsafe ones included (a page shows
them, marked), one rewrite per file. Nothing is written."""

from __future__ import annotations

from pathlib import Path

from driftaudit.findings import Finding
from driftaudit.fix.apply import apply_edits
from driftaudit.fix.edits import edits_from_findings
from driftaudit.usage.files import ConsumerFiles


def previews(findings: list[Finding], files: ConsumerFiles | Path) -> dict[str, tuple[str, str]]:
    """{path: (before, after)} for every file the edits change."""
    edits = edits_from_findings(findings, unsafe_fixes=True)
    if not edits:
        return {}
    return {c.path: (c.before, c.after) for c in apply_edits(files, edits) if c.changed}
