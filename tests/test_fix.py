"""`driftaudit fix` end to end on fixtures: the rule packs' entries and the derived
codemods, before and after, a second run that changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from driftaudit.pipeline import run_compare, run_fix

from .conftest import FIXTURES, expected_markers

PACKS = FIXTURES / "packs"


def _copy(case: Path, tmp_path: Path) -> Path:
    consumer = tmp_path / "consumer"
    shutil.copytree(case / "consumer", consumer)
    return consumer


@pytest.mark.parametrize("case", ["sglang-0.5.14", "sglang-0.5.23"])
def test_pack_entries_fire_where_the_code_is(case, cache_dir):
    root = PACKS / case
    result = run_compare(root / "consumer", str(root / "old"), str(root / "new"), cache_dir)
    found = {(f.path, f.line, f.rule.code) for f in result.findings if f.path.endswith(".py")}
    assert found == expected_markers(root / "consumer")


@pytest.mark.parametrize("case", ["sglang-0.5.14", "sglang-0.5.23"])
def test_fix_writes_the_expected_code_and_is_idempotent(case, cache_dir, tmp_path):
    root = PACKS / case
    consumer = _copy(root, tmp_path)
    first = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir, apply=True)
    assert first.fixed > 0
    for expected in sorted((root / "expected").rglob("*.py")):
        relative = expected.relative_to(root / "expected")
        assert (consumer / relative).read_text() == expected.read_text(), relative
    second = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir, apply=True)
    assert second.fixed == 0 and not any(c.changed for c in second.changes)
    after = run_compare(consumer, str(root / "old"), str(root / "new"), cache_dir)
    assert not [f for f in after.findings if f.fix and f.fix.autofixable]
    assert not list(consumer.rglob(".*.tmp")), "no temporary file is left behind"


def test_dry_run_writes_nothing_and_select_ignore_filter(cache_dir, tmp_path):
    root = PACKS / "sglang-0.5.14"
    consumer = _copy(root, tmp_path)
    before = (consumer / "capture.py").read_text()
    dry = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir)
    assert dry.fixed > 0 and (consumer / "capture.py").read_text() == before
    assert "+        req.fill_len = len(req.full_untruncated_fill_ids)" in dry.changes[0].diff()
    none = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir, ignore=["DA9"])
    assert none.fixed == 0
    only = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir, select=["DA901"])
    assert only.fixed == dry.fixed
    assert {f.rule.code for f in dry.needs_a_human()} == {"DA902"}


def test_derived_codemods_on_the_rule_fixtures(cache_dir, tmp_path):
    """Moved imports, dropped and renamed keywords from drift alone (no pack)."""
    root = FIXTURES / "rules" / "calls"
    consumer = _copy(root, tmp_path)
    result = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir, apply=True)
    text = (consumer / "calls.py").read_text()
    assert 'init_group([0], 0, "nccl")  # expect: DA201' in text
    assert 'ps.init_group([0], 0, "nccl", name="x")' in text
    assert "renamed_kw(1, mm_data=2)" in text
    assert result.fixed == 3
    compile(text, "calls.py", "exec")


def test_likely_findings_are_never_rewritten(cache_dir, tmp_path):
    root = FIXTURES / "rules" / "likely"
    trees = FIXTURES / "rules" / "receivers"
    consumer = _copy(root, tmp_path)
    before = (consumer / "uses.py").read_text()
    run_fix(consumer, str(trees / "old"), str(trees / "new"), cache_dir, apply=True)
    assert (consumer / "uses.py").read_text() == before


def test_fix_keeps_the_files_encoding_bom_and_newlines(cache_dir, tmp_path):
    """The fixer writes a file back as the consumer index read it: CRLF and a BOM kept."""
    root = FIXTURES / "rules" / "calls"
    consumer = _copy(root, tmp_path)
    source = (consumer / "calls.py").read_bytes().replace(b"\r\n", b"\n")
    (consumer / "calls.py").write_bytes(b"\xef\xbb\xbf" + source.replace(b"\n", b"\r\n"))
    result = run_fix(consumer, str(root / "old"), str(root / "new"), cache_dir, apply=True)
    assert result.fixed == 3
    data = (consumer / "calls.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\n") == data.count(b"\r\n")
    assert 'init_group([0], 0, "nccl")  # expect: DA201' in data.decode("utf-8-sig")
