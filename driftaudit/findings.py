"""A finding: one consumer location x one drift item, as the report contract shows it."""

from __future__ import annotations

from dataclasses import dataclass, field

from driftaudit.rules import SEVERITIES, Rule


@dataclass
class Fix:
    """What to do; `edit` is the codemod that does it, when the fix is mechanical:
    {"kind": "move-import" | "drop-keyword" | "rename-keyword" | "pad-unpack" | ..., ...}."""

    description: str
    edit: dict | None = None

    @property
    def autofixable(self) -> bool:
        return self.edit is not None

    def as_dict(self) -> dict:
        return {"description": self.description, "autofixable": self.autofixable}


@dataclass
class Finding:
    rule: Rule
    path: str
    line: int
    column: int
    symbol: str
    message: str
    old_location: str | None = None
    new_location: str | None = None
    fix: Fix | None = None
    severity: str = ""  # defaults to the rule's
    confidence: str = "certain"  # or "likely": only an attribute name ties it to sglang
    extra: dict = field(default_factory=dict)
    end_line: int | None = None  # where the usage ends; None: the start line
    end_column: int | None = None  # None: the start column (reports widen a point
    # to the word there)

    def __post_init__(self) -> None:
        self.severity = self.severity or self.rule.severity
        if self.end_line is None:
            self.end_line = self.line
        if self.end_column is None:
            self.end_column = self.column

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.rule.code, self.symbol)

    def as_dict(self) -> dict:
        return {
            "rule": self.rule.code,
            "kind": self.rule.kind,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "symbol": self.symbol,
            "confidence": self.confidence,
            "message": self.message,
            "old_location": self.old_location,
            "new_location": self.new_location,
            "fix": self.fix.as_dict() if self.fix else None,
        }


def finding_at(
    place, change, message: str, fix: Fix | None = None, *, rule=None, symbol=None, **kw
) -> Finding:
    """A finding at a usage's place (path, line, column) about a drift change: the rule,
    symbol and evidence come from the change unless given."""
    return Finding(
        rule or change.rule,
        place.path,
        place.line,
        place.column,
        change.symbol if symbol is None else symbol,
        message,
        change.old_location,
        change.new_location,
        fix,
        **kw,
    )


def summarize(findings: list[Finding]) -> dict[str, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def at_or_above(severity: str, threshold: str) -> bool:
    """Is `severity` as bad as `threshold` or worse? (error > warning > info)"""
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)
