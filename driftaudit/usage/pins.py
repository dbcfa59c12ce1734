"""The consumer's requirement pins, with their lines, and the sglang release it pins.

Read from, in this order: pyproject.toml (`[project] dependencies` and
`optional-dependencies`, via tomllib), requirements*.txt, setup.py (`install_requires`,
`extras_require`, via ast), setup.cfg (`[options] install_requires`, via configparser)
and Dockerfiles (`SGLANG_IMAGE_TAG=v0.5.16`, `lmsysorg/sglang:v0.5.16`, `pip install
"sglang[all]==0.5.16"` in a RUN instruction: their sglang only). Each
requirement is parsed by `packaging` (driftaudit/requirements.py). When none of these at
the root pins an sglang release, the same metadata of the sub-projects below it
(`skyrl-train/pyproject.toml`, any depth, shallowest first) that require sglang is read
too: each sub-project is an environment of its own, and DA004 judges those that disagree.

Each pin knows whether it shares an environment with sglang: a requirements file with
the files it `-r` includes (directly or not), a Dockerfile with the requirements files it
names, is one environment (two files that include a third are two environments that
share it); a pyproject or setup.py extra installs with the main dependencies, and those
go wherever the project is installed. When the consumer declares sglang nowhere, every pin
may meet it. `installed_together` asks the same of two pins (DA004).
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
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
_PIP_INSTALL_RE = re.compile(r"\bpip3?(?:\.\d+)?\s+install\b")  # also `uv pip`, `python -m pip`
# an sglang requirement with a literal specifier (`sglang==${V}` is none), quoted or not
_OPERATOR = r"(?:===?|>=|<=|~=|!=|<|>)\s*[\w.*+!]+"
_SGLANG_SPEC_RE = re.compile(
    rf"(?<![\w.$/-])sglang(?:\[[\w,\s-]*\])?\s*{_OPERATOR}(?:\s*,\s*{_OPERATOR})*(?![\w$])"
)
_SHELL_SEPARATOR_RE = re.compile(r"&&|\|\||;|\|")  # the end of a shell command
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
    group: str | None = None  # the extra (optional-dependencies) it belongs to, if any
    # installed together with sglang: False when the consumer declares sglang only in
    # environments this pin is not part of (`requirements-npu.txt` beside
    # `requirements_sglang.txt`); None when it declares sglang in none
    with_sglang: bool | None = None
    # the files whose installs bring this one in (itself, the files that `-r` include
    # it, the Dockerfiles that name it): it shares an environment with their closures
    environments: frozenset[str] = frozenset()

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
    declares: set[tuple[str, str | None]] = set()  # (file, extra) that require sglang
    includes: dict[str, set[str]] = {}  # requirements file -> files it `-r` includes
    for sources, sub_projects in ((_sources(files), False), (_nested_sources(files), True)):
        if sub_projects and sglang_pin(pins) is not None:
            break  # the root pins sglang: sub-projects are not looked at
        for relpath, reader in sources:
            text = files.by_rel[relpath].text
            if text is None:
                continue
            found, declared = _read(relpath, reader, text)
            if sub_projects and not declared:
                continue  # a sub-project that does not install sglang
            if reader is _from_requirements_txt:
                includes[relpath] = _included(relpath, text)
            elif reader is _from_dockerfile:  # an image installs the files it names
                includes[relpath] = _named_files(text, files)
            declares |= declared
            pins += found
    roots = _environments(includes)
    for pin in pins:
        pin.environments = roots.get(pin.path, frozenset({pin.path}))
    if declares:
        for pin in pins:
            pin.with_sglang = any(_together(pin, path, group, roots) for path, group in declares)
    return pins


def _read(relpath: str, reader, text: str) -> tuple[list[Pin], set[tuple[str, str | None]]]:
    """One file's pins, and the (file, extra) in it that require sglang."""
    found, declared = [], set()
    for line, column, requirement, group in _grouped(reader(text)):
        if _names_sglang(requirement):
            declared.add((relpath, group))
        pin = _pin(relpath, line, column, requirement)
        if pin is not None:
            pin.group = group
            found.append(pin)
    sglang = next((p.exact for p in found if p.name == "sglang" and p.exact), None)
    for pin in found:
        pin.sglang = sglang
    return found, declared


def _names_sglang(text: str) -> bool:
    requirement = parse_requirement(text)
    return requirement is not None and normalize_name(requirement.name) == "sglang"


def _grouped(rows):
    """(line, column, text, extra): readers of extras yield a fourth item."""
    for row in rows:
        yield row if len(row) == 4 else (*row, None)


def _together(
    pin: Pin, path: str, group: str | None, roots: Mapping[str, AbstractSet[str]]
) -> bool:
    """Is `pin` installed in the environment where (path, group) installs sglang? The
    project's main dependencies go wherever the project is installed, sglang's too."""
    if pin.path in PROJECT_FILES and pin.group is None:
        return True
    if pin.path != path:
        return bool(roots.get(pin.path, {pin.path}) & roots.get(path, {path}))
    # an extra installs with the main dependencies, not with another extra
    return pin.group is None or group is None or pin.group == group


def _environments(includes: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """file -> the files whose installs bring it in (itself, each file that `-r`
    includes it, directly or not, each Dockerfile that names it): one environment per
    such root. Two files share an environment when they share a root; two files that
    both include a third do not (`requirements-rocm.txt` and `requirements-cuda.txt`
    over `requirements-base.txt`, two Dockerfiles that install `requirements.txt`)."""
    roots: dict[str, set[str]] = {}
    for root in includes:
        seen, todo = {root}, [root]
        while todo:
            for target in includes.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        for path in seen:
            roots.setdefault(path, {path}).add(root)
    return {path: frozenset(found) for path, found in roots.items()}


def _named_files(text: str, files: ConsumerFiles) -> set[str]:
    """The top-level requirements files a Dockerfile names (`COPY requirements.txt`,
    `pip install -r requirements-rocm.txt`): installed in the image with its sglang."""
    names = {f.rel for f in files if "/" not in f.rel and fnmatch.fnmatch(f.rel, _REQ_GLOB)}
    return {name for name in names if re.search(rf"(?<![\w.-]){re.escape(name)}\b", text)}


_REQ_GLOB = "requirements*.txt"
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")  # the project's own metadata
_INCLUDE_RE = re.compile(r"^\s*(?:-r|--requirement)[\s=]\s*(\S+)")


def _included(relpath: str, text: str) -> set[str]:
    """The files `relpath` includes with `-r other.txt` (relative to its folder)."""
    folder = Path(relpath).parent
    found = set()
    for line in text.splitlines():
        if match := _INCLUDE_RE.match(line):
            found.add((folder / match.group(1)).as_posix())
    return found


def installed_together(a: Pin, b: Pin) -> bool:
    """Are the two pins installed in one environment? (as `with_sglang` judges it: the
    project's main dependencies go everywhere, an extra with them, a requirements file
    with its `-r` component and the Dockerfile that names it)."""
    roots = {a.path: a.environments, b.path: b.environments}
    return _together(a, b.path, b.group, roots) or _together(b, a.path, a.group, roots)


def sglang_pin(pins: list[Pin]) -> Pin | None:
    """The first exact sglang pin (the release --old defaults to), or None."""
    return next((p for p in pins if p.name == "sglang" and p.exact), None)


def read_pin(consumer: ConsumerFiles | Path) -> tuple[str, str] | None:
    """(version, 'file:line') of the consumer's sglang pin, or None."""
    pin = sglang_pin(read_pins(consumer))
    return None if pin is None else (pin_version(pin), pin.where)


def pin_version(pin: Pin) -> str:
    """The release an exact pin names (`v0.5.16` from an image tag: 0.5.16)."""
    return (pin.exact or "").removeprefix("v")


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


def _nested_sources(files: ConsumerFiles):
    """(relative path, reader) of the sub-projects' metadata below the root
    (`skyrl-train/pyproject.toml`, `serving/requirements.txt`), shallowest first: read
    when the root pins no sglang release. The walk's exclusions hold (`--exclude`,
    .gitignore, virtualenvs and build output are not in the index)."""
    readers = {"pyproject.toml": _from_pyproject, "setup.py": _from_setup_py}
    readers["setup.cfg"] = _from_setup_cfg
    found = []
    for file in files:
        if "/" not in file.rel:
            continue
        name = file.rel.rpartition("/")[2]
        reader = readers.get(name)
        if reader is None and fnmatch.fnmatchcase(name, _REQ_GLOB):
            reader = _from_requirements_txt
        if reader is not None:
            found.append((file.rel.count("/"), file.rel, reader))
    for _, rel, reader in sorted(found, key=lambda row: row[:2]):
        yield rel, reader


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
    except (tomllib.TOMLDecodeError, RecursionError, MemoryError):  # nested too deeply
        return
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    strings: list[tuple[str, str | None]] = []
    for table in (project, data):  # [project], or a bare fragment `dependencies = [...]`
        if isinstance(table.get("dependencies"), list):
            strings += [(s, None) for s in table["dependencies"]]
    optional = project.get("optional-dependencies")
    for name, group in optional.items() if isinstance(optional, dict) else ():
        strings += [(s, name) for s in group] if isinstance(group, list) else []
    strings = [(s, g) for s, g in strings if isinstance(s, str)]
    yield from _locate(text, [s for s, _ in strings], groups=[g for _, g in strings])


def _from_setup_cfg(text: str):
    import configparser  # setup.cfg is rare: not imported on every run

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
    lists = {  # module-level `NAME = [...]`, which extras_require may name
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            name, value = node.arg, node.value
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("install_requires", "extras_require")
            for t in node.targets
        ):
            name = next(t.id for t in node.targets if isinstance(t, ast.Name))
            value = node.value
        else:
            continue
        if isinstance(value, ast.Name):
            if value.id == name:
                continue  # `install_requires=install_requires`: read at its assignment
            value = lists.get(value.id, value)
        if name == "install_requires":
            yield from _setup_strings(value, None)
        elif isinstance(value, ast.Dict):
            for key, group in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    group = lists.get(group.id, group) if isinstance(group, ast.Name) else group
                    yield from _setup_strings(group, key.value)


def _setup_strings(value: ast.expr, group: str | None):
    for item in value.elts if isinstance(value, (ast.List, ast.Tuple)) else ():
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            yield item.lineno, item.col_offset + 2, item.value, group


def _from_dockerfile(text: str):
    """The image's sglang: its tag, or a `pip install "sglang[all]==X"` in a RUN
    instruction (its lines joined at a trailing backslash; comment lines skipped)."""
    installing = False  # inside a `pip install` command, continued from the line above
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        if match := _IMAGE_RE.search(line):
            yield number, match.start(1) + 1, f"sglang=={match.group(1)}"
        start = 0
        for separator in [*_SHELL_SEPARATOR_RE.finditer(line), None]:
            end = separator.start() if separator else len(line)
            command = _PIP_INSTALL_RE.search(line, start, end)
            if installing or command:
                begin = command.end() if command else start
                for found in _SGLANG_SPEC_RE.finditer(line, begin, end):
                    yield number, found.start() + 1, found.group(0)
                installing = True
            if separator:
                installing, start = False, separator.end()
        installing = installing and line.rstrip().endswith("\\")


def _locate(text: str, strings: list[str], quoted: bool = True, groups: list | None = None):
    """tomllib and configparser drop positions: each string is found in the text, in
    order, after the previous one (hand-written for that reason only). With `groups`,
    each row carries its string's group (extra) as a fourth item."""
    lines = text.splitlines()
    start = 0
    for index, string in enumerate(strings):
        needle = [f'"{string}"', f"'{string}'"] if quoted else [string]
        for number in range(start, len(lines)):
            column = next((lines[number].find(n) for n in needle if n in lines[number]), -1)
            if column >= 0 and not lines[number].lstrip().startswith("#"):
                start = number
                row = (number + 1, column + (2 if quoted else 1), string)
                yield row if groups is None else (*row, groups[index])
                break
