"""Settings from the consumer's `[tool.driftaudit]` (pyproject.toml) or driftaudit.toml.

Keys: old, new, fail-on, baseline (the baseline file, relative to the consumer root),
exclude (list of globs), wrap-prefixes (the prefixes under
which the consumer re-exposes sglang's flags, e.g. ["--sglang-"]; common ones are
detected anyway). Command-line options win. Any other key, or a value of the wrong
type, is an error that names it. `old`/`new` from config are release versions only
unless the command line says --trust-config-paths (see README, Threat model).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.errors import DriftauditError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_STRINGS = ("old", "new", "fail-on", "baseline")
_LISTS = ("exclude", "wrap-prefixes")


@dataclass
class Config:
    old: str | None = None
    new: str | None = None
    fail_on: str | None = None
    exclude: list[str] = field(default_factory=list)
    wrap_prefixes: list[str] = field(default_factory=list)
    baseline: str | None = None


def load_config(root: Path) -> Config:
    for name, table_path in (("driftaudit.toml", ()), ("pyproject.toml", ("tool", "driftaudit"))):
        path = root / name
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise DriftauditError(f"{path}: not valid TOML: {exc}") from None
        except OSError as exc:
            raise DriftauditError(f"{path}: cannot read: {exc.strerror}") from None
        where = "[" + ".".join(table_path) + "]" if table_path else "the top level"
        for key in table_path:
            data = data.get(key, {}) if isinstance(data, dict) else None
            if not isinstance(data, dict):
                raise DriftauditError(f"{path}: {where} must be a table")
        if not data:
            continue
        return _from_table(data, path, where)
    return Config()


def _from_table(data: dict, path: Path, where: str) -> Config:
    values: dict[str, object] = {}
    unknown = []
    for raw_key, value in data.items():
        key = raw_key.replace("_", "-")
        if key not in _STRINGS and key not in _LISTS:
            unknown.append(raw_key)
            continue
        if key in values:
            raise DriftauditError(f"{path}: {where} sets {key} twice ({raw_key!r})")
        if key in _STRINGS and not isinstance(value, str):
            raise DriftauditError(f"{path}: {where} {key} must be a string")
        if key in _STRINGS and not value.strip():
            raise DriftauditError(f"{path}: {where} {key} must not be empty")
        if key in _LISTS:
            if not isinstance(value, list) or not all(isinstance(e, str) for e in value):
                raise DriftauditError(f"{path}: {where} {key} must be a list of strings")
            if any(not e.strip() for e in value):
                raise DriftauditError(f"{path}: {where} {key} must not hold an empty string")
        values[key] = value
    if unknown:
        known = ", ".join((*_STRINGS, *_LISTS))
        raise DriftauditError(
            f"{path}: {where} has unknown keys {', '.join(map(repr, sorted(unknown)))} "
            f"(known: {known})"
        )
    return Config(
        values.get("old"),
        values.get("new"),
        values.get("fail-on"),
        list(values.get("exclude", [])),
        list(values.get("wrap-prefixes", [])),
        values.get("baseline"),
    )
