"""Suggested fixes for a report (SARIF's `fixes`): each autofixable, certain finding's
own rewrite of its file, unsafe ones too (a suggestion, not a write; the report says
which are unsafe). Computed before the report layer, which renders only.

Per file, the source is read and parsed once and its metadata (positions, scopes)
resolved once; each finding's edits are then applied to that shared tree. A finding's
fix is its own edits alone, not the file's fixes together: a code-scanning alert offers
the change that closes it. Measured on miles 31f1 (0.5.16 -> 0.5.23, warm): see the
commit that brought this module."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from driftaudit.findings import Finding
from driftaudit.fix.apply import FileChange


def suggestable(finding: Finding) -> bool:
    return bool(finding.fix and finding.fix.autofixable and finding.confidence == "certain")


def suggested_fixes(findings: list[Finding], root: Path | None) -> dict[int, FileChange]:
    """`id(finding)` -> the change its fix makes, for the findings whose fix changes
    their file (an unreadable or unparsable file: none)."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if root is not None and suggestable(finding):
            by_file[finding.path].append(finding)
    if not by_file:
        return {}
    import libcst as cst  # only when there is a fix

    from driftaudit.fix.apply import parse, rewrite
    from driftaudit.fix.edits import edits_from_findings
    from driftaudit.fix.source import UnreadableSource, read_source

    assert root is not None
    changes: dict[int, FileChange] = {}
    for path, listed in by_file.items():
        try:
            source = read_source(root / path)
        except (OSError, UnreadableSource):
            continue
        parsed = None
        if path.endswith((".py", ".pyi")):
            try:
                parsed = parse(source)
            except (cst.ParserSyntaxError, RecursionError):
                continue  # rewrite would change nothing either
        for finding in listed:
            edits = edits_from_findings([finding], unsafe_fixes=True)
            change = rewrite(path, source, edits, parsed)
            if change.changed:
                changes[id(finding)] = change
    return changes
