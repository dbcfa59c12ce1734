"""Source patches (DA6xx): diffs against sglang and `inspect.getsource` anchors.

The fixture `themes/patches` holds an old and a new sglang tree and a consumer with
patches and a runtime patch. Python lines that must be flagged carry `# expect: CODE`;
findings on the patch files are listed here. The hunk checker is compared with
`git apply --check` itself, hunk by hunk, on every fixture patch and both trees.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from driftaudit.codes import lookup
from driftaudit.match.patches import check_file
from driftaudit.pipeline import run_compare
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.patch_files import collect_patches, read_patch, sglang_path

from .conftest import FIXTURES, expected_markers, write_tree
from .gitapply import git_verdicts


def _read(root, path):
    """read_patch on a file as the consumer index hands it over."""
    return read_patch(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))


CASE = FIXTURES / "themes" / "patches"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_fixture_findings(cache_dir: Path) -> None:
    result = run_compare(CASE / "consumer", str(CASE / "old"), str(CASE / "new"), cache_dir)
    found = {(f.path, f.line, f.code.code) for f in result.findings}
    in_python = {place for place in found if place[0].endswith(".py")}
    assert in_python == expected_markers(CASE / "consumer")
    assert found - in_python == {
        ("patches/broken.diff", 3, "DA001"),  # the hunk is shorter than its header says
        ("patches/extra.diff", 5, "DA601"),  # `return False` is gone from is_cuda
        ("patches/sglang.patch", 5, "DA601"),  # creates capture.py, which now exists
        ("patches/sglang.patch", 8, "DA602"),  # layers/sampler.py is gone
        ("patches/sglang.patch", 18, "DA601"),  # at line 1: must match at the start
        ("patches/sglang.patch", 31, "DA601"),  # no trailing context: must match at the end
        ("patches/sglang.patch", 41, "DA601"),  # get_device already reads DEVICE
        ("patches/sglang.patch", 52, "DA601"),  # deletes legacy.py: already gone
    }  # fork.patch never applied to the old tree; megatron.patch is not about sglang


def test_findings_carry_evidence(cache_dir: Path) -> None:
    result = run_compare(CASE / "consumer", str(CASE / "old"), str(CASE / "new"), cache_dir)
    by_place = {(f.path, f.line): f for f in result.findings}
    hunk = by_place["patches/extra.diff", 5]
    assert hunk.symbol == "sglang.srt.utils"
    assert hunk.old_location == "sglang/srt/utils.py:3"  # where it applied (offset -1)
    assert "`return False`" in hunk.message and "@@ -4,5 +4,5 @@" in hunk.message
    assert "already applied" in by_place["patches/sglang.patch", 41].message
    assert "already applied" in by_place["patches/sglang.patch", 52].message
    assert by_place["patches/sglang.patch", 5].old_location is None  # the patch creates it
    assert "start of the file" in by_place["patches/sglang.patch", 18].message
    # the line in the unpatched old file, not in the image the first hunk grew by one
    end = by_place["patches/sglang.patch", 31]
    assert end.old_location == "sglang/srt/managers/scheduler.py:27"
    anchor = by_place["app/runtime_patch.py", 10]
    assert anchor.symbol == "sglang.srt.managers.scheduler.Scheduler.run_batch"
    assert anchor.old_location == "sglang/srt/managers/scheduler.py:17"
    assert anchor.new_location == "sglang/srt/managers/scheduler.py:19"
    assert "2 times" in by_place["app/runtime_patch.py", 12].message


@needs_git
@pytest.mark.parametrize("tree", ["old", "new"])
def test_checker_agrees_with_git_apply(tree: str) -> None:
    patches = collect_patches(ConsumerFiles(CASE / "consumer")).patches
    assert {p.path for p in patches} == {
        "patches/extra.diff",
        "patches/fork.patch",
        "patches/sglang.patch",
    }
    for patch in patches:
        ours = {
            (file.written, result.hunk.line): result.at
            for file in patch.files
            for result in check_file(file, CASE / tree)
        }
        assert ours == git_verdicts(CASE / "consumer" / patch.path, patch, CASE / tree)


_BLOCK = ["    x = load()", "    y = x + 1", "    return y"]


def _repeated_tree(root: Path, at: list[int], length: int = 50) -> Path:
    lines = [f"line_{i} = {i}" for i in range(1, length + 1)]
    for start in at:
        lines[start - 1 : start - 1 + len(_BLOCK)] = _BLOCK
    return write_tree(root, {"sglang/mod.py": "\n".join(lines) + "\n"})


@needs_git
@pytest.mark.parametrize(
    ("copies", "claimed"),
    [([5, 20, 40], 28), ([20, 36], 28), ([20, 36], 36), ([3], 45)],
)
def test_placement_among_repeated_context_agrees_with_git(
    tmp_path: Path, copies: list[int], claimed: int
) -> None:
    """Nearest the claimed line first, below before above, as git's find_pos."""
    tree = _repeated_tree(tmp_path / "tree", copies)
    body = [f" {_BLOCK[0]}", f"-{_BLOCK[1]}", "+    y = x + 2", f" {_BLOCK[2]}"]
    header = f"@@ -{claimed},3 +{claimed},3 @@"
    text = "\n".join(["--- a/sglang/mod.py", "+++ b/sglang/mod.py", header, *body]) + "\n"
    consumer = write_tree(tmp_path / "consumer", {"fix.patch": text})
    patch = _read(consumer, consumer / "fix.patch")
    ours = {("sglang/mod.py", 3): check_file(patch.files[0], tree)[0].at}
    assert ours == git_verdicts(consumer / "fix.patch", patch, tree)
    assert ours[("sglang/mod.py", 3)] in copies


def test_parsed_hunks_keep_their_positions() -> None:
    patch = _read(CASE / "consumer", CASE / "consumer" / "patches" / "sglang.patch")
    by_path = {f.path: f for f in patch.files}
    assert set(by_path) == {
        "sglang/srt/capture.py",
        "sglang/srt/layers/sampler.py",
        "sglang/srt/legacy.py",
        "sglang/srt/managers/scheduler.py",
        "sglang/srt/utils.py",
    }
    assert by_path["sglang/srt/capture.py"].added and by_path["sglang/srt/legacy.py"].removed
    scheduler = by_path["sglang/srt/managers/scheduler.py"]
    assert scheduler.written == "python/sglang/srt/managers/scheduler.py"
    assert [h.line for h in scheduler.hunks] == [18, 24, 31]
    first = scheduler.hunks[0]
    assert (first.old_start, first.old_length, first.new_start, first.new_length) == (1, 4, 1, 5)
    assert first.before[:3] == ["import logging", "import os", ""]
    assert "import time" in first.after and (first.leading, first.trailing) == (2, 2)
    assert scheduler.hunks[2].trailing == 0
    assert _read(CASE / "consumer", CASE / "consumer" / "patches" / "megatron.patch") is None


@pytest.mark.parametrize(
    ("written", "path"),
    [
        ("python/sglang/srt/x.py", "sglang/srt/x.py"),
        ("sglang/srt/x.py", "sglang/srt/x.py"),
        ("sglang/python/sglang/srt/x.py", "sglang/srt/x.py"),
        ("venv/lib/python3.11/site-packages/sglang/srt/x.py", "sglang/srt/x.py"),
        ("megatron/core/x.py", None),
        ("tests/sglang/x.py", None),  # a consumer's own folder named sglang
    ],
)
def test_patch_paths_map_to_the_sglang_tree(written: str, path: str | None) -> None:
    assert sglang_path(written) == path


def test_anchors_follow_the_source_variable() -> None:
    anchors = collect_patches(ConsumerFiles(CASE / "consumer")).anchors
    found = {(a.line, a.symbol.rpartition(".")[2], a.how, a.anchor) for a in anchors}
    assert found == {
        (10, "run_batch", "replace", "result = self.model.forward(batch)"),
        (11, "run_batch", "in", "self.count += 1"),
        (12, "run_batch", "replace", "return result"),
        (13, "run_batch", "replace", "no such text"),
        (20, "helper", "replace", "x + 1"),
        (28, "helper", "in", "return x"),
    }  # not the `.replace` calls on plain strings (lines 21 and 35)


def test_rules_are_documented() -> None:
    kinds = {code: lookup(code).kind for code in ("DA601", "DA602", "DA603", "DA604")}
    assert kinds == {
        "DA601": "patch-hunk-fails",
        "DA602": "patch-file-missing",
        "DA603": "source-anchor-missing",
        "DA604": "source-anchor-ambiguous",
    }
