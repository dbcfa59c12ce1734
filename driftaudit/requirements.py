"""PEP 508 requirements and whether two of them can be installed together, with
`packaging` (one parser for sglang's Requires-Dist and the consumer's pins).

Markers are evaluated in one assumed environment, the one sglang's GPU wheels are built
for: Linux, x86_64, CPython 3.12 (`ASSUMED_ENVIRONMENT`). A requirement whose marker is
false there (`; python_version < "3.10"`, `; sys_platform == "darwin"`) does not apply.
"""

from __future__ import annotations

from packaging.markers import InvalidMarker, Marker, UndefinedComparison
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ASSUMED_ENVIRONMENT = {
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "platform_system": "Linux",
    "sys_platform": "linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "python_version": "3.12",
    "python_full_version": "3.12.0",
    "implementation_version": "3.12.0",
    "extra": "",
}


def parse_requirement(text: str) -> Requirement | None:
    """A PEP 508 requirement, or None when `text` is not one (a path, an option)."""
    try:
        return Requirement(text.strip())
    except InvalidRequirement:
        return None


def normalize_name(name: str) -> str:
    """PEP 503: lower case, runs of `-`, `_`, `.` become `-`."""
    return canonicalize_name(name)


def applies(marker: Marker | str | None) -> bool:
    """Is the marker true in the assumed environment? (no marker: yes)."""
    if marker is None or marker == "":
        return True
    try:
        marker = Marker(marker) if isinstance(marker, str) else marker
        return marker.evaluate(dict(ASSUMED_ENVIRONMENT))
    except (InvalidMarker, UndefinedComparison):
        return True  # cannot tell: assume it applies


def satisfiable(*specifiers: str) -> bool | None:
    """Can one version satisfy every specifier set? None when it cannot be told (an
    `===` arbitrary string, a specifier packaging rejects).

    Pre-releases count as packaging counts them: only when one of the specifiers names
    one (`==0.5.10rc0`, `>=2.0b1`). packaging has no intersection of specifier sets, so
    a witness is looked for among the versions the specifiers name and their neighbours
    (a step above and below each): an intersection of intervals, if not empty, holds one
    of them.
    """
    try:
        combined = SpecifierSet(",".join(s for s in specifiers if s))
    except InvalidSpecifier:
        return None
    if any(spec.operator == "===" for spec in combined):
        return None
    candidates: set[Version] = set()
    for spec in combined:
        text = spec.version.removesuffix(".*")
        try:
            candidates.update(_neighbours(Version(text)))
        except ValueError:  # InvalidVersion, or digits beyond int() limits
            return None
    if not candidates:
        return True  # no specifier at all
    return any(combined.contains(version) for version in candidates)


def _neighbours(version: Version) -> list[Version]:
    """`version` and versions just above and below it: 2.2 -> 2.2.1, 3, 2.3, 1.9999,
    2.1.9999, 2.2.post1, 2.2rc0, 2.2.dev0."""
    release, epoch = version.release, f"{version.epoch}!" if version.epoch else ""
    releases = [(*release, 1)]
    for index, part in enumerate(release):
        releases.append((*release[:index], part + 1))
        if part > 0:
            releases.append((*release[:index], part - 1, 9999))
    texts = [epoch + ".".join(map(str, r)) for r in releases]
    texts += [f"{version.public}.post1", f"{version.public}rc0", f"{version.public}.dev0"]
    out = [version]
    for text in texts:
        try:
            out.append(Version(text))
        except ValueError:
            continue  # e.g. a pre-release of a pre-release
    return out
