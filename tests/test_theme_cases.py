"""Fixture-driven code tests (ruff style).

Each folder under fixtures/themes holds a tiny `old/` and `new/` sglang tree (or a
`trees` file naming the folder whose trees it shares) and a `consumer/`. Every
consumer line that must be flagged carries `# expect: CODE`; every other line must
not be flagged. The test compares the two sets exactly.

These are cases across rules (receivers, re-exports, surfaces); one fixture per rule code,
with its expected report, lives in fixtures/codes (test_codes.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from driftaudit.pipeline import run_compare

from .conftest import FIXTURES, expected_markers

CASES = sorted(p.name for p in (FIXTURES / "themes").iterdir() if p.is_dir())


def trees(root: Path) -> tuple[str, str]:
    if not (root / "old").is_dir():
        root = root.parent / (root / "trees").read_text().strip()
    return str(root / "old"), str(root / "new")


@pytest.mark.parametrize("case", CASES)
def test_code_fixture(case: str, cache_dir: Path) -> None:
    root = FIXTURES / "themes" / case
    result = run_compare(root / "consumer", *trees(root), cache_dir)
    found = {(f.path, f.line, f.code.code) for f in result.findings if f.path.endswith(".py")}
    assert found == expected_markers(root / "consumer")


def test_call_findings_name_the_parameter(cache_dir: Path) -> None:
    root = FIXTURES / "themes" / "calls"
    result = run_compare(root / "consumer", *trees(root), cache_dir)
    by_line = {f.line: f for f in result.findings}
    assert "use_stream" in by_line[7].message
    assert by_line[7].symbol == "sglang.srt.distributed.init_group"
    assert by_line[7].old_location == "sglang/srt/distributed/parallel_state.py:1"
    assert "mm_data" in by_line[10].fix.description
    assert by_line[19].code.code == "DA205" and by_line[19].severity == "warning"


def test_confidence_of_member_findings(cache_dir: Path) -> None:
    root = FIXTURES / "themes" / "likely"
    result = run_compare(root / "consumer", *trees(root), cache_dir)
    by_line = {f.line: f for f in result.findings}
    assert (by_line[5].confidence, by_line[5].severity) == ("likely", "warning")
    assert (by_line[12].confidence, by_line[12].severity) == ("certain", "error")
    assert by_line[12].symbol == "sglang.srt.batch.Req.fill_ids"
    assert "full_untruncated_fill_ids" in by_line[12].message  # the rename candidate


def test_replacement_self_and_overrides_name_the_sglang_member(cache_dir: Path) -> None:
    root = FIXTURES / "themes" / "receivers"
    result = run_compare(root / "consumer", *trees(root), cache_dir)
    symbols = {(f.code.code, f.symbol) for f in result.findings}
    assert ("DA301", "sglang.srt.batch.LogitsProcessor.multi_item_delimiter") in symbols
    assert ("DA304", "sglang.srt.batch.ModelRunner.init_cuda_graphs") in symbols
    assert ("DA305", "sglang.srt.batch.ModelRunner.forward") in symbols
    assert all(f.confidence == "certain" for f in result.findings)


def test_surfaces_outside_python(cache_dir: Path) -> None:
    """Scripts, pins: flags, env vars and parser names where no `# expect` fits."""
    root = FIXTURES / "themes" / "surfaces"
    result = run_compare(root / "consumer", *trees(root), cache_dir)
    found = {(f.path, f.line, f.code.code) for f in result.findings if not f.path.endswith(".py")}
    assert found == {
        ("requirements.txt", 2, "DA507"),  # torch==2.9.1, the new wheel wants 2.11.0
        ("scripts/launch.sh", 2, "DA504"),  # export SGLANG_USE_OLD_PATH=1 (SGLANG_DEBUG is fine)
        ("scripts/launch.sh", 6, "DA404"),  # --enable-piecewise-cuda-graph (not torchrun's)
        ("scripts/launch.sh", 7, "DA505"),  # --tool-call-parser qwen25
    }
    by_place = {(f.path, f.line, f.code.code): f for f in result.findings}
    removed = by_place["app/args.py", 31, "DA401"]
    assert "cuda_graph_max_bs_prefill" in removed.message  # the flag moved to this field
    assert by_place["app/args.py", 28, "DA402"].severity == "warning"
