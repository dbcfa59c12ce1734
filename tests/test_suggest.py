"""SARIF's suggested fixes: computed before the report, each file parsed once, each
finding's fix its own rewrite of the file."""

from __future__ import annotations

from driftaudit.fix import apply
from driftaudit.fix.apply import rewrite
from driftaudit.fix.edits import edits_from_findings
from driftaudit.fix.source import read_source
from driftaudit.fix.suggest import suggestable, suggested_fixes
from driftaudit.pipeline import run_compare

from .conftest import FIXTURES

CASE = FIXTURES / "themes" / "calls"


def test_each_file_is_parsed_once_and_each_fix_is_its_own(tmp_path, monkeypatch):
    consumer = CASE / "consumer"
    result = run_compare(consumer, str(CASE / "old"), str(CASE / "new"), tmp_path)
    fixable = [f for f in result.findings if suggestable(f)]
    files = {f.path for f in fixable}
    assert len(fixable) > len(files)  # several fixes share a file
    parses = []
    real_parse = apply.parse
    monkeypatch.setattr(apply, "parse", lambda source: parses.append(1) or real_parse(source))
    changes = suggested_fixes(result.findings, consumer)
    assert len(parses) == len(files)
    assert changes and set(changes) <= {id(f) for f in fixable}
    for finding in fixable:
        alone = rewrite(
            finding.path,
            read_source(consumer / finding.path),
            edits_from_findings([finding], unsafe_fixes=True),
        )
        if alone.changed:
            assert changes[id(finding)].after == alone.after
        else:
            assert id(finding) not in changes
    assert suggested_fixes(result.findings, None) == {}
