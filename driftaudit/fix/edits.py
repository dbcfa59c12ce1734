"""An edit: one codemod primitive, at one place of one consumer file."""

from __future__ import annotations

from dataclasses import dataclass, field

from driftaudit.findings import Finding, fixable


@dataclass
class Edit:
    path: str  # relative to the consumer root
    line: int  # 1-based: where the node it edits starts (the finding's `fix_at`)
    column: int  # 1-based, in characters
    kind: str  # the primitive: move-import, drop-keyword, ...
    params: dict = field(default_factory=dict)
    code: str = ""  # the finding's code (for --select / --ignore and the summary)
    applicability: str = "safe"  # or "unsafe": applied only with --unsafe-fixes

    @property
    def position(self) -> tuple[int, int]:
        return self.line, self.column


def edits_from_findings(
    findings: list[Finding],
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    unsafe_fixes: bool = False,
) -> list[Edit]:
    """The edits of the fixable findings; unsafe ones only with `unsafe_fixes`."""
    edits = []
    for finding in fixable(findings, select, ignore):
        if finding.fix_applicability != "safe" and not unsafe_fixes:
            continue
        steps = finding.fix.edit.get("steps", [finding.fix.edit])
        for step in steps:
            params = {k: v for k, v in step.items() if k not in ("kind", "at")}
            edits.append(
                Edit(
                    finding.path,
                    *step.get("at", finding.fix_at),  # a step of a merged repeat: its place
                    step["kind"],
                    params,
                    finding.code.code,
                    finding.fix_applicability or "unsafe",
                )
            )
    return edits


def unique(edits: list[Edit]) -> list[Edit]:
    """The edits without repeats (one place, primitive and parameters: applied once)."""
    seen, kept = set(), []
    for edit in edits:
        key = (
            edit.position,
            edit.kind,
            tuple(sorted((k, repr(v)) for k, v in edit.params.items())),
        )
        if key not in seen:
            seen.add(key)
            kept.append(edit)
    return kept
