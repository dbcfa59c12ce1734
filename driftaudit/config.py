"""Settings from the consumer's `[tool.driftaudit]` (pyproject.toml) or driftaudit.toml.

Keys: old, new, fail-on, baseline (the baseline file, relative to the consumer root),
exclude (list of globs), wrap-prefixes (the prefixes under
which the consumer re-exposes sglang's flags, e.g. ["--sglang-"]; common ones are
detected anyway). Command-line options win.
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
        for key in table_path:
            data = data.get(key, {})
        if not data:
            continue
        lists = {}
        for key in ("exclude", "wrap-prefixes"):
            value = data.get(key, data.get(key.replace("-", "_"), []))
            if not isinstance(value, list) or not all(isinstance(e, str) for e in value):
                raise DriftauditError(f"{path}: [tool.driftaudit] {key} must be a list of strings")
            lists[key] = value
        return Config(
            _str(data, "old", path),
            _str(data, "new", path),
            _str(data, "fail-on", path) or _str(data, "fail_on", path),
            lists["exclude"],
            lists["wrap-prefixes"],
            _str(data, "baseline", path),
        )
    return Config()


def _str(data: dict, key: str, path: Path) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise DriftauditError(f"{path}: [tool.driftaudit] {key} must be a string")
    return value
