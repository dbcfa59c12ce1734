"""The JSON report, exactly per the contract in docs/ARCHITECTURE.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit import __version__
from driftaudit.findings import Finding, fact_numbers, group_facts, summarize
from driftaudit.report.escape import json_text

if TYPE_CHECKING:
    from driftaudit.drift import Change
    from driftaudit.sources import SourceTree


def findings_json(findings: list[Finding], old: SourceTree, new: SourceTree, consumer: str) -> str:
    numbers = fact_numbers(findings)
    document = {
        "tool": {"name": "driftaudit", "version": __version__},
        # with where each spec was written (`source`; `pin`: the file and line of the
        # consumer's sglang pin --old was read from, else null)
        "old": old.report(),
        "new": new.report(),
        "consumer": consumer,
        # every place; `fact` numbers the fact it belongs to (places of one fact share it)
        "findings": [f.as_dict() | {"fact": numbers[id(f)]} for f in findings],
        "summary": summarize(findings) | {"facts": len(group_facts(findings))},
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
