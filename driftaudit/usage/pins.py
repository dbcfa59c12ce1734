"""The consumer's own dependency pins (requirements*.txt, pyproject.toml), with lines."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_REQUIREMENT = re.compile(
    r"""^\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*((?:[<>=!~]=?|===)\s*[^;"',\s]+"""
    r"""(?:\s*,\s*(?:[<>=!~]=?)\s*[^;"',\s]+)*)"""
)


@dataclass
class Pin:
    path: str
    line: int
    column: int
    name: str  # normalised: lower case, `_` -> `-`
    specifier: str  # "==2.9.1", ">=4.0,<5"
    sglang: str | None = None  # the sglang version the same file pins (another stack?)


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(root: Path) -> list[Pin]:
    pins: list[Pin] = []
    sglang_pins: dict[Path, str | None] = {}
    files = sorted(root.glob("requirements*.txt")) + [root / "pyproject.toml"]
    for path in files:
        if not path.is_file():
            continue
        first = len(pins)
        in_dependencies = path.suffix == ".txt"
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            stripped = line.strip()
            if path.suffix == ".toml":
                if re.match(r"^(dependencies|[\w-]+)\s*=\s*\[", stripped):
                    in_dependencies = stripped.startswith("dependencies") or in_dependencies
                if stripped.startswith("["):
                    in_dependencies = stripped.startswith("dependencies")
                if not in_dependencies:
                    continue
                stripped = re.sub(r"^dependencies\s*=\s*\[", "", stripped)
            if stripped.startswith(("#", "-")):
                continue
            for match in _REQUIREMENT.finditer(stripped):
                name = normalise(match.group(1))
                if name == "sglang":
                    sglang = re.match(r"===?(.+)", match.group(3).replace(" ", ""))
                    sglang_pins[path] = sglang.group(1) if sglang else None
                    continue
                column = line.find(match.group(1)) + 1
                specifier = match.group(3).replace(" ", "")
                pins.append(Pin(path.relative_to(root).as_posix(), number, column, name, specifier))
        for pin in pins[first:]:
            pin.sglang = sglang_pins.get(path)
    return pins
