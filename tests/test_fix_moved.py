"""A moved import goes to the definition that stands in for the old one: a same-named
function whose positional arguments bind elsewhere, whose required parameters differ
or whose return shape differs is no candidate, and of the compatible ones the module
closest to the old one wins (tests/fixtures/fix/moved: one real move, four decoys)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from driftaudit.pipeline import run_compare, run_fix

from .conftest import FIXTURES

CASE = FIXTURES / "fix" / "moved"
REAL = "sglang/srt/managers/components/dp_attn.py"
DECOYS = {
    "swapped-positions": "sglang/managers_dp.py",
    "other-return-shape": "sglang/mixin_dp.py",
    "new-required-parameter": "sglang/dp_mixin.py",
    "unrelated-package": "sglang/lang/managers_dp_mixin.py",
}


def moved_to(new: Path, cache_dir: Path) -> list[str | None]:
    result = run_compare(CASE / "consumer", str(CASE / "old"), str(new), cache_dir)
    return [f.new_location for f in result.findings if f.code.code == "DA102"]


def test_the_obvious_new_module_wins_over_every_decoy(cache_dir):
    assert moved_to(CASE / "new", cache_dir) == [f"{REAL}:1"]


@pytest.mark.parametrize("decoy", [d for d in DECOYS if d != "unrelated-package"])
def test_an_incompatible_namesake_is_no_move(decoy, tmp_path, cache_dir):
    new = tmp_path / "new"
    shutil.copytree(CASE / "new", new)
    for path in [REAL, *(p for d, p in DECOYS.items() if d != decoy)]:
        (new / path).unlink()
    assert moved_to(new, cache_dir) == [], f"{DECOYS[decoy]} cannot stand in"


def test_an_identical_function_elsewhere_is_still_a_move(tmp_path, cache_dir):
    new = tmp_path / "new"
    shutil.copytree(CASE / "new", new)
    (new / REAL).unlink()
    assert moved_to(new, cache_dir) == [f"{DECOYS['unrelated-package']}:2"]


def test_fix_moves_the_import_there_and_is_idempotent(tmp_path, cache_dir):
    consumer = tmp_path / "consumer"
    shutil.copytree(CASE / "consumer", consumer)
    old, new = str(CASE / "old"), str(CASE / "new")
    first = run_fix(consumer, old, new, cache_dir, apply=True)
    assert first.fixed == 1 and first.written, "a move is a safe fix"
    assert (consumer / "use.py").read_text() == (CASE / "expected" / "use.py").read_text()
    assert run_fix(consumer, old, new, cache_dir, apply=True).fixed == 0
    assert not run_compare(consumer, old, new, cache_dir).findings
