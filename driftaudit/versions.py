"""Release versions, ordered as PEP 440 orders them (`packaging.version`):
0.5.10rc0 < 0.5.10 < 0.5.10.post1 < 0.5.14.post1.dev0 < 0.5.14.post1; a local
label (`+cu128`) sorts after its public version."""

from __future__ import annotations

from functools import lru_cache

from packaging.version import Version

from driftaudit.errors import DriftauditError


@lru_cache(maxsize=1024)
def parse_version(text: str, what: str = "version") -> Version:
    """`text` as a Version (a leading `v` is allowed); a DriftauditError naming `what`
    when it is not a PEP 440 version."""
    try:
        return Version(text.strip())
    except (ValueError, TypeError):  # InvalidVersion, or digits beyond int() limits
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise DriftauditError(f"{what} {shown!r} is not a valid PEP 440 version") from None


def in_range(version: str, lower: str, upper: str) -> bool:
    """lower < version <= upper."""
    return parse_version(lower) < parse_version(version) <= parse_version(upper)
