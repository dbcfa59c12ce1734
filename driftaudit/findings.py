"""A finding: one consumer location x one drift item, as the report contract shows it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from driftaudit.codes import SEVERITIES, Code, selected, variant


@dataclass
class Fix:
    """What to do; `edit` is the codemod that does it, when the fix is mechanical:
    {"kind": "move-import" | "drop-keyword" | "rename-keyword" | "pad-unpack" | ..., ...}."""

    description: str
    edit: dict | None = None
    applicability: str | None = None  # "safe"/"unsafe" for this fix; None: the code's
    # "path:line" of another finding whose edit takes care of this one (no edit here)
    covered_by: str | None = None

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
    end_line: int | None = None  # where the token ends; None: the start line
    end_column: int | None = None  # exclusive; None: the start column (a point: reports
    # widen it to the word there)
    details: str | None = None  # longer evidence (an upstream diff to port); JSON only if set
    # where the fix's codemod acts (the start of the node it edits: the call, the
    # statement), when that is not line:column (a keyword, an attribute's name)
    anchor: tuple[int, int] | None = None
    introduced: str | None = None  # the release between old and new that made the change
    deprecated: str | None = None  # the first release of the range that warned about it
    dated: bool = False  # the timeline of the range was read (history/dating.py)
    # the releases of a supported range where the usage fails (history/failing.py);
    # None: not audited against a range
    fails_on: list[str] | None = None

    def __post_init__(self) -> None:
        self.severity = self.severity or self.code.severity
        if self.end_line is None:
            self.end_line = self.line
        if self.end_column is None:
            self.end_column = self.column

    @property
    def fix_at(self) -> tuple[int, int]:
        """(line, column) of the node the fix's codemod edits."""
        return self.anchor or (self.line, self.column)

    @property
    def fix_applicability(self) -> str | None:
        """ "safe" or "unsafe" when the fix is a codemod (as the code documents it)."""
        if not (self.fix and self.fix.autofixable):
            return None
        return self.fix.applicability or self.code.applicability

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code.code, self.symbol)

    def as_dict(self) -> dict:
        return (
            {
                "rule": self.code.code,  # the report contract's name for the code
                "kind": self.code.kind,
                "severity": self.severity,
                "path": self.path,
                "line": self.line,
                "column": self.column,
                "end_line": self.end_line,
                "end_column": self.end_column,
                "symbol": self.symbol,
                "confidence": self.confidence,
                "message": self.message,
                "old_location": self.old_location,
                "new_location": self.new_location,
                "fix": self.fix.as_dict() | {"applicability": self.fix_applicability}
                if self.fix
                else None,
            }
            | ({"details": self.details} if self.details is not None else {})
            | ({"introduced": self.introduced} if self.introduced is not None or self.dated else {})
            | ({"deprecated": self.deprecated} if self.dated else {})
            | ({"fails_on": list(self.fails_on)} if self.fails_on is not None else {})
        )


def finding_at(
    place, change, message: str, fix: Fix | None = None, *, use=None, symbol=None, at=None, **kw
) -> Finding:
    """A finding at a usage's place about a drift change: the code comes from the
    change's class (or its consumer-side variant for `use`, "patch" or "override": see
    `codes.variant`); symbol and evidence from the change unless given.

    It points at `at` (a Span: the keyword or argument that breaks), else at the usage's
    `focus` (its token: an attribute's name, an import's alias, a callee), else at the
    usage's (path, line, column); a fix's codemod still acts at the usage's node."""
    span = at or getattr(place, "focus", None)
    line, column = (span[0], span[1]) if span else (place.line, place.column)
    if span and (line, column) != (place.line, place.column):
        kw.setdefault("anchor", (place.line, place.column))
    return Finding(
        variant(change.code, use),
        place.path,
        line,
        column,
        change.symbol if symbol is None else symbol,
        message,
        change.old_location,
        change.new_location,
        fix,
        end_line=span[2] if span else None,
        end_column=span[3] if span else None,
        **kw,
    )


def timeline_note(finding: Finding) -> str:
    """ "fails on 0.5.22, introduced in 0.5.20, deprecated since 0.5.18" (what is known
    of it), or ""."""
    parts = []
    if finding.fails_on:
        parts.append(f"fails on {', '.join(finding.fails_on)}")
    if finding.introduced:
        parts.append(f"introduced in {finding.introduced}")
    if finding.deprecated:
        parts.append(f"deprecated since {finding.deprecated}")
    return ", ".join(parts)


def summarize(findings: list[Finding]) -> dict[str, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def fixable(
    findings: list[Finding], select: list[str] | None = None, ignore: list[str] | None = None
) -> list[Finding]:
    """The findings whose codemod `fix` may apply: certain, selected, with an edit."""
    return [
        f
        for f in findings
        if f.fix is not None
        and f.fix.edit is not None
        and f.confidence == "certain"
        and selected(f.code.code, select, ignore)
    ]


def at_or_above(severity: str, threshold: str) -> bool:
    """Is `severity` as bad as `threshold` or worse? (error > warning > info)"""
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)


def fact(finding: Finding) -> tuple:
    """What a finding states, wherever it is: its repeats across places and files are one
    fact (reports list the places under it; JSON keeps each, with its fact's number)."""
    fix = finding.fix.description if finding.fix else ""
    return (finding.code.code, finding.symbol, finding.message, fix, finding.severity)


# codes whose findings are parts of one consumer file's fact (a patch's failing hunks)
_FILE_FACTS = frozenset({"DA601"})
# codes whose findings are one fact of the whole consumer (its sglang pins that disagree),
# led by the worst place
_CONSUMER_FACTS = frozenset({"DA004"})


def _where(finding: Finding) -> tuple:
    """The change x consumer statement (or file) a finding is: findings of one code and
    symbol there are one fact (a call whose arguments shift), and a patch file's failing
    hunks."""
    if finding.code.code in _CONSUMER_FACTS:
        return (finding.code.code,)
    if finding.code.code in _FILE_FACTS:
        return (finding.code.code, finding.path)
    if finding.anchor is not None:  # the node its fix acts on: the call, the statement
        return (finding.code.code, finding.symbol, finding.path, *finding.anchor)
    return (finding.code.code, finding.symbol, finding.path, finding.line, finding.column)


def group_facts(findings: list[Finding]) -> list[list[Finding]]:
    """The findings as facts, in order of first appearance: each a list of its places,
    the first one the fact's lead. Findings of one code at one statement (or patch file)
    are one fact; so are findings stating the same thing
    (`fact()`) at any number of statements."""
    local: dict[tuple, list[Finding]] = {}
    for finding in findings:
        local.setdefault(_where(finding), []).append(finding)
    stated: dict[tuple, list[Finding]] = {}
    for group in local.values():
        if group[0].code.code in _CONSUMER_FACTS:
            group.sort(key=lambda f: SEVERITIES.index(f.severity))  # stable
        stated.setdefault(fact(group[0]), []).extend(group)
    return list(stated.values())


def fact_numbers(findings: list[Finding]) -> dict[int, int]:
    """id(finding) -> the number of its fact (0-based, in order of first appearance)."""
    return {id(f): i for i, group in enumerate(group_facts(findings)) for f in group}


def facts_summary(findings: list[Finding]) -> str:
    """ "N facts at M places: e errors, w warnings, i info" (counted by fact)."""
    facts = group_facts(findings)
    counts = summarize([group[0] for group in facts])
    places = "place" if len(findings) == 1 else "places"
    return (
        f"{len(facts)} {'fact' if len(facts) == 1 else 'facts'} at {len(findings)} {places}: "
        f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
    )
