"""sglang's declared dependencies: the `Requires-Dist` lines of the wheel's
`sglang-*.dist-info/METADATA`, and how they change between two releases.

Each line is parsed by `packaging` (driftaudit/requirements.py). The `extra == "x"`
clause of the marker is lifted out into `extra` (the sglang extra that pulls the
requirement in); what remains of the marker is kept in `marker`. Names are normalised as
PEP 503 does; specifiers are sorted and unspaced, so `<0.15, >=0.14.1` and
`>=0.14.1,<0.15` are equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.requirements import normalize_name
from driftaudit.requirements import parse_requirement as parse_pep508
from driftaudit.sources.tree import distribution

_EXTRA_RE = re.compile(r"""extra\s*==\s*(['"])(?P<extra>[^'"]+)\1""")


@dataclass
class Requirement:
    name: str  # normalised: sglang-kernel, flashinfer-python
    specifier: str  # normalised: "==0.4.10", "<0.15,>=0.14.1", "" when unpinned, "@ url"
    marker: str | None  # environment marker without the extra clause
    extra: str | None  # the sglang extra that requires it ("test", "diffusion")
    raw: str  # the Requires-Dist value as written
    package_extras: list[str] = field(default_factory=list)  # flashinfer_python[cu13]

    def to_json(self) -> dict:
        data = {
            "name": self.name,
            "specifier": self.specifier,
            "marker": self.marker,
            "extra": self.extra,
            "raw": self.raw,
        }
        if self.package_extras:
            data["package_extras"] = list(self.package_extras)
        return data

    @classmethod
    def from_json(cls, data: dict) -> Requirement:
        return cls(
            data["name"],
            data["specifier"],
            data.get("marker"),
            data.get("extra"),
            data["raw"],
            list(data.get("package_extras") or []),
        )


def parse_requires_dist(raw: str) -> Requirement | None:
    """One Requires-Dist value, or None when it is not a PEP 508 requirement."""
    parsed = parse_pep508(raw)
    if parsed is None:
        return None
    # packaging writes markers back normalised (double quotes, single spaces), so the
    # extra clause is found and cut out of that text
    marker = str(parsed.marker) if parsed.marker is not None else None
    extra = None
    if marker:
        found = _EXTRA_RE.search(marker)
        if found:
            extra = normalize_name(found.group("extra"))
            marker = _strip_extra(marker, found)
    if parsed.url:
        specifier = "@ " + parsed.url
    else:
        specifier = ",".join(sorted(str(s) for s in parsed.specifier))
    extras = sorted(normalize_name(e) for e in parsed.extras)
    return Requirement(normalize_name(parsed.name), specifier, marker, extra, raw.strip(), extras)


def _strip_extra(marker: str, found: re.Match) -> str | None:
    """The marker without its `extra == "x"` clause (and the `and` that joined it)."""
    before, after = marker[: found.start()], marker[found.end() :]
    before = re.sub(r"\s*\band\s*$", "", before)
    after = re.sub(r"^\s*and\b\s*", "", after)
    rest = (before + (" and " if before.strip() and after.strip() else "") + after).strip()
    while rest.startswith("(") and rest.endswith(")") and _balanced(rest[1:-1]):
        rest = rest[1:-1].strip()
    return rest or None


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def read_requirements(root: Path) -> list[Requirement]:
    """The Requires-Dist of `root/sglang-*.dist-info/METADATA` (first one found), in file
    order; [] for a tree without dist-info (a checkout)."""
    dist = distribution(Path(root))
    raws = (dist.requires or []) if dist is not None else []
    parsed = (parse_requires_dist(raw) for raw in raws)
    return [requirement for requirement in parsed if requirement is not None]


def diff_requirements(old: list[Requirement], new: list[Requirement]) -> list[dict]:
    """added / removed / changed requirements, sorted by (extra, name).

    Entries are matched by (name, extra, marker), then what is left by (name, extra)
    (a marker change). A requirement of an extra (`extra == "test"`) is reported only
    when both releases have it (a changed pin); extras-only additions and removals are
    left out. Each dict: change, name, extra, old / new specifier, old_marker /
    new_marker, old_raw / new_raw (None on the missing side)."""
    old_by = {_key(r): r for r in old}
    new_by = {_key(r): r for r in new}
    pairs: list[tuple[Requirement | None, Requirement | None]] = []
    old_left = [r for k, r in old_by.items() if k not in new_by]
    new_left = [r for k, r in new_by.items() if k not in old_by]
    for key, requirement in old_by.items():
        if key in new_by:
            pairs.append((requirement, new_by[key]))
    loose_old: dict[tuple, list[Requirement]] = {}
    loose_new: dict[tuple, list[Requirement]] = {}
    for requirement in old_left:
        loose_old.setdefault((requirement.name, requirement.extra), []).append(requirement)
    for requirement in new_left:
        loose_new.setdefault((requirement.name, requirement.extra), []).append(requirement)
    for key in sorted(set(loose_old) | set(loose_new), key=lambda k: (k[1] or "", k[0])):
        olds, news = loose_old.get(key, []), loose_new.get(key, [])
        if len(olds) == 1 and len(news) == 1:
            pairs.append((olds[0], news[0]))
        else:
            pairs.extend((r, None) for r in olds)
            pairs.extend((None, r) for r in news)
    out = []
    for before, after in pairs:
        entry = _entry(before, after)
        if entry is not None:
            out.append(entry)
    return sorted(out, key=lambda e: (e["extra"] or "", e["name"], e["change"]))


def _key(requirement: Requirement) -> tuple:
    return requirement.name, requirement.extra, requirement.marker


def _entry(before: Requirement | None, after: Requirement | None) -> dict | None:
    some = before or after
    assert some is not None
    if before is not None and after is not None:
        if (before.specifier, before.marker, before.package_extras) == (
            after.specifier,
            after.marker,
            after.package_extras,
        ):
            return None
        change = "changed"
    elif some.extra is not None:
        return None  # an extras-only entry on one side only
    else:
        change = "added" if before is None else "removed"
    return {
        "change": change,
        "name": some.name,
        "extra": some.extra,
        "old": before.specifier if before else None,
        "new": after.specifier if after else None,
        "old_marker": before.marker if before else None,
        "new_marker": after.marker if after else None,
        "old_raw": before.raw if before else None,
        "new_raw": after.raw if after else None,
    }
