"""Read the sglang version a consumer pins, so `--old` may be omitted.

Looked for, in order: pyproject.toml, requirements*.txt, setup.py / setup.cfg,
Dockerfiles (`SGLANG_IMAGE_TAG=v0.5.16`, `lmsysorg/sglang:v0.5.16`).
"""

from __future__ import annotations

import re
from pathlib import Path

_REQUIREMENT_RE = re.compile(
    r"""(?<![\w-])sglang(?:\[[^\]]*\])?\s*===?\s*v?(\d+(?:\.\d+)+(?:\.post\d+)?)"""
)
_IMAGE_RE = re.compile(
    r"(?:SGLANG_IMAGE_TAG\s*[=:]\s*|lmsysorg/sglang:)v?(\d+(?:\.\d+)+(?:\.post\d+)?)"
)


def _candidates(root: Path) -> list[tuple[Path, re.Pattern]]:
    files: list[tuple[Path, re.Pattern]] = [(root / "pyproject.toml", _REQUIREMENT_RE)]
    files += [(p, _REQUIREMENT_RE) for p in sorted(root.glob("requirements*.txt"))]
    files += [(root / name, _REQUIREMENT_RE) for name in ("setup.py", "setup.cfg")]
    dockerfiles = sorted(root.glob("Dockerfile*")) + sorted(root.glob("docker/Dockerfile*"))
    files += [(p, _IMAGE_RE) for p in dockerfiles]
    return files


def read_pin(root: Path) -> tuple[str, str] | None:
    """(version, 'file:line') of the consumer's sglang pin, or None."""
    for path, pattern in _candidates(root):
        if not path.is_file():
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            match = pattern.search(line)
            if match:
                return match.group(1), f"{path.relative_to(root)}:{lineno}"
    return None
