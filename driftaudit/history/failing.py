"""On which releases of a supported range a finding's usage fails.

A finding was found between a release where the usage works (`works`) and one where it
fails (`fails`): old -> new for the compare, the newest -> the oldest release for the
range's other direction. Its change is what its names' states (`states.py`) differ on
between those two (the aspects `dating.relevant_aspects` keeps); a release of the range
fails as `fails` does when those aspects read there as in `fails`. A finding whose
names no state tells apart (a pack's text pattern, a behaviour check) fails on `fails`
alone, as far as can be told.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit.history.dating import relevant_aspects, subjects
from driftaudit.progress import step

if TYPE_CHECKING:
    from driftaudit.findings import Finding
    from driftaudit.history.timeline import Timeline


def mark_failing(findings: list[Finding], timeline: Timeline, works: int, fails: int) -> None:
    """Set each finding's `fails_on` (releases of the timeline, oldest first), in place;
    `works`/`fails`: the indexes of the releases it was found between."""
    versions = timeline.versions
    wanted = list(dict.fromkeys(name for f in findings for name in subjects(f)))
    step(f"judging {len(findings)} findings on {len(versions)} releases of the range")
    states = timeline.states(wanted) if wanted else {}
    for finding in findings:
        own = {name: states[name] for name in subjects(finding)}
        pair = {name: [row[works], row[fails]] for name, row in own.items()}
        relevant = relevant_aspects(finding, pair)
        if not relevant:
            finding.fails_on = [versions[fails]]
            continue

        def seen(index: int, names: dict = own, aspects: list = relevant) -> tuple:
            return tuple(names[name][index].aspects.get(aspect) for name, aspect in aspects)

        failing = seen(fails)
        finding.fails_on = [v for i, v in enumerate(versions) if seen(i) == failing]
