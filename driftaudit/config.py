"""Settings from the consumer's `[tool.driftaudit]` (pyproject.toml) or driftaudit.toml.

Keys: old, new, supports (a supported range, `>=0.5.22,<=0.5.23`: the consumer is
audited against every release in it, in place of old and new), fail-on, baseline (the
baseline file: a path inside the consumer, relative to its root, without `..`),
exclude (list of globs), wrap-prefixes (the prefixes under
which the consumer re-exposes sglang's flags, e.g. ["--sglang-"]; common ones are
detected anyway), select, ignore, extend-select (codes or prefixes) and per-file-ignores
(a table: glob -> codes or prefixes; see `check/selection.py`). Command-line options
win. Any other key, or a value of the wrong type, is an error that names it.
`old`/`new` from config are release versions only unless the command line says
--trust-config-paths (see README, Threat model).

The settings are the consumer root's; when it has none, those of the first folder above
it that has some, up to the project root (a folder with `.git`) or the file-system root,
as ruff finds its configuration. `--config FILE` names the file instead (a pyproject.toml
is read for its [tool.driftaudit], any other name as a driftaudit.toml). Paths in the
settings (baseline, exclude, per-file-ignores) are relative to the consumer root.

The files are read as `confined` reads a file the consumer names: a symlink that leaves
the tree (the folder the file is in), a FIFO or a device is an error, never read.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftaudit.codes import selectors
from driftaudit.confined import consumer_name, read_bytes
from driftaudit.errors import DriftauditError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_STRINGS = ("old", "new", "fail-on", "baseline", "supports")
_LISTS = ("exclude", "wrap-prefixes")
_CODES = ("select", "ignore", "extend-select")  # lists of codes or prefixes
_TABLES = ("per-file-ignores",)  # glob -> codes or prefixes
_BOOLS = ("show-info",)
_KNOWN = (*_STRINGS, *_LISTS, *_CODES, *_TABLES, *_BOOLS)
_FILES = (("driftaudit.toml", ()), ("pyproject.toml", ("tool", "driftaudit")))


@dataclass
class Config:
    old: str | None = None
    new: str | None = None
    fail_on: str | None = None
    exclude: list[str] = field(default_factory=list)
    wrap_prefixes: list[str] = field(default_factory=list)
    baseline: str | None = None
    show_info: bool = False  # info findings (changelog notes) are off unless asked for
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    supports: str | None = None  # a supported range: every release in it is audited


def load_config(root: Path, config_file: Path | None = None) -> Config:
    """The settings for the consumer at `root` (see the module docstring)."""
    if config_file is not None:
        table_path = _FILES[1][1] if config_file.name == "pyproject.toml" else ()
        data = read_bytes(None, config_file, "config")
        if data is None:
            raise DriftauditError(f"config file {str(config_file)!r} does not exist")
        return _read(data, config_file, table_path) or Config()
    folder = Path(os.path.abspath(root))
    while True:
        for name, table_path in _FILES:
            path = folder / name
            data = read_bytes(folder, path, "config")
            config = None if data is None else _read(data, path, table_path)
            if config is not None:
                return config
        if (folder / ".git").exists() or folder.parent == folder:
            return Config()
        folder = folder.parent


def _read(data: bytes, path: Path, table_path: tuple[str, ...]) -> Config | None:
    """The settings in one file; None when it has none (an empty or absent table)."""
    where = "[" + ".".join(table_path) + "]" if table_path else "the top level"
    table = _table(parse_toml(data, path), table_path, path, where)
    return _from_table(table, path, where) if table else None


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
        if key not in _KNOWN:
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
        if key in _LISTS or key in _CODES:
            _strings(value, path, f"{where} {key}")
        if key in _CODES:
            value = selectors(value, f"{path}: {where} {key}")
        if key in _TABLES:
            if not isinstance(value, dict):
                raise DriftauditError(f"{path}: {where} {key} must be a table")
            for pattern, codes in value.items():
                if not pattern.strip():
                    raise DriftauditError(f"{path}: {where} {key} has an empty glob")
                _strings(codes, path, f"{where} {key} {pattern!r}")
            value = {p: selectors(c, f"{path}: {where} {key} {p!r}") for p, c in value.items()}
        if key == "baseline":
            value = consumer_name(value, key, f"{path}: {where}")
        values[key] = value
    if unknown:
        known = ", ".join(_KNOWN)
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
        values.get("select", []),
        values.get("ignore", []),
        values.get("extend-select", []),
        values.get("per-file-ignores", {}),
        values.get("supports"),
    )


def _strings(value: object, path: Path, what: str) -> None:
    if not isinstance(value, list) or not all(isinstance(e, str) for e in value):
        raise DriftauditError(f"{path}: {what} must be a list of strings")
    if any(not e.strip() for e in value):
        raise DriftauditError(f"{path}: {what} must not hold an empty string")
