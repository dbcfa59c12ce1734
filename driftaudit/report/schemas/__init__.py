"""The JSON Schemas (draft 2020-12) of the JSON documents driftaudit writes: the report
contract, one file per document kind, shipped inside the package (`setup.py`'s package
data): `findings` (compare and check, `--format json`), `statistics` (`--statistics
--format json`), `changes` (diff, `--format json`), `cache` (`cache info --format
json`), `plan` (`plan --format json`). Every document says the version of its schema in
a top-level `schema_version`, `VERSION` here."""

from __future__ import annotations

import json
from importlib import resources

VERSION = 1
KINDS = ("findings", "statistics", "changes", "cache", "plan")


def schema(kind: str) -> dict:
    """The schema of one document kind, as shipped (read with importlib.resources, so an
    installed wheel and a checkout read the same file)."""
    if kind not in KINDS:
        raise ValueError(f"no JSON schema for {kind!r}; the kinds are {', '.join(KINDS)}")
    text = resources.files(__name__).joinpath(f"{kind}.schema.json").read_text("utf-8")
    return json.loads(text)
