"""Report formats: SARIF (valid against the official 2.1.0 schema), GitHub workflow
annotations, Markdown (checked as the rendered page), and `diff` in each format."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from driftaudit.cli import main
from driftaudit.codes import IMPORT_MOVED
from driftaudit.findings import Finding, Fix
from driftaudit.report.escape import github_data, github_property
from driftaudit.report.github import annotation

from .conftest import FIXTURES

CASE = FIXTURES / "themes" / "calls"
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def _run(tmp_path, *args) -> str:
    out = tmp_path / "out"
    code = main([*args, "-q", "--cache-dir", str(tmp_path / "cache"), "--output", str(out)])
    assert code in (0, 1)
    return out.read_text()


def _compare(tmp_path, fmt: str) -> str:
    return _run(
        tmp_path,
        "compare",
        "--old",
        str(CASE / "old"),
        "--new",
        str(CASE / "new"),
        str(CASE / "consumer"),
        "--format",
        fmt,
    )


def _validate(document: dict) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_sarif_is_valid_and_complete(tmp_path):
    document = json.loads(_compare(tmp_path, "sarif"))
    _validate(document)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    expected = json.loads(_compare(tmp_path, "json"))["findings"]
    # one result per fact, its other places related locations: every place is there
    assert len(run["results"]) == len({f["fact"] for f in expected}) < len(expected)
    places = [1 + len(r.get("relatedLocations", [])) for r in run["results"]]
    assert sum(places) == len(expected)
    assert {r["id"] for r in rules} == {f["rule"] for f in expected}
    for result in run["results"]:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"] and rule["shortDescription"]["text"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["endLine"] >= region["startLine"]
        assert region["endColumn"] > region["startColumn"]  # the name, not a point
    # DA201 drops a keyword: the fix is the rewritten line
    fixed = [r for r in run["results"] if r.get("fixes")]
    autofixable = [f for f in expected if (f["fix"] or {}).get("autofixable")]
    assert sum(len(r["fixes"]) for r in fixed) == len(autofixable) > 0
    consumer_lines = (CASE / "consumer" / "calls.py").read_text().splitlines()
    for result in fixed:
        change = result["fixes"][0]["artifactChanges"][0]
        (replacement,) = change["replacements"]
        start = replacement["deletedRegion"]["startLine"]
        assert start == result["locations"][0]["physicalLocation"]["region"]["startLine"]
        assert replacement["insertedContent"]["text"] != consumer_lines[start - 1] + "\n"


def test_sarif_of_nothing_is_valid(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    document = json.loads(
        _run(
            tmp_path,
            "compare",
            "--old",
            str(CASE / "old"),
            "--new",
            str(CASE / "new"),
            str(empty),
            "--format",
            "sarif",
        )
    )
    _validate(document)
    assert document["runs"][0]["results"] == []


def test_github_annotations(tmp_path, monkeypatch):
    monkeypatch.chdir(CASE)  # the repository root: files are named from there
    text = _compare(tmp_path, "github")
    lines = text.splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    first = lines[0]
    # paths from the working directory (the repository root in CI), as GitHub wants them
    where = (
        "file=consumer/calls.py,line=7,col=32,endLine=7,endColumn=42,title=DA201 keyword-removed::"
    )
    assert where in first


def test_github_escaping():
    assert github_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github_property("a:b,c%") == "a%3Ab%2Cc%25"
    finding = Finding(
        IMPORT_MOVED, "dir,1/a:b.py", 3, 2, "sglang.x", "moved\nnow: b", fix=Fix("import it")
    )
    line = annotation(finding)
    assert line == (
        "::error file=dir%2C1/a%3Ab.py,line=3,col=2,endLine=3,endColumn=2,"
        "title=DA102 import-moved::moved\\nnow: b%0Afix: import it"  # the fix: our own line
    )


def _html(markdown: str):
    parser = MarkdownIt("commonmark").enable("table")
    return parser.parse(markdown), parser.render(markdown)


def _headings(tokens) -> list[tuple[str, str]]:
    return [
        (tok.tag, tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open"
    ]


def test_markdown_renders_as_a_pr_comment(tmp_path):
    markdown = _compare(tmp_path, "markdown")
    tokens, html = _html(markdown)
    headings = _headings(tokens)
    assert headings[0][0] == "h1"
    assert [h for h in headings if h[0] == "h2"] == [
        ("h2", "Summary by rule"),
        ("h2", "Summary by sglang symbol"),
        ("h2", "Findings"),
    ]
    findings = json.loads(_compare(tmp_path, "json"))["findings"]
    facts = {f["fact"] for f in findings}
    # one folded section per fact, its summary naming the rule
    assert html.count("<details>") == html.count("</details>") == len(facts)
    assert html.count("<summary><code>DA") == len(facts)
    # two tables that render as tables, counting every finding
    assert html.count("<table>") == 2
    rows = [line for line in markdown.splitlines() if line.startswith("| DA")]
    assert sum(int(row.split("|")[4]) for row in rows) == len(facts) < len(findings)
    assert sum(int(row.split("|")[5]) for row in rows) == len(findings)
    # each place is a list item; each fix is shown once under its fact
    assert html.count("<li>") == len(findings)
    assert "<code>calls.py:7:32</code>" in html
    autofixable = {f["fact"] for f in findings if (f["fix"] or {}).get("autofixable")}
    assert autofixable and html.count(" autofix: <code>driftaudit fix --apply") == len(autofixable)


@pytest.mark.parametrize("fmt", ["json", "markdown", "sarif", "console"])
def test_diff_in_every_format(tmp_path, fmt):
    text = _run(
        tmp_path, "diff", "--old", str(CASE / "old"), "--new", str(CASE / "new"), "--format", fmt
    )
    if fmt == "json":
        assert json.loads(text)["changes"]
    elif fmt == "markdown":
        tokens, html = _html(text)
        assert _headings(tokens)[0][0] == "h1" and "<table>" in html
        assert "keyword-removed" in html
    elif fmt == "sarif":
        document = json.loads(text)
        _validate(document)
        assert document["runs"][0]["results"]
    else:
        assert "changes" in text.splitlines()[-1]
