"""When each finding's change came, and since when sglang warned about it: read from
the states of the names a finding is about in every release of the range (`timeline`).

A finding is about its symbol and about the flags and env vars its message names
(`--cuda-graph-bs`, `SGLANG_X` between backquotes). Its change is what differs between
old and new in their states (an aspect: presence, a parameter, a type, a default, a
flag's field); when the message names some of those (a parameter, a flag, a variable),
only those. `introduced` is the first release from which, up to new, those aspects no
longer read as in old: the release that brought the change and kept it (a change
undone and redone later is dated by its last coming). `deprecated` is the first release
of the range (old itself, when it already warned) where a name the change is about was
marked deprecated: a `DeprecationWarning`, a `@deprecated` decorator, a deprecated flag
or env var (`drift/deprecations.py`, the ServerArgs and env-var surfaces).

A finding that already carries its release (a pack entry's) keeps it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from driftaudit.history.states import State, spelling_kind
from driftaudit.history.timeline import changed_aspects
from driftaudit.progress import step

if TYPE_CHECKING:
    from driftaudit.findings import Finding
    from driftaudit.history.timeline import Timeline

_QUOTED = re.compile(r"`([^`\s]+)`")


def subjects(finding: Finding) -> list[str]:
    """The names a finding is about: its symbol, and the flags and env vars its message
    names."""
    names = [finding.symbol] if finding.symbol and spelling_kind(finding.symbol) else []
    for quoted in _QUOTED.findall(finding.message):
        if spelling_kind(quoted) in ("flag", "env") and quoted not in names:
            names.append(quoted)
    return names


def relevant_aspects(finding: Finding, states: dict[str, list[State]]) -> list[tuple[str, str]]:
    """(name, aspect) pairs that differ between old and new, narrowed to the aspect the
    finding's code is about (`Code.aspect`), else to those the message names when it
    names any."""
    changed = [
        (name, aspect)
        for name, row in states.items()
        for aspect in changed_aspects(row[0], row[-1])
    ]
    if finding.code.aspect:  # the code says what its change is about
        own = [(name, aspect) for name, aspect in changed if aspect == finding.code.aspect]
        if own:
            return own
    quoted = set(_QUOTED.findall(finding.message))
    named = [
        (name, aspect)
        for name, aspect in changed
        if (name in quoted and spelling_kind(name) in ("flag", "env"))
        or (aspect.startswith(("param:", "position:")) and aspect.partition(":")[2] in quoted)
    ]
    return named or changed


def _introduced(versions: list[str], states: dict, relevant: list) -> str | None:
    def seen(index: int) -> tuple:
        return tuple(states[name][index].aspects.get(aspect) for name, aspect in relevant)

    if not relevant:
        return None
    before = seen(0)
    first = None
    for index in range(1, len(versions)):
        if seen(index) == before:
            first = None  # back as in old: the change is yet to come
        elif first is None:
            first = index
    return versions[first] if first is not None else None


def _deprecated(versions: list[str], states: dict, names: list[str]) -> str | None:
    for index, version in enumerate(versions):
        if any(states[name][index].deprecated for name in names):
            return version
    return None


def date_findings(findings: list[Finding], timeline: Timeline) -> None:
    """Set `introduced` (where unset) and `deprecated` on each finding, in place."""
    wanted = list(dict.fromkeys(name for f in findings for name in subjects(f)))
    releases = len(timeline.versions)
    step(f"dating {len(findings)} findings: {len(wanted)} names in {releases} releases")
    states = timeline.states(wanted)
    versions = timeline.versions
    for finding in findings:
        own = {name: states[name] for name in subjects(finding)}
        relevant = relevant_aspects(finding, own)
        if finding.introduced is None:
            finding.introduced = _introduced(versions, own, relevant)
        names = list(dict.fromkeys(name for name, _ in relevant)) or list(own)
        finding.deprecated = _deprecated(versions, own, names)
        finding.dated = True
