"""Where --old came from, in every format: the consumer's sglang pin (its file and line),
the command line or the config; the same from the findings cache. Releases come from a
loopback index (tests/fake_index.py): --old read from a pin is a release, never a path."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from driftaudit import findings_cache, pipeline
from driftaudit.cli import main

from .conftest import write_tree
from .test_formats import SCHEMA

PYPROJECT = """\
[project]
name = "consumer"
version = "1.0"
dependencies = [
    "sglang==1.0.0",
]
"""
PIN = {"path": "pyproject.toml", "line": 5}


@pytest.fixture
def consumer(tmp_path: Path, fake_index) -> Path:
    for version in ("1.0.0", "1.1.0"):
        fake_index.add(version)
    return write_tree(
        tmp_path / "consumer",
        {
            "pyproject.toml": PYPROJECT,
            "app.py": "import sglang\n",
            # the project (its main dependencies) installed there would not resolve: DA004
            "requirements-rocm.txt": "sglang==0.9.0\n",
        },
    )


def run(consumer: Path, fmt: str, *extra: str) -> str:
    out = consumer.parent / f"out.{fmt}"
    cache = consumer.parent / "cache"
    argv = ["compare", "-q", "--cache-dir", str(cache), "--new", "1.1.0", "--format", fmt]
    assert main([*argv, "--output", str(out), *extra, str(consumer)]) in (0, 1)
    return out.read_text()


def test_json_says_which_pin_gave_old(consumer):
    report = json.loads(run(consumer, "json"))
    assert report["old"]["pin"] == PIN and report["old"]["source"] == "pin"
    assert report["old"]["version"] == "1.0.0"
    assert report["new"]["source"] == "command line" and report["new"]["pin"] is None
    (conflict,) = [f for f in report["findings"] if f["rule"] == "DA004"]
    assert conflict["path"] == "requirements-rocm.txt" and "pyproject.toml:5" in conflict["message"]


def test_json_says_command_line_or_config(consumer):
    report = json.loads(run(consumer, "json", "--old", "1.0.0"))
    assert report["old"]["source"] == "command line" and report["old"]["pin"] is None
    pyproject = consumer / "pyproject.toml"
    pyproject.write_text(PYPROJECT + '\n[tool.driftaudit]\nold = "1.0.0"\nnew = "1.1.0"\n')
    out = consumer.parent / "config.json"
    assert main(["compare", "-q", "--cache-dir", str(consumer.parent / "cache"), "--format",
                 "json", "--output", str(out), str(consumer)]) in (0, 1)  # fmt: skip
    report = json.loads(out.read_text())
    assert report["old"]["source"] == "config" and report["old"]["pin"] is None
    assert report["new"]["source"] == "config"


@pytest.mark.parametrize("fmt", ["console", "markdown", "html"])
def test_people_formats_name_the_pin(consumer, fmt):
    assert "pinned at pyproject.toml:5" in run(consumer, fmt)
    assert "pinned at" not in run(consumer, fmt, "--old", "1.0.0")


def test_console_header(consumer):
    header = run(consumer, "console").splitlines()[0]
    assert "sglang 1.0.0 (index: 1.0.0, pinned at pyproject.toml:5) -> 1.1.0" in header


def test_sarif_run_properties_and_invocation(consumer):
    document = json.loads(run(consumer, "sarif"))
    errors = list(jsonschema.Draft4Validator(SCHEMA).iter_errors(document))
    assert not errors, errors[:3]
    (run_,) = document["runs"]
    assert run_["properties"]["old"]["pin"] == PIN
    (note,) = run_["invocations"][0]["toolExecutionNotifications"]
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pyproject.toml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 5}
    explicit = json.loads(run(consumer, "sarif", "--old", "1.0.0"))["runs"][0]
    assert "invocations" not in explicit and explicit["properties"]["old"]["pin"] is None


def test_github_notice_on_the_pin(consumer):
    lines = run(consumer, "github").splitlines()
    assert lines[0].startswith("::notice file=pyproject.toml,line=5,")
    assert "audited from sglang 1.0.0" in lines[0]
    assert any(line.startswith("::warning file=requirements-rocm.txt,") for line in lines)
    assert not run(consumer, "github", "--old", "1.0.0").startswith("::notice")


def test_gitlab_is_issues_only(consumer):
    """GitLab Code Quality is a bare list of issues: no place for the pin (README)."""
    issues = json.loads(run(consumer, "gitlab"))
    assert [i["check_name"] for i in issues] == ["DA004"]


def test_a_warm_run_keeps_the_provenance(consumer, monkeypatch):
    monkeypatch.delenv(findings_cache.DISABLE_ENV, raising=False)
    cold = json.loads(run(consumer, "json"))
    computed = []
    audit = pipeline._audit
    monkeypatch.setattr(pipeline, "_audit", lambda *a, **k: computed.append(1) or audit(*a, **k))
    warm = json.loads(run(consumer, "json"))
    assert computed == [], "the second run reads the findings cache"
    assert warm["old"] == cold["old"] and warm["old"]["pin"] == PIN
    assert warm["findings"] == cold["findings"]
