"""A fix for a supported range: one that works on every release in it, or none.

A finding of a range says on which releases it fails (`fails_on`). Where it fails on
every one, its edit writes the one spelling the range has and stands as it is. Where
the old spelling still works on some releases, an edit that replaces it would break
those: a moved import becomes a guarded one (`guard-import`: the new module first, the
old in `except ImportError`), which works wherever either does; any other edit (a
keyword dropped or renamed, a callee replaced, an attribute renamed) would need the
call written twice under a version branch, which driftaudit does not write: that fix is
held back, and the finding needs a human, with the releases each spelling works on.
Whatever is kept is re-audited against every release of the range (`pipeline.run_fix`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from driftaudit.fix.verify import Fix


def range_fixes(fixes: list[Fix], releases: list[str]) -> tuple[list[Fix], list[tuple[Fix, str]]]:
    """(the fixes that work on every release, each made so; the others with why)."""
    kept, held = [], []
    for fix in fixes:
        failing = fix.finding.fails_on
        if failing is None or set(releases) <= set(failing):
            kept.append(fix)
            continue
        works = [v for v in releases if v not in failing]
        if all(_guardable(e.kind, e.params) for e in fix.edits):
            guarded = [replace(e, kind="guard-import") for e in fix.edits]
            kept.append(replace(fix, edits=guarded))
            continue
        kinds = ", ".join(dict.fromkeys(e.kind for e in fix.edits))
        held.append(
            (
                fix,
                f"works on {_span(works)} as written and fails on {_span(failing)}: the fix "
                f"({kinds}) would break the first; no one spelling works on every release "
                "of the range (it needs a version branch)",
            )
        )
    return kept, held


def _guardable(kind: str, params: dict) -> bool:
    """A move to another module under a name (not into a class: `Cls.method`)."""
    return kind == "move-import" and "." not in (params.get("new_name") or "")


def _span(versions: list[str]) -> str:
    return ", ".join(versions)
