"""The consumer's requirement pins, with their lines, and the sglang release it pins.

Read from, in this order: pyproject.toml (`[project] dependencies` and
`optional-dependencies`, via tomllib), requirements*.txt, setup.py (`install_requires`,
via ast), setup.cfg (`[options] install_requires`, via configparser) and Dockerfiles
(`SGLANG_IMAGE_TAG=v0.5.16`, `lmsysorg/sglang:v0.5.16`). Each requirement is parsed by
`packaging` (driftaudit/requirements.py).
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet

from driftaudit.requirements import normalize_name, parse_requirement
from driftaudit.usage.files import ConsumerFiles

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# an image tag holds a version and maybe a variant: v0.5.10rc0, v0.5.16-rocm720-mi35x
_IMAGE_RE = re.compile(
    r"(?:SGLANG_IMAGE_TAG\s*[=:]\s*|lmsysorg/sglang:)"
    r"v?(\d+(?:\.\d+)+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)"
)
_TRAILER_RE = re.compile(r"\s(?:#|--?[A-Za-z])")  # a comment or an option (--hash=...)


@dataclass
class Pin:
    path: str
    line: int
    column: int
    name: str  # normalised (PEP 503)
    specifier: str  # "==2.9.1", ">=4.0,<5" (sorted)
    marker: str | None = None  # `python_version < "3.10"`, as packaging writes it
    sglang: str | None = None  # the sglang version the same file pins (another stack?)

    @property
    def exact(self) -> str | None:
        """The version of an `==X` / `===X` pin (no wildcard), else None."""
        specs = list(SpecifierSet(self.specifier))
        if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
            return specs[0].version
        return None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def read_pins(consumer: ConsumerFiles | Path) -> list[Pin]:
    """Every pinned requirement of the consumer (names with a specifier), sglang's
    included, in the order of the files above; read through the consumer's file index."""
    files = consumer if isinstance(consumer, ConsumerFiles) else ConsumerFiles(Path(consumer))
    pins: list[Pin] = []
    for relpath, reader in _sources(files):
        text = files.get(relpath).text
        if text is None:
            continue
        found = [
            pin
            for line, column, requirement in reader(text)
            if (pin := _pin(relpath, line, column, requirement)) is not None
        ]
        sglang = next((p.exact for p in found if p.name == "sglang" and p.exact), None)
        for pin in found:
            pin.sglang = sglang
        pins += found
    return pins


def sglang_pin(pins: list[Pin]) -> tuple[str, str] | None:
    """(version, 'file:line') of the first exact sglang pin, or None."""
    for pin in pins:
        if pin.name == "sglang" and pin.exact:
            return pin.exact.removeprefix("v"), pin.where
    return None


def read_pin(consumer: ConsumerFiles | Path) -> tuple[str, str] | None:
    """(version, 'file:line') of the consumer's sglang pin, or None."""
    return sglang_pin(read_pins(consumer))


def _sources(files: ConsumerFiles):
    """(relative path, reader) of the files that pin requirements, in a fixed order."""
    present = {file.rel for file in files}

    def matching(pattern: str) -> list[str]:
        return sorted(rel for rel in present if fnmatch.fnmatchcase(rel, pattern))

    for name in ("pyproject.toml",):
        if name in present:
            yield name, _from_pyproject
    for rel in matching("requirements*.txt"):
        if "/" not in rel:
            yield rel, _from_requirements_txt
    for name, reader in (("setup.py", _from_setup_py), ("setup.cfg", _from_setup_cfg)):
        if name in present:
            yield name, reader
    for rel in matching("Dockerfile*") + matching("docker/Dockerfile*"):
        if rel.count("/") == rel.startswith("docker/"):
            yield rel, _from_dockerfile


def _pin(path: str, line: int, column: int, text: str) -> Pin | None:
    requirement = parse_requirement(text)
    if requirement is None or not requirement.specifier:
        return None
    specifier = ",".join(sorted(str(s) for s in requirement.specifier))
    marker = str(requirement.marker) if requirement.marker is not None else None
    return Pin(path, line, column, normalize_name(requirement.name), specifier, marker)


# ---- one reader per file kind: (line, column, requirement text) ---------------------


def _from_requirements_txt(text: str):
    for number, line in enumerate(text.splitlines(), 1):
        stripped = _TRAILER_RE.split(line, maxsplit=1)[0].strip()
        if not stripped or stripped.startswith(("#", "-")):
            continue  # comments, options (-r, -e, --extra-index-url)
        yield number, line.find(stripped) + 1, stripped.rstrip("\\").strip()


def _from_pyproject(text: str):
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    strings = []
    for table in (project, data):  # [project], or a bare fragment `dependencies = [...]`
        if isinstance(table.get("dependencies"), list):
            strings += table["dependencies"]
    optional = project.get("optional-dependencies")
    for group in optional.values() if isinstance(optional, dict) else ():
        strings += list(group) if isinstance(group, list) else []
    yield from _locate(text, [s for s in strings if isinstance(s, str)])


def _from_setup_cfg(text: str):
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
        value = parser.get("options", "install_requires", fallback="")
    except configparser.Error:
        return
    yield from _locate(text, [s.strip() for s in value.splitlines() if s.strip()], quoted=False)


def _from_setup_py(text: str):
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            value = node.value
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "install_requires" for t in node.targets
        ):
            value = node.value
        else:
            continue
        for item in value.elts if isinstance(value, (ast.List, ast.Tuple)) else ():
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                yield item.lineno, item.col_offset + 2, item.value


def _from_dockerfile(text: str):
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        if match := _IMAGE_RE.search(line):
            yield number, match.start(1) + 1, f"sglang=={match.group(1)}"


def _locate(text: str, strings: list[str], quoted: bool = True):
    """tomllib and configparser drop positions: each string is found in the text, in
    order, after the previous one (hand-written for that reason only)."""
    lines = text.splitlines()
    start = 0
    for string in strings:
        needle = [f'"{string}"', f"'{string}'"] if quoted else [string]
        for number in range(start, len(lines)):
            column = next((lines[number].find(n) for n in needle if n in lines[number]), -1)
            if column >= 0 and not lines[number].lstrip().startswith("#"):
                start = number
                yield number + 1, column + (2 if quoted else 1), string
                break
