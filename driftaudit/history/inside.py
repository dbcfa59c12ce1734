"""What fails on a release inside a supported range and on neither end of it.

The compares oldest -> newest and newest -> oldest see the ends alone: a name removed in
0.5.19 and restored in 0.5.21, a keyword that only some middle release lacks, or a name
only a middle release has (added, then dropped again) leave both ends agreeing. Each
middle release `M` is matched with the usages the consumer already has (no second read
of the consumer; of the behaviour checks only DA703, what an object built without
`__init__` reads, which is cheap; not DA701/DA702): oldest -> `M` finds what works on
the oldest and fails on `M`; `M` -> oldest what works on `M` alone and fails on the
oldest. The matcher reads only the modules the usages resolve through (kept per file in
the store, shared by the releases that have the same file), and judges the consumer's
guards (fallbacks, version branches, feature tests) against `M` as at the ends.

Kept: what fails (severity error: an import, a call, an attribute that raises), at a
place and symbol neither end's compare reported (that fact is theirs, with its own
`fails_on` read from every release); each fact once, however many middle releases
show it. Its `fails_on`: the middle releases where oldest -> `M` finds it (the matcher's
own answer on each), or for a name only middle releases have, every release where its
aspects read as on the oldest (`failing.mark_failing`). What only behaves differently
on a middle release (a default that changed and changed back) is left to the ends.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from driftaudit.progress import step

if TYPE_CHECKING:
    from pathlib import Path

    from driftaudit.findings import Finding
    from driftaudit.history.timeline import Timeline
    from driftaudit.usage.files import ConsumerFiles
    from driftaudit.usage.surface_uses import SurfaceUsages
    from driftaudit.usage.usages import UsageSet


def place_of(finding: Finding) -> tuple:
    """A fact's place whatever code tells it: the symbol at one consumer position."""
    return (finding.symbol, finding.path, finding.line, finding.column)


def audit_inside(
    timeline: Timeline,
    usages: UsageSet,
    surfaces: SurfaceUsages | None,
    files: ConsumerFiles,
    root: Path,
    known: list[Finding],
) -> list[Finding]:
    """What fails on a middle release of `timeline` (oldest first, its ends the range's),
    each with `fails_on`: the facts `known` (the ends' findings) does not hold, and, at a
    place `known` holds, the middle releases oldest -> `M` finds it on (`amend` merges
    them into that fact)."""
    from driftaudit.drift import Differ
    from driftaudit.history.failing import mark_failing
    from driftaudit.match import match_usages
    from driftaudit.match.bypass import bypass_findings
    from driftaudit.match.guards import apply_guards
    from driftaudit.usage.bypass_uses import collect_bypasses

    versions = timeline.versions
    last = len(versions) - 1
    if last < 2:
        return []
    timeline.fetch(list(range(len(versions))))  # several at once
    seen = {place_of(f) for f in known}
    forward: dict[tuple, tuple[Finding, list[str]]] = {}  # with the releases it fails on
    backward: dict[tuple, tuple[int, Finding]] = {}
    oldest = timeline.snapshot(0)
    # what a consumer object built without `__init__` reads (DA703): matched as well
    bypasses: list = collect_bypasses(files, {u.path for u in usages.usages})
    usages_match = partial(match_usages, packs=[], root=root, surfaces=surfaces, files=files)

    def match(usages: UsageSet, differ: Differ) -> list[Finding]:
        found = usages_match(usages, differ)
        return found + apply_guards(bypass_findings(bypasses, differ, usages), usages, differ)

    for index in range(1, last):
        middle = timeline.snapshot(index)
        step(f"matching the consumer's uses on sglang {versions[index]}, inside the range")
        for finding in _failing(match(usages, Differ(oldest, middle))):
            at = place_of(finding)
            if at in forward:
                forward[at][1].append(versions[index])
            else:
                told = _told(finding, f"seen from {versions[0]} to {versions[index]}")
                forward[at] = (told, [versions[index]])
        for finding in _failing(match(usages, Differ(middle, oldest))):
            at = place_of(finding)
            if at not in seen and at not in forward and at not in backward:
                told = _told(finding, f"seen from {versions[index]} back to {versions[0]}")
                # in the range's order: old is the oldest release's side
                told = replace(
                    told, old_location=finding.new_location, new_location=finding.old_location
                )
                backward[at] = (index, told)
        timeline.forget(index)  # one middle release's models at a time
    for index in sorted({i for i, _ in backward.values()}):
        group = [f for i, f in backward.values() if i == index]
        mark_failing(group, timeline, index, 0)
    for finding, failing in forward.values():
        finding.fails_on = failing
    return [*(f for f, _ in forward.values()), *(f for _, f in backward.values())]


def amend(known: list[Finding], inside: list[Finding], versions: list[str]) -> list[Finding]:
    """The facts of `inside` that `known` does not hold; an `inside` finding at a place a
    known fact of the oldest -> newest compare holds adds its middle releases to that
    fact's `fails_on` (the matcher's answer on each release, where the names' states
    alone may not tell: a class that stopped being a dataclass fails on every release
    since, not only on the newest)."""
    by_place: dict[tuple, list[Finding]] = {}
    for finding in known:
        by_place.setdefault(place_of(finding), []).append(finding)
    new = []
    for finding in inside:
        here = by_place.get(place_of(finding))
        if here is None:
            new.append(finding)
            continue
        for fact in here:
            if fact.fails_on is not None and versions[0] not in fact.fails_on:
                failing = {*fact.fails_on, *(finding.fails_on or [])}
                fact.fails_on = [v for v in versions if v in failing]
    return new


def _failing(findings: list[Finding]) -> list[Finding]:
    """What raises on the release (the consumer's own input, DA0xx, is the ends')."""
    return [f for f in findings if f.severity == "error" and not f.code.code.startswith("DA0")]


def _told(finding: Finding, how: str) -> Finding:
    return replace(finding, message=f"{finding.message}, {how} (inside the supported range)")
