"""`driftaudit plan`: an upgrade over many releases cut into steps, from the reported
findings and their `introduced`/`deprecated` releases (`dating.py`); no second analysis.

Facts (`findings.group_facts`) are grouped by the release that brings them. A fact has a
deprecation window when sglang warned about its change before it broke: `deprecated` <
`introduced`. While the consumer runs on a release of [deprecated, introduced) both
spellings work, so it can move to the new one before the old is gone. The stops are the
fewest releases such that every window holds one (interval stabbing, greedy: windows by
the release that breaks them, a stop at the last release before a break whose window
holds no stop yet; this is minimal), and always `new`. A stop at `old` itself means:
move off before upgrading at all.

A stop between old and new is a release the consumer runs on: what fails there and a
later release undoes (a name removed and restored) never shows in the compare old ->
new, so the stops are audited as the releases inside a supported range are
(`inside.py`, `pipeline.plan_upgrade`) and each step lists what fails on its stop alone.

Step k goes from the stop before it (`old` for the first) to its stop. Its breaks are the
facts introduced after the stop before and up to its stop, less those moved off earlier;
its moves are the windowed facts it holds the stop for: done on its release, before the
next step (each on the last stop before its break). `driftaudit fix --old <from> --new
<stop>` is the step's fix: the audit of exactly that upgrade. A fact whose release is
not known (a behaviour check, the consumer's own pins) is listed apart, undated.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from driftaudit.findings import group_facts

if TYPE_CHECKING:
    from driftaudit.findings import Finding


@dataclass
class Fact:
    """One fact: its places (the first its lead) and where in the range it falls."""

    places: list[Finding]
    introduced: int | None  # index in the plan's releases; None: undated
    deprecated: int | None  # index of the first release that warned, when before the break

    @property
    def lead(self) -> Finding:
        return self.places[0]

    @property
    def autofixable(self) -> bool:
        fix = self.lead.fix
        return fix is not None and fix.edit is not None and self.lead.confidence == "certain"

    @property
    def windowed(self) -> bool:
        return self.deprecated is not None and self.introduced is not None


@dataclass
class Step:
    number: int
    start: str  # the release the consumer is on when the step begins
    stop: str  # the release it ends on
    breaks: list[Fact] = field(default_factory=list)
    moves: list[Fact] = field(default_factory=list)  # deprecated spellings to leave on `stop`
    # what fails on `stop` and a later release undoes: the upgrade to `new` never sees
    # it, the consumer sitting on `stop` does (`add_transient`)
    transient: list[Fact] = field(default_factory=list)

    @property
    def by_code(self) -> dict[str, int]:
        return dict(sorted(Counter(f.lead.code.code for f in self.breaks).items()))

    @property
    def autofixable(self) -> int:
        """Breaks the step's fix rewrites (its moves are not breaks of its upgrade)."""
        return sum(f.autofixable for f in self.breaks)

    @property
    def upgrades(self) -> bool:
        """False for a step that stays on `old` (only moves, before upgrading)."""
        return self.start != self.stop


@dataclass
class Plan:
    releases: list[str]  # old, every release between, new
    facts: list[Fact]
    steps: list[Step]
    transient: list[Fact] = field(default_factory=list)  # of every step, numbered after facts

    @property
    def undated(self) -> list[Fact]:
        return [f for f in self.facts if f.introduced is None]

    def by_release(self) -> list[tuple[str, list[Fact]]]:
        """Each release of the range that brings a fact, with its facts, oldest first."""
        return [
            (version, [f for f in self.facts if f.introduced == index])
            for index, version in enumerate(self.releases)
            if any(f.introduced == index for f in self.facts)
        ]


def _index(release: str | None, versions: list[Version]) -> int | None:
    """Where a release falls in the range: the first release at or after it (one outside
    the range, a pack entry's own, at the end it lies beyond); not a version: None."""
    if release is None:
        return None
    try:
        version = Version(release)
    except InvalidVersion:
        return None
    for index, known in enumerate(versions):
        if version <= known:
            return index
    return len(versions) - 1


def _stops(facts: list[Fact], last: int) -> list[int]:
    """The fewest release indexes such that each fact's window [deprecated, introduced)
    holds one (greedy by the end of the window), and `last`."""
    chosen: list[int] = []
    windows = sorted(
        (f.introduced, f.deprecated) for f in facts if f.windowed and f.deprecated is not None
    )
    for end, begin in windows:
        assert end is not None
        if not any(begin <= stop < end for stop in chosen):
            chosen.append(end - 1)
    return sorted({*chosen, last})


def _last_before(stops: list[int], index: int) -> int:
    return max(stop for stop in stops if stop < index)


def build_plan(findings: list[Finding], releases: list[str]) -> Plan:
    """The plan of the upgrade releases[0] -> releases[-1] for these (dated) findings."""
    versions = [Version(v) for v in releases]
    facts = []
    for group in group_facts(findings):
        lead = group[0]
        introduced = _index(lead.introduced, versions)
        if introduced == 0 and len(releases) > 1:
            introduced = 1  # dated at or before old (a pack entry's): the first upgrade has it
        deprecated = _index(lead.deprecated, versions)
        if deprecated is not None and (introduced is None or deprecated >= introduced):
            deprecated = None  # no window: it warned only once it broke, or after
        facts.append(Fact(group, introduced, deprecated))
    stops = _stops(facts, len(releases) - 1)
    steps = []
    start = 0
    for number, stop in enumerate(stops, 1):
        step = Step(number, releases[start], releases[stop])
        # every window holds a stop, so the last stop before its break lies in it
        step.moves = [
            f
            for f in facts
            if f.windowed and f.introduced is not None and _last_before(stops, f.introduced) == stop
        ]
        breaks = [
            f
            for f in facts
            if not f.windowed and f.introduced is not None and start < f.introduced <= stop
        ]
        step.breaks = sorted(breaks, key=lambda f: f.introduced or 0)  # stable: then as found
        steps.append(step)
        start = stop
    return Plan(releases, facts, steps)


def add_transient(plan: Plan, findings: list[Finding]) -> None:
    """Each step's transient facts: `findings` fail on the releases their `fails_on`
    names (`history/inside.py` over the plan's stops), and neither on old nor on new."""
    for group in group_facts(findings):
        fact = Fact(group, None, None)
        steps = [s for s in plan.steps if s.stop in (group[0].fails_on or [])]
        for step in steps:
            step.transient.append(fact)
        if steps:
            plan.transient.append(fact)
