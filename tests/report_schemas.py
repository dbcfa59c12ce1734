"""Validating a JSON document driftaudit wrote against the schema of its kind, as shipped
in the package (driftaudit/report/schemas/)."""

from __future__ import annotations

import jsonschema

from driftaudit.report.schemas import schema


def schema_errors(kind: str, document) -> list[str]:
    """Every way `document` breaks the `kind` schema, as `path: message` (empty: valid)."""
    shipped = schema(kind)
    validator = jsonschema.validators.validator_for(shipped)(shipped)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def assert_valid(kind: str, document) -> None:
    errors = schema_errors(kind, document)
    assert not errors, errors[:5]
