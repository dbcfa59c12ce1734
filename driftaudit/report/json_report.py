"""The JSON report, exactly per the contract in docs/ARCHITECTURE.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit import __version__
from driftaudit.findings import Finding, summarize
from driftaudit.report.escape import json_text

if TYPE_CHECKING:
    from driftaudit.drift import Change
    from driftaudit.sources import SourceTree


def findings_json(findings: list[Finding], old: SourceTree, new: SourceTree, consumer: str) -> str:
    document = {
        "tool": {"name": "driftaudit", "version": __version__},
        "old": old.describe(),
        "new": new.describe(),
        "consumer": consumer,
        "findings": [f.as_dict() for f in findings],
        "summary": summarize(findings),
    }
    return json_text(document)


def changes_json(changes: list[Change], old: SourceTree, new: SourceTree) -> str:
    document = {
        "tool": {"name": "driftaudit", "version": __version__},
        "old": old.describe(),
        "new": new.describe(),
        "changes": [c.as_dict() for c in changes],
    }
    return json_text(document)
