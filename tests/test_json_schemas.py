"""The JSON documents driftaudit writes hold to the JSON Schemas shipped in the package
(driftaudit/report/schemas/): compare/check, --statistics and diff, each with
`schema_version`; the schemas themselves are strict about the keys they list and admit
new ones. Every code fixture's report is validated as well (tests/test_codes.py)."""

from __future__ import annotations

import copy
import json
from collections import Counter

import jsonschema
import pytest

from driftaudit.cli import main
from driftaudit.report.schemas import KINDS, VERSION, schema

from .conftest import FIXTURES
from .report_schemas import assert_valid, schema_errors

CASE = FIXTURES / "themes" / "calls"
TREES = ["--old", str(CASE / "old"), "--new", str(CASE / "new")]


def _document(tmp_path, *args) -> dict:
    out = tmp_path / "out.json"
    argv = [*args, *TREES, "-q", "--cache-dir", str(tmp_path / "cache"), "--output", str(out)]
    assert main([*argv, "--format", "json"]) in (0, 1)
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    return _document(tmp_path_factory.mktemp("compare"), "compare", str(CASE / "consumer"))


def test_the_schemas_are_draft_2020_12_and_share_their_definitions():
    shared: dict[str, dict] = {}
    for kind in KINDS:
        shipped = schema(kind)
        jsonschema.Draft202012Validator.check_schema(shipped)
        assert shipped["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert shipped["$id"] == f"urn:driftaudit:{kind}:{VERSION}"
        assert shipped["properties"]["schema_version"] == {
            "const": VERSION,
            "description": shipped["properties"]["schema_version"]["description"],
        }
        assert "schema_version" in shipped["required"]
        # every kind names the tool; a definition (a tree, a pin) reads alike in every kind
        assert shipped["properties"]["tool"] == {"$ref": "#/$defs/tool"}
        for name, definition in shipped["$defs"].items():
            assert shared.setdefault(name, definition) == definition, (kind, name)
    with pytest.raises(ValueError, match="no JSON schema"):
        schema("sarif")


def test_compare_json_holds_to_its_schema(report):
    assert_valid("findings", report)
    assert next(iter(report)) == "schema_version" and report["schema_version"] == VERSION
    assert report["findings"] and {f["severity"] for f in report["findings"]} >= {"error"}
    assert any(f["fix"] and f["fix"]["autofixable"] for f in report["findings"])


def test_statistics_json_holds_to_its_schema(tmp_path, report):
    document = _document(tmp_path, "compare", str(CASE / "consumer"), "--statistics")
    assert_valid("statistics", document)
    assert document["schema_version"] == VERSION
    assert document["old"] == report["old"] and document["consumer"] == report["consumer"]
    counts = Counter(f["rule"] for f in report["findings"])
    assert {row["code"]: row["count"] for row in document["statistics"]} == counts
    # a statistics document is not a findings report, nor the other way round
    assert schema_errors("findings", document) and schema_errors("statistics", report)


def test_diff_json_holds_to_its_schema(tmp_path):
    document = _document(tmp_path, "diff")
    assert_valid("changes", document)
    assert document["schema_version"] == VERSION and document["changes"]
    assert schema_errors("findings", document)


def _with(report: dict, change) -> dict:
    document = copy.deepcopy(report)
    change(document)
    return document


BROKEN = {
    "no schema_version": lambda d: d.pop("schema_version"),
    "another schema_version": lambda d: d.update(schema_version=2),
    "a line as a string": lambda d: d["findings"][0].update(line=str(d["findings"][0]["line"])),
    "a column of 0": lambda d: d["findings"][0].update(column=0),
    "an unknown severity": lambda d: d["findings"][0].update(severity="fatal"),
    "an unknown confidence": lambda d: d["findings"][0].update(confidence="possible"),
    "a fact as a float": lambda d: d["findings"][0].update(fact=0.5),
    "no fact": lambda d: d["findings"][0].pop("fact"),
    "introduced a number": lambda d: d["findings"][0].update(introduced=13),
    "deprecated a number": lambda d: d["findings"][0].update(deprecated=5),
    "a pin without its line": lambda d: d["old"].update(pin={"path": "pyproject.toml"}),
    "a pin's line as a string": lambda d: d["old"].update(pin={"path": "a", "line": "3"}),
    "a summary without facts": lambda d: d["summary"].pop("facts"),
    "an applicability outside safe/unsafe": lambda d: next(
        f for f in d["findings"] if f["fix"] and f["fix"]["autofixable"]
    )["fix"].update(applicability="maybe"),
    "an applicability without a codemod": lambda d: d["findings"].append(
        d["findings"][0]
        | {"fix": {"description": "x", "autofixable": False, "applicability": "safe"}}
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_document_of_the_wrong_shape_fails(report, name):
    assert schema_errors("findings", _with(report, BROKEN[name])), name


ADMITTED = {
    "a key added at the top": lambda d: d.update(elapsed=1.5),
    "a key added to a finding": lambda d: d["findings"][0].update(url="https://example.org"),
    "a pin": lambda d: d["old"].update(pin={"path": "pyproject.toml", "line": 3}),
    "no pin": lambda d: d["old"].update(pin=None),
    "deprecated": lambda d: d["findings"][0].update(deprecated="0.5.10"),
    "deprecated null": lambda d: d["findings"][0].update(deprecated=None),
    "introduced": lambda d: d["findings"][0].update(introduced="0.5.11"),
    "introduced null (the timeline could not tell)": lambda d: d["findings"][0].update(
        introduced=None
    ),
    "details": lambda d: d["findings"][0].update(details="--- a\n+++ b\n"),
    "a tree without a version": lambda d: d["new"].update(version=None),
}


@pytest.mark.parametrize("name", sorted(ADMITTED))
def test_new_and_optional_keys_are_admitted(report, name):
    assert schema_errors("findings", _with(report, ADMITTED[name])) == [], name
