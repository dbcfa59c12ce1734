"""The JSON documents: findings (compare, check), counts per code (--statistics) and
changes (diff). Their contract is the JSON Schema of each kind shipped in the package,
`driftaudit/report/schemas/<kind>.schema.json`; every document opens with
`schema_version` (`schemas.VERSION`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit import __version__
from driftaudit.findings import Finding, fact_numbers, group_facts, summarize
from driftaudit.report.escape import json_text
from driftaudit.report.schemas import VERSION
from driftaudit.report.statistics import code_counts

if TYPE_CHECKING:
    from driftaudit.drift import Change
    from driftaudit.sources import SourceTree


def opening() -> dict:
    """What every JSON document opens with: its schema's version and the tool."""
    return {"schema_version": VERSION, "tool": {"name": "driftaudit", "version": __version__}}


def _head(old: SourceTree, new: SourceTree) -> dict:
    """A document about two trees: its opening, then both trees, with where each spec
    was written (`source`; `pin`: the file and line of the consumer's sglang pin --old
    was read from, else null) when a compare knows it."""
    return opening() | {"old": old.report(), "new": new.report()}


def findings_json(findings: list[Finding], old: SourceTree, new: SourceTree, consumer: str) -> str:
    numbers = fact_numbers(findings)
    document = _head(old, new) | {
        "consumer": consumer,
        # every place; `fact` numbers the fact it belongs to (places of one fact share it)
        "findings": [f.as_dict() | {"fact": numbers[id(f)]} for f in findings],
        "summary": summarize(findings) | {"facts": len(group_facts(findings))},
    }
    return json_text(document)


def statistics_json(
    findings: list[Finding], old: SourceTree, new: SourceTree, consumer: str
) -> str:
    document = _head(old, new) | {"consumer": consumer, "statistics": code_counts(findings)}
    return json_text(document)


def changes_json(changes: list[Change], old: SourceTree, new: SourceTree) -> str:
    return json_text(_head(old, new) | {"changes": [c.as_dict() for c in changes]})
