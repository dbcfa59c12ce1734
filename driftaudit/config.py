"""Settings from the consumer's `[tool.driftaudit]` (pyproject.toml) or driftaudit.toml.

Keys: old, new, fail-on, baseline (the baseline file: a path inside the consumer,
relative to its root, without `..`),
exclude (list of globs), wrap-prefixes (the prefixes under
which the consumer re-exposes sglang's flags, e.g. ["--sglang-"]; common ones are
detected anyway). Command-line options win. Any other key, or a value of the wrong
type, is an error that names it. `old`/`new` from config are release versions only
unless the command line says --trust-config-paths (see README, Threat model).

The files are read as `confined` reads a file the consumer names: a symlink that leaves
the tree, a FIFO or a device is an error, never read.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftaudit.confined import consumer_name, read_bytes
from driftaudit.errors import DriftauditError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_STRINGS = ("old", "new", "fail-on", "baseline")
_LISTS = ("exclude", "wrap-prefixes")
_BOOLS = ("show-info",)


@dataclass
class Config:
    old: str | None = None
    new: str | None = None
    fail_on: str | None = None
    exclude: list[str] = field(default_factory=list)
    wrap_prefixes: list[str] = field(default_factory=list)
    baseline: str | None = None
    show_info: bool = False  # info findings (changelog notes) are off unless asked for


def load_config(root: Path) -> Config:
    for name, table_path in (("driftaudit.toml", ()), ("pyproject.toml", ("tool", "driftaudit"))):
        path = root / name
        data = read_bytes(root, path, "config")
        if data is None:
            continue
        where = "[" + ".".join(table_path) + "]" if table_path else "the top level"
        table = _table(parse_toml(data, path), table_path, path, where)
        if table:
            return _from_table(table, path, where)
    return Config()


def parse_toml(data: bytes, path: Path) -> dict:
    """The document, or a one-line error: not UTF-8, not TOML, nested deeper than
    tomllib's recursion allows."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DriftauditError(f"{path}: not valid TOML: {exc}") from None
    except (RecursionError, MemoryError):
        raise DriftauditError(f"{path}: not valid TOML: nested too deeply to read") from None


def _table(data: dict, table_path: tuple[str, ...], path: Path, where: str) -> dict:
    for key in table_path:
        data = data.get(key, {}) if isinstance(data, dict) else None
        if not isinstance(data, dict):
            raise DriftauditError(f"{path}: {where} must be a table")
    return data


def _from_table(data: dict, path: Path, where: str) -> Config:
    values: dict[str, Any] = {}  # a string or a list of strings, checked by key below
    unknown = []
    for raw_key, value in data.items():
        key = raw_key.replace("_", "-")
        if key not in _STRINGS and key not in _LISTS and key not in _BOOLS:
            unknown.append(raw_key)
            continue
        if key in values:
            raise DriftauditError(f"{path}: {where} sets {key} twice ({raw_key!r})")
        if key in _BOOLS and not isinstance(value, bool):
            raise DriftauditError(f"{path}: {where} {key} must be true or false")
        if key in _STRINGS and not isinstance(value, str):
            raise DriftauditError(f"{path}: {where} {key} must be a string")
        if key in _STRINGS and not value.strip():
            raise DriftauditError(f"{path}: {where} {key} must not be empty")
        if key in _LISTS:
            if not isinstance(value, list) or not all(isinstance(e, str) for e in value):
                raise DriftauditError(f"{path}: {where} {key} must be a list of strings")
            if any(not e.strip() for e in value):
                raise DriftauditError(f"{path}: {where} {key} must not hold an empty string")
        if key == "baseline":
            value = consumer_name(value, key, f"{path}: {where}")
        values[key] = value
    if unknown:
        known = ", ".join((*_STRINGS, *_LISTS, *_BOOLS))
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
        bool(values.get("show-info", False)),
    )
