"""`driftaudit fix` end to end on fixtures: the packs' entries and the derived
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
    found = {(f.path, f.line, f.code.code) for f in result.findings if f.path.endswith(".py")}
    assert found == expected_markers(root / "consumer")


@pytest.mark.parametrize("case", ["sglang-0.5.14", "sglang-0.5.23"])
def test_fix_writes_the_expected_code_and_is_idempotent(case, cache_dir, tmp_path):
    root = PACKS / case
    consumer = _copy(root, tmp_path)
    old, new = str(root / "old"), str(root / "new")
    held = run_fix(consumer, old, new, cache_dir, apply=True)
    assert held.fixed == 0 and held.unsafe_held, "pack rewrites are unsafe fixes"
    first = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=True)
    assert first.fixed > 0
    for expected in sorted((root / "expected").rglob("*.py")):
        relative = expected.relative_to(root / "expected")
        assert (consumer / relative).read_text() == expected.read_text(), relative
    second = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=True)
    assert second.fixed == 0 and not any(c.changed for c in second.changes)
    after = run_compare(consumer, str(root / "old"), str(root / "new"), cache_dir)
    assert not [f for f in after.findings if f.fix and f.fix.autofixable]
    assert not list(consumer.rglob(".driftaudit-*")), "no temporary file is left behind"


def test_dry_run_writes_nothing_and_select_ignore_filter(cache_dir, tmp_path):
    root = PACKS / "sglang-0.5.14"
    consumer = _copy(root, tmp_path)
    before = (consumer / "capture.py").read_text()
    old, new = str(root / "old"), str(root / "new")
    dry = run_fix(consumer, old, new, cache_dir, unsafe_fixes=True)
    assert dry.fixed > 0 and (consumer / "capture.py").read_text() == before
    assert "+        req.fill_len = len(req.full_untruncated_fill_ids)" in dry.changes[0].diff()
    none = run_fix(consumer, old, new, cache_dir, ignore=["DA9"], unsafe_fixes=True)
    assert none.fixed == 0
    only = run_fix(consumer, old, new, cache_dir, select=["DA901"], unsafe_fixes=True)
    assert only.fixed == dry.fixed
    assert {f.code.code for f in dry.needs_a_human()} == {"DA902"}


def test_derived_codemods_on_the_code_fixtures(cache_dir, tmp_path):
    """Moved imports, dropped and renamed keywords from drift alone (no pack)."""
    root = FIXTURES / "themes" / "calls"
    consumer = _copy(root, tmp_path)
    old, new = str(root / "old"), str(root / "new")
    safe = run_fix(consumer, old, new, cache_dir, apply=True)
    assert safe.fixed == 1 and {f.code.code for f in safe.unsafe_held} == {"DA201"}
    assert "use_stream=False" in (consumer / "calls.py").read_text()  # held: unsafe
    result = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=True)
    text = (consumer / "calls.py").read_text()
    assert 'init_group([0], 0, "nccl")  # expect: DA201' in text
    assert 'ps.init_group([0], 0, "nccl", name="x")' in text
    assert "renamed_kw(1, mm_data=2)" in text
    assert safe.fixed + result.fixed == 3
    compile(text, "calls.py", "exec")


def test_likely_findings_are_never_rewritten(cache_dir, tmp_path):
    root = FIXTURES / "themes" / "likely"
    trees = FIXTURES / "themes" / "receivers"
    consumer = _copy(root, tmp_path)
    before = (consumer / "uses.py").read_text()
    run_fix(
        consumer, str(trees / "old"), str(trees / "new"), cache_dir, apply=True, unsafe_fixes=True
    )
    assert (consumer / "uses.py").read_text() == before


def test_reports_say_whether_each_fix_is_safe(cache_dir, capsys):
    """JSON `fix.applicability`, the console and markdown reports, and `fix` itself."""
    import io
    import json

    from rich.console import Console

    from driftaudit.cli import main
    from driftaudit.report import findings_json, findings_markdown, render_console

    root = FIXTURES / "themes" / "calls"
    result = run_compare(root / "consumer", str(root / "old"), str(root / "new"), cache_dir)
    document = json.loads(findings_json(result.findings, result.old, result.new, "c"))
    by_rule = {}
    for finding in document["findings"]:
        if finding["fix"] and finding["fix"]["autofixable"]:
            by_rule.setdefault(finding["rule"], set()).add(finding["fix"]["applicability"])
    assert by_rule["DA201"] == {"unsafe"} and by_rule["DA202"] == {"safe"}
    without_codemod = [f for f in document["findings"] if f["fix"] and not f["fix"]["autofixable"]]
    assert all(f["fix"]["applicability"] is None for f in without_codemod)
    markdown = findings_markdown(result.findings, result.old, result.new, "c")
    assert "(unsafe autofix: `driftaudit fix --apply --unsafe-fixes`)" in markdown
    assert "(safe autofix: `driftaudit fix --apply`)" in markdown
    console = Console(record=True, width=200, file=io.StringIO())
    render_console(console, result.findings, result.old, result.new, "c")
    text = console.export_text()
    assert "(autofixable, unsafe fix)" in text and "(autofixable, safe fix)" in text
    args = ["fix", str(root / "consumer"), "--old", str(root / "old"), "--new", str(root / "new")]
    assert main([*args, "--cache-dir", str(cache_dir)]) == 1  # a diff: as ruff's --diff
    captured = capsys.readouterr()
    assert "2 unsafe fixes not applied" in captured.err and "--unsafe-fixes" in captured.err
    assert "-    init_group" not in captured.out and "+    renamed_kw(1, mm_data=2)" in captured.out
    assert main([*args, "--unsafe-fixes", "--cache-dir", str(cache_dir)]) == 1
    captured = capsys.readouterr()
    assert "unsafe fixes not applied" not in captured.err and "-    init_group" in captured.out


def test_fix_keeps_the_files_encoding_bom_and_newlines(cache_dir, tmp_path):
    """The fixer writes a file back as the consumer index read it: CRLF and a BOM kept."""
    root = FIXTURES / "themes" / "calls"
    consumer = _copy(root, tmp_path)
    source = (consumer / "calls.py").read_bytes().replace(b"\r\n", b"\n")
    (consumer / "calls.py").write_bytes(b"\xef\xbb\xbf" + source.replace(b"\n", b"\r\n"))
    result = run_fix(
        consumer, str(root / "old"), str(root / "new"), cache_dir, apply=True, unsafe_fixes=True
    )
    assert result.fixed == 3
    data = (consumer / "calls.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\n") == data.count(b"\r\n")
    assert 'init_group([0], 0, "nccl")  # expect: DA201' in data.decode("utf-8-sig")


def test_relocated_names_are_imported_from_their_new_home(cache_dir, tmp_path):
    """A renamed class keeps the consumer's name (`NewName as OldName`); a function that
    became a static method is bound again through its class; both unsafe (inferred)."""
    root = FIXTURES / "codes" / "DA102-relocated"
    consumer = tmp_path / "consumer"
    shutil.copytree(root / "consumer", consumer)
    trees = (str(root / "old"), str(root / "new"))
    held = run_fix(consumer, *trees, cache_dir, apply=True)
    assert held.fixed == 0  # unsafe: only with --unsafe-fixes
    result = run_fix(consumer, *trees, cache_dir, apply=True, unsafe_fixes=True)
    assert result.fixed == 2
    text = (consumer / "use.py").read_text()
    assert "from sglang.srt.managers.dp_attn import DPState as MixinState" in text
    assert "prepare_mlp_sync_batch_raw = DPAttention.prepare_mlp_sync_batch_raw" in text
    after = run_compare(consumer, *trees, cache_dir)
    assert not [f for f in after.findings if f.code.code == "DA102"]
    assert run_fix(consumer, *trees, cache_dir, unsafe_fixes=True).fixed == 0
