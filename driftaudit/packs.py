"""Rule packs: declarative entries for what code alone cannot tell (top-level `rules/`).

One TOML file per sglang release range. Each entry says where it applies
(`introduced`: the release that made the change), what consumer code it is about
(`pattern`), what to tell the user (`message`, `evidence`), and optionally how to fix
it (`codemod`: steps built from the codemod primitives). A comparison `--old A --new B`
uses every entry with A < introduced <= B. Packs are validated on load; an error
names the file and the entry.

The packs shipped with driftaudit live in the repository's top-level `rules/`, which
the build maps to the package `driftaudit.builtin_packs` (see setup.py): an installed
copy reads them with importlib.resources; imported from a checkout (the tests, `python -m
driftaudit` in the repository), where no build has mapped them, it reads `rules/` itself
(`builtin_packs`). tests/test_packaging.py checks that both give the same packs and the
same findings.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from driftaudit.errors import DriftauditError
from driftaudit.regexes import RegexRefused, bounded
from driftaudit.versions import in_range, parse_version

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PATTERN_FIELDS = {
    "member": ({"class", "member"}, {"access"}),
    # `value = "maybe-none"`: only where the keyword's value may be None (not a literal,
    # nor a None fallback such as `x or "auto"`: usage/fallbacks.py)
    "call": ({"symbol"}, {"keyword", "value"}),
    "import": ({"symbol"}, set()),
    "reference": ({"symbol"}, set()),
    # `unless`: a line it also matches is no place (a pin that is fine); `(?P<at>...)` in
    # `regex`: the place is where that group starts (the match's start otherwise)
    "text": ({"regex"}, {"glob", "unless"}),
}
REGEX_FIELDS = ("regex", "unless")
ACCESS = {"store", "read", "call", "any"}
VALUES = {"any", "maybe-none"}
SEVERITIES = {"error", "warning", "info"}
BUILTIN_PACKS = "driftaudit.builtin_packs"
# A `text` pattern is matched line by line, against lines of at most this length (longer
# ones, minified or generated, are skipped), by RE2 (`regexes.bounded`: linear time).
MAX_TEXT_LINE = 4000


@dataclass
class PackEntry:
    id: str
    pack: str  # the file it comes from
    introduced: str
    message: str
    evidence: str
    patterns: list[dict]  # any of them locates the consumer code
    severity: str = "warning"
    within: dict | None = None  # a pattern that must also match in the same file
    codemod: list[dict] = field(default_factory=list)
    after: dict | None = None  # a pattern that must match earlier in the same function

    @property
    def code(self) -> str:
        return "DA901" if self.codemod else "DA902"


def pack_directories(extra: list[Path] | None = None) -> list[Path | Traversable]:
    """Where packs are found: --packs DIR, else $DRIFTAUDIT_PACKS (or its old name
    $DRIFTAUDIT_RULES), else the built-in packs. A directory named either way must exist."""
    env = os.environ.get("DRIFTAUDIT_PACKS") or os.environ.get("DRIFTAUDIT_RULES")
    if not extra and env:
        extra = [Path(env)]
    if extra:
        for directory in extra:
            if not directory.is_dir():
                raise DriftauditError(f"packs directory {str(directory)!r} does not exist")
        return list(extra)
    return [builtin_packs()]


def builtin_packs() -> Path | Traversable:
    """The packs shipped with driftaudit: the installed package `driftaudit.builtin_packs`,
    or, for a package imported from its checkout, the repository's `rules/` beside it."""
    try:
        return resources.files(BUILTIN_PACKS)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[1] / "rules"


def load_packs(
    directories: list[Path | Traversable], old: str | None, new: str | None
) -> list[PackEntry]:
    """Every valid entry that applies to old -> new (all entries when versions unknown)."""
    entries: list[PackEntry] = []
    seen: set[str] = set()
    builtin = builtin_packs()
    for directory in directories:
        # the shipped packs' codemods are checked by the test suite (test_packs), not on
        # every run: that check builds the primitives, and they import libcst
        trusted = directory == builtin
        packs = sorted((p for p in directory.iterdir() if p.name.endswith(".toml")), key=_name)
        for path in packs:
            key = str(path.resolve()) if isinstance(path, Path) else str(path)
            if key in seen or not path.is_file():
                continue
            seen.add(key)
            entries += load_pack(path, check_codemods=not trusted)
    if old is None or new is None:
        return entries
    return [e for e in entries if in_range(e.introduced, old, new)]


def _name(path: Path | Traversable) -> str:
    return path.name


def load_pack(path: Path | Traversable, check_codemods: bool = True) -> list[PackEntry]:
    """The entries of one pack, validated (`check_codemods`: also build each codemod
    step's primitive, which checks its parameters: it imports libcst)."""

    def fail(where: str, problem: str) -> DriftauditError:
        return DriftauditError(f"rule pack {path.name}: {where}: {problem}")

    def version(text: str, where: str, what: str):
        try:
            return parse_version(text, what)
        except DriftauditError as exc:
            raise fail(where, str(exc)) from None

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise fail("file", f"not valid TOML ({exc})") from None
    pack = data.get("pack")
    if not isinstance(pack, dict):
        raise fail("file", "missing [pack] table with name, from, to")
    for key in ("name", "from", "to"):
        if not isinstance(pack.get(key), str):
            raise fail("[pack]", f"`{key}` must be a string")
    if version(pack["from"], "[pack]", "`from`") >= version(pack["to"], "[pack]", "`to`"):
        raise fail("[pack]", "`from` must be an older release than `to`")
    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list):
        raise fail("file", "`entry` must be an array of tables ([[entry]])")
    entries, ids = [], set()
    for index, raw in enumerate(raw_entries, start=1):
        where = f"entry {raw.get('id', index)!r}" if isinstance(raw, dict) else f"entry {index}"
        if not isinstance(raw, dict):
            raise fail(where, "must be a table")
        for key in ("id", "introduced", "message", "evidence"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise fail(where, f"`{key}` must be a non-empty string")
        if raw["id"] in ids:
            raise fail(where, "duplicate id")
        ids.add(raw["id"])
        version(raw["introduced"], where, "`introduced`")
        if not in_range(raw["introduced"], pack["from"], pack["to"]):
            raise fail(where, f"introduced {raw['introduced']} is outside the pack's range")
        severity = raw.get("severity", "warning")
        if not isinstance(severity, str) or severity not in SEVERITIES:
            raise fail(where, f"severity must be one of {sorted(SEVERITIES)}")
        patterns = raw.get("pattern")
        patterns = patterns if isinstance(patterns, list) else [patterns]
        if not patterns:
            raise fail(where, "`pattern` must be a pattern or a non-empty list of them")
        for pattern in patterns:
            _check_pattern(pattern, lambda p, w=where: fail(w, p))
        for condition in ("within", "after"):
            if raw.get(condition) is not None:
                check = lambda p, w=where, c=condition: fail(w, f"{c}: {p}")  # noqa: E731
                _check_pattern(raw[condition], check)
                if raw[condition]["kind"] == "text":
                    raise check("a text pattern locates lines, not code: use it as `pattern`")
        codemod = raw.get("codemod", [])
        if not isinstance(codemod, list):
            raise fail(where, "`codemod` must be a list of steps")
        for number, step in enumerate(codemod, start=1):
            primitive = step.get("primitive") if isinstance(step, dict) else None
            if not isinstance(primitive, str):
                raise fail(where, f"codemod step {number}: unknown primitive {primitive!r}")
            if not check_codemods:
                continue
            from driftaudit.fix.codemods import PRIMITIVES  # libcst: only to check a step

            if primitive not in PRIMITIVES:
                raise fail(where, f"codemod step {number}: unknown primitive {primitive!r}")
            try:  # against the primitive's declared `parameters`
                PRIMITIVES[primitive]({k: v for k, v in step.items() if k != "primitive"})
            except ValueError as exc:
                raise fail(where, f"codemod step {number}: {exc}") from None
        entries.append(
            PackEntry(
                raw["id"],
                path.name,
                raw["introduced"],
                raw["message"].strip(),
                raw["evidence"].strip(),
                patterns,
                severity,
                raw.get("within"),
                codemod,
                raw.get("after"),
            )
        )
    return entries


def _check_pattern(pattern, fail) -> None:
    kind = pattern.get("kind") if isinstance(pattern, dict) else None
    if not isinstance(kind, str) or kind not in PATTERN_FIELDS:
        raise fail(f"pattern needs a `kind` of {sorted(PATTERN_FIELDS)}")
    needed, optional = PATTERN_FIELDS[pattern["kind"]]
    keys = set(pattern) - {"kind"}
    if missing := needed - keys:
        raise fail(f"{pattern['kind']} pattern needs {sorted(missing)}")
    if unknown := keys - needed - optional:
        raise fail(f"{pattern['kind']} pattern does not take {sorted(unknown)}")
    for key in sorted(keys):
        if not isinstance(pattern[key], str) or not pattern[key].strip():
            raise fail(f"{pattern['kind']} pattern: `{key}` must be a non-empty string")
    if pattern.get("access", "any") not in ACCESS:
        raise fail(f"access must be one of {sorted(ACCESS)}")
    if pattern.get("value", "any") not in VALUES:
        raise fail(f"value must be one of {sorted(VALUES)}")
    if pattern["kind"] == "text":
        for key in REGEX_FIELDS:
            if key in pattern:
                try:
                    bounded(pattern[key])
                except RegexRefused as exc:
                    raise fail(f"`{key}`: {exc}") from None
        try:
            PurePosixPath("x").match(pattern.get("glob", "*"))
        except ValueError as exc:
            raise fail(f"glob {pattern['glob']!r} is not a path pattern ({exc})") from None
