"""A fix for a supported range: one that works on every release in it, or none.

A finding of a range says on which releases it fails (`fails_on`). Where the old
spelling still works on some releases, an edit that replaces it works on every one only
when the new spelling is there on every one (a rename with a deprecated alias in the
older releases: the plain fix). A moved import whose new home some release of the range
lacks becomes a guarded one (`guard-import`: the new module first, the old in `except
ImportError`; the newest release's spelling in the `try`, whichever the consumer
wrote), which works wherever either does. Every other edit stands as it is, and
the re-audit against every release of the range (`pipeline.run_fix`) judges it: one
that breaks a release is held back, and its finding needs a human with the releases
each spelling works on (`why_held`): a call written twice under a version branch is
not something driftaudit writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from driftaudit.findings import Finding
    from driftaudit.fix.verify import Fix


def range_fixes(
    fixes: list[Fix], releases: list[str], everywhere: Callable[[list[str]], set[str]]
) -> list[Fix]:
    """The fixes, a moved import guarded where the range needs it; `everywhere(names)`:
    the sglang names every release of the range has."""
    moving = [f for f in fixes if _partial(f.finding, releases) and _moves(f)]
    homes = {id(e): _home(e.params) for f in moving for e in f.edits}
    present = everywhere(sorted(set(homes.values()))) if homes else set()
    kept = []
    for fix in fixes:
        if any(homes.get(id(e)) not in present for e in fix.edits if id(e) in homes):
            # the newest release's spelling first: the one written, when the oldest lacks it
            first = releases[0] in (fix.finding.fails_on or [])
            guarded = [
                replace(e, kind="guard-import", params={**e.params, "keep_first": first})
                for e in fix.edits
            ]
            fix = replace(fix, edits=guarded)
        kept.append(fix)
    return kept


def why_held(finding: Finding, releases: list[str], reason: str) -> str | None:
    """Why a fix the re-audit held back cannot be made for the range (None: the range is
    not why: the fix fails on every release as written)."""
    if not _partial(finding, releases):
        return None
    failing = finding.fails_on or []
    works = [v for v in releases if v not in failing]
    return (
        f"works on {', '.join(works)} as written and fails on {', '.join(failing)}; the fix "
        f"does not work on every release of the range ({reason}): no one spelling does "
        "(it needs a version branch)"
    )


def _partial(finding: Finding, releases: list[str]) -> bool:
    """Does the usage work as written on some release of the range?"""
    return finding.fails_on is not None and not set(releases) <= set(finding.fails_on)


def _moves(fix: Fix) -> bool:
    """Only moves to another module under a name (not into a class: `Cls.method`)."""
    return all(
        e.kind == "move-import" and "." not in (e.params.get("new_name") or "") for e in fix.edits
    )


def _home(params: dict) -> str:
    return f"{params['new_module']}.{params.get('new_name') or params['name']}"
