"""SARIF 2.1.0, for GitHub code scanning and any SARIF viewer: rule metadata from the
registry, one result per finding with its region, and `fixes` (the codemod's actual
text replacement) where the finding is autofixable.

File locations are relative references (`escape.uri_path`: percent-encoded) against a
`uriBaseId`; columns count Unicode code points, as the JSON report's do, and the run says
so (`columnKind`). Text is JSON-escaped (`escape.json_text`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit import __version__
from driftaudit.check.baseline import fingerprint
from driftaudit.codes import Code
from driftaudit.findings import Finding, group_facts
from driftaudit.report.escape import json_text, uri_path
from driftaudit.report.regions import region
from driftaudit.sources import SourceTree

if TYPE_CHECKING:
    from driftaudit.drift import Change
    from driftaudit.fix.suggest import Hunk
    from driftaudit.usage.files import ConsumerFiles

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _rule_descriptor(rule: Code) -> dict:
    help_text = f"{rule.summary}\n\nWhy it breaks: {rule.why}\n\nFix: {rule.fix}"
    return {
        "id": rule.code,
        "name": rule.kind,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {
            "text": help_text,
            "markdown": (
                f"{rule.summary}\n\n**Why it breaks:** {rule.why}\n\n"
                f"**Example:** `{rule.example}`\n\n**Fix:** {rule.fix} ({rule.fix_safety})"
            ),
        },
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"fixSafety": rule.fix_safety, "tags": [rule.kind]},
    }


def _replacements(hunks: list[Hunk]) -> list[dict]:
    """Whole-line replacements (regions 1-based; a region that starts and ends at column
    1 of the same line is an insertion point)."""
    return [
        {
            "deletedRegion": {
                "startLine": first + 1,
                "startColumn": 1,
                "endLine": end + 1,
                "endColumn": 1,
            },
            "insertedContent": {"text": text},
        }
        for first, end, text in hunks
    ]


def _artifact(path: str, base: str) -> dict:
    return {"uri": uri_path(path), "uriBaseId": base}


def _fix_of(finding: Finding, hunks: list[Hunk] | None, prefix: str) -> list[dict]:
    if not hunks or finding.fix is None:
        return []
    description = finding.fix.description
    if finding.fix_applicability == "unsafe":
        description += " (unsafe: behaviour may change; review before applying)"
    return [
        {
            "description": {"text": description},
            "artifactChanges": [
                {
                    "artifactLocation": _artifact(prefix + finding.path, "%SRCROOT%"),
                    "replacements": _replacements(hunks),
                }
            ],
        }
    ]


def _physical(finding: Finding, files: ConsumerFiles | None, prefix: str) -> dict:
    """Where a finding is: its file under %SRCROOT% and its region."""
    start_line, start_column, end_line, end_column = region(finding, files)
    return {
        "artifactLocation": _artifact(prefix + finding.path, "%SRCROOT%"),
        "region": {
            "startLine": start_line,
            "startColumn": start_column,
            "endLine": end_line,
            "endColumn": end_column,
        },
    }


def _result(
    finding: Finding,
    rule_index: dict[str, int],
    files: ConsumerFiles | None,
    prefix: str,
    fixes: dict[int, list[Hunk]],
) -> dict:
    properties: dict[str, str | int | list[str] | None] = {
        "symbol": finding.symbol,
        "confidence": finding.confidence,
        "kind": finding.code.kind,
    }
    if finding.old_location:
        properties["oldLocation"] = finding.old_location
    if finding.new_location:
        properties["newLocation"] = finding.new_location
    if finding.fix:
        properties["fix"] = finding.fix.description
    if finding.introduced or finding.dated:
        properties["introduced"] = finding.introduced
    if finding.dated:
        properties["deprecated"] = finding.deprecated
    if finding.fails_on is not None:
        properties["failsOn"] = list(finding.fails_on)
    result = {
        "ruleId": finding.code.code,
        "ruleIndex": rule_index[finding.code.code],
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": _physical(finding, files, prefix)}],
        "properties": properties,
    }
    if files is not None:
        result["partialFingerprints"] = {"driftauditFingerprint/v1": fingerprint(finding, files)}
    offered = _fix_of(finding, fixes.get(id(finding)), prefix)
    if offered:
        result["fixes"] = offered
    return result


def _fact_result(
    group: list[Finding],
    rule_index: dict[str, int],
    files: ConsumerFiles | None,
    prefix: str,
    fixes: dict[int, list[Hunk]],
) -> dict:
    """One result per fact: its first place the location, the others related locations
    (with their own message), every place's fix offered."""
    result = _result(group[0], rule_index, files, prefix, fixes)
    related = []
    for n, other in enumerate(group[1:], 1):
        related.append(
            {
                "id": n,
                "message": {"text": other.message},
                "physicalLocation": _physical(other, files, prefix),
            }
        )
        result.setdefault("fixes", []).extend(_fix_of(other, fixes.get(id(other)), prefix))
    if related:
        result["relatedLocations"] = related
        result["properties"]["places"] = len(group)
    if not result.get("fixes"):
        result.pop("fixes", None)
    return result


def _run(rules: list[Code], results_of, old: SourceTree, new: SourceTree, **extra) -> dict:
    return {
        "tool": {
            "driver": {
                "name": "driftaudit",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule_descriptor(r) for r in rules],
            }
        },
        "results": results_of({r.code: i for i, r in enumerate(rules)}),
        "columnKind": "unicodeCodePoints",
        "properties": {"old": old.report(), "new": new.report()},
        **extra,
    }


def _document(run: dict) -> str:
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json_text(document)


def findings_sarif(
    findings: list[Finding],
    old: SourceTree,
    new: SourceTree,
    consumer: str,
    files: ConsumerFiles | None = None,
    base: Path | None = None,
    prefix: str = "",
    suppressed: Sequence[Finding] = (),
    fixes: dict[int, list[Hunk]] | None = None,
) -> str:
    """`fixes`: each fixable finding's line hunks (`fix.suggest.suggested_fixes`, computed
    before the report: this module renders them). `files`: the consumer's index, whose
    lines give regions and fingerprints;
    paths are `prefix` + the finding's path, relative to `base` (the repository root
    in CI; default: the consumer itself). `suppressed` findings (silenced inline) are
    included as suppressed results, so code scanning closes their alerts."""
    everything = [*findings, *suppressed]
    rules = sorted({f.code.code: f.code for f in everything}.values(), key=lambda r: r.code)
    top = base or (files.root if files is not None else Path(consumer))
    src_root = top.resolve().as_uri() + "/"

    def results(index: dict[str, int]) -> list[dict]:
        listed = [
            _fact_result(group, index, files, prefix, fixes or {})
            for group in group_facts(findings)
        ]
        for finding in suppressed:
            result = _result(finding, index, files, prefix, fixes or {})
            result["suppressions"] = [{"kind": "inSource", "justification": "# driftaudit: ignore"}]
            listed.append(result)
        return listed

    return _document(
        _run(
            rules,
            results,
            old,
            new,
            originalUriBaseIds={"%SRCROOT%": {"uri": src_root}},
            **_invocation(old, prefix),
        )
    )


def _invocation(old: SourceTree, prefix: str) -> dict:
    """Where --old was read from, as a note of the run's invocation at the pin's line
    (also in the run's `properties.old.pin`)."""
    given = old.provenance
    if given is None or given.path is None or given.line is None:
        return {}
    note = {
        "level": "note",
        "message": {"text": f"--old {old.spec}: read from the sglang pin at {given.where}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(prefix + given.path, "%SRCROOT%"),
                    "region": {"startLine": given.line},
                }
            }
        ],
    }
    return {"invocations": [{"executionSuccessful": True, "toolExecutionNotifications": [note]}]}


def _change_result(change: Change, rule_index: dict[str, int]) -> dict:
    result = {
        "ruleId": change.code.code,
        "ruleIndex": rule_index[change.code.code],
        "level": _LEVEL[change.code.severity],
        "message": {"text": change.explain()},
        "properties": {"symbol": change.symbol},
    }
    locations = []
    for where, base in ((change.new_location, "NEW"), (change.old_location, "OLD")):
        if where:
            path, _, line = where.rpartition(":")
            physical = {"artifactLocation": _artifact(path or where, base)}
            if line.isdigit() and path:
                physical["region"] = {"startLine": int(line)}
            locations.append({"physicalLocation": physical})
            break  # the primary location: where the change is seen now (or was)
    if locations:
        result["locations"] = locations
    return result


def changes_sarif(changes: list[Change], old: SourceTree, new: SourceTree) -> str:
    """The sglang-side changelog as SARIF: locations in the new tree (or the old one,
    for what was removed)."""
    rules = sorted({c.code.code: c.code for c in changes}.values(), key=lambda r: r.code)
    return _document(
        _run(
            rules,
            lambda index: [_change_result(c, index) for c in changes],
            old,
            new,
            originalUriBaseIds={
                "OLD": {"uri": old.root.resolve().as_uri() + "/"},
                "NEW": {"uri": new.root.resolve().as_uri() + "/"},
            },
        )
    )
