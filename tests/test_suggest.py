"""The fixes a report shows (SARIF's suggested fixes, the HTML page's previews): computed
before the report, each file parsed at most once, each finding's fix its own rewrite of
the file, and kept with the file's derived values so a warm report rewrites nothing."""

from __future__ import annotations

import pytest

from driftaudit.findings_cache import tool_digest
from driftaudit.fix import apply
from driftaudit.fix.apply import rewrite
from driftaudit.fix.edits import edits_from_findings
from driftaudit.fix.source import read_source
from driftaudit.fix.suggest import _patched, previews, suggestable, suggested_fixes
from driftaudit.pipeline import run_compare
from driftaudit.usage.file_cache import FileCache
from driftaudit.usage.files import ConsumerFiles

from .conftest import FIXTURES

CASE = FIXTURES / "themes" / "calls"


@pytest.fixture
def audited(tmp_path):
    consumer = CASE / "consumer"
    result = run_compare(consumer, str(CASE / "old"), str(CASE / "new"), tmp_path)
    return consumer, result


def _counting_parses(monkeypatch) -> list:
    parses: list = []
    real_parse = apply.parse
    monkeypatch.setattr(apply, "parse", lambda source: parses.append(1) or real_parse(source))
    return parses


def test_each_file_is_parsed_once_and_each_fix_is_its_own(audited, monkeypatch):
    consumer, result = audited
    fixable = [f for f in result.findings if suggestable(f)]
    files = {f.path for f in fixable}
    assert len(fixable) > len(files)  # several fixes share a file
    parses = _counting_parses(monkeypatch)
    changes = suggested_fixes(result.findings, ConsumerFiles(consumer))
    assert len(parses) == len(files)
    assert changes and set(changes) <= {id(f) for f in fixable}
    for finding in fixable:
        source = read_source(consumer / finding.path)
        alone = rewrite(finding.path, source, edits_from_findings([finding], unsafe_fixes=True))
        if alone.changed:
            assert _patched(source.text, changes[id(finding)]) == alone.after
        else:
            assert id(finding) not in changes
    assert suggested_fixes(result.findings, None) == {}


def _cached_files(consumer, cache_dir) -> ConsumerFiles:
    files = ConsumerFiles(consumer)
    files.cache = FileCache(cache_dir, consumer, tool_digest())
    return files


def test_a_warm_report_rewrites_nothing(audited, tmp_path, monkeypatch):
    consumer, result = audited
    first = _cached_files(consumer, tmp_path / "c")
    cold = suggested_fixes(result.findings, first)
    shown = previews(result.findings, first)
    first.cache.flush()
    parses = _counting_parses(monkeypatch)
    second = _cached_files(consumer, tmp_path / "c")
    assert suggested_fixes(result.findings, second) == cold
    assert previews(result.findings, second) == shown
    assert parses == []  # read back, not computed


def test_a_stored_rewrite_of_another_shape_is_computed_again(audited, tmp_path, monkeypatch):
    consumer, result = audited
    first = _cached_files(consumer, tmp_path / "c")
    expected = suggested_fixes(result.findings, first)
    for record in first.cache.records.values():  # plant values of a wrong shape
        for name in list(record["values"]):
            if name.startswith("rewrite:"):
                record["values"][name] = __import__("pickle").dumps([(5, 2, 7), "x"])
        first.cache.dirty.update(first.cache.records)
    first.cache.flush()
    assert suggested_fixes(result.findings, _cached_files(consumer, tmp_path / "c")) == expected


def test_previews_are_what_the_fixer_writes(audited):
    consumer, result = audited
    shown = previews(result.findings, ConsumerFiles(consumer))
    edits = edits_from_findings(result.findings, unsafe_fixes=True)
    written = {c.path: (c.before, c.after) for c in apply.apply_edits(consumer, edits) if c.changed}
    assert shown == written and shown
