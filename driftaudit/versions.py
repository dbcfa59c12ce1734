"""Release versions, compared without a dependency: 0.5.9 < 0.5.13.post1 < 0.5.14."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+)|(post|dev|rc|a|b)(\d*)")


def version_key(version: str) -> tuple:
    version = version.strip().lstrip("v")
    release, _, rest = version.partition("+")[0].partition(".post")
    numbers = tuple(int(p) for p in re.findall(r"\d+", release.split("rc")[0]))
    post = int(rest or 0) + 1 if ".post" in version else 0
    return numbers + (0,) * (4 - len(numbers)) + (post,)


def in_range(version: str, lower: str, upper: str) -> bool:
    """lower < version <= upper."""
    return version_key(lower) < version_key(version) <= version_key(upper)
