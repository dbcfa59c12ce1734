"""A finding: one consumer location x one drift item, as the report contract shows it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from driftaudit.codes import SEVERITIES, Code, variant


@dataclass
class Fix:
    """What to do; `edit` is the codemod that does it, when the fix is mechanical:
    {"kind": "move-import" | "drop-keyword" | "rename-keyword" | "pad-unpack" | ..., ...}."""

    description: str
    edit: dict | None = None
    applicability: str | None = None  # "safe"/"unsafe" for this fix; None: the code's

    @property
    def autofixable(self) -> bool:
        return self.edit is not None

    def as_dict(self) -> dict:
        return {"description": self.description, "autofixable": self.autofixable}


class Place(NamedTuple):
    """Where a finding points in the consumer (a usage has the same three attributes)."""

    path: str
    line: int
    column: int


@dataclass
class Finding:
    code: Code
    path: str
    line: int
    column: int
    symbol: str
    message: str
    old_location: str | None = None
    new_location: str | None = None
    fix: Fix | None = None
    severity: str = ""  # defaults to the code's
    confidence: str = "certain"  # or "likely": only an attribute name ties it to sglang
    end_line: int | None = None  # where the usage ends; None: the start line
    end_column: int | None = None  # None: the start column (reports widen a point
    # to the word there)
    details: str | None = None  # longer evidence (an upstream diff to port); JSON only if set

    def __post_init__(self) -> None:
        self.severity = self.severity or self.code.severity
        if self.end_line is None:
            self.end_line = self.line
        if self.end_column is None:
            self.end_column = self.column

    @property
    def fix_applicability(self) -> str | None:
        """ "safe" or "unsafe" when the fix is a codemod (as the code documents it)."""
        if not (self.fix and self.fix.autofixable):
            return None
        return self.fix.applicability or self.code.applicability

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code.code, self.symbol)

    def as_dict(self) -> dict:
        return {
            "rule": self.code.code,  # the report contract's name for the code
            "kind": self.code.kind,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "symbol": self.symbol,
            "confidence": self.confidence,
            "message": self.message,
            "old_location": self.old_location,
            "new_location": self.new_location,
            "fix": self.fix.as_dict() | {"applicability": self.fix_applicability}
            if self.fix
            else None,
        } | ({"details": self.details} if self.details is not None else {})


def finding_at(
    place, change, message: str, fix: Fix | None = None, *, use=None, symbol=None, **kw
) -> Finding:
    """A finding at a usage's place (path, line, column) about a drift change: the code
    comes from the change's class (or its consumer-side variant for `use`, "patch" or
    "override": see `codes.variant`); symbol and evidence from the change unless given."""
    return Finding(
        variant(change.code, use),
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
