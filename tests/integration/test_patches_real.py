"""The hunk checker against `git apply --check` on real sglang files (0.5.9 -> 0.5.14).

A patch is made from the old release (a comment inserted every 150 lines of a few
large modules, so that its hunks meet moved, edited and unchanged code in the new
release) and checked on both trees by driftaudit and by git, hunk by hunk.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from driftaudit.match.patches import check_file
from driftaudit.sources import resolve_spec
from driftaudit.usage.patch_files import read_patch

from ..gitapply import git_verdicts


def _read(root, path):
    """read_patch on a file as the consumer index hands it over."""
    return read_patch(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

MODULES = [
    "sglang/srt/layers/dp_attention.py",
    "sglang/srt/managers/scheduler.py",
    "sglang/srt/model_executor/model_runner.py",
]


def _patch(old_root: Path) -> str:
    parts = []
    for module in MODULES:
        before = (old_root / module).read_text().splitlines(keepends=True)
        after = list(before)
        for at in range(len(after) - 1, 0, -150):
            after.insert(at, "# patched by a consumer\n")
        name = f"python/{module}"
        parts += difflib.unified_diff(before, after, f"a/{name}", f"b/{name}")
    return "".join(parts)


def test_checker_agrees_with_git_on_real_releases(release_cache: Path, tmp_path: Path) -> None:
    old = resolve_spec("0.5.9", release_cache).root
    new = resolve_spec("0.5.14", release_cache).root
    patch_path = tmp_path / "consumer" / "real.patch"
    patch_path.parent.mkdir()
    patch_path.write_text(_patch(old))
    patch = _read(patch_path.parent, patch_path)
    verdicts = {}
    for tree in (old, new):
        ours = {
            (file.written, result.hunk.line): result.at
            for file in patch.files
            for result in check_file(file, tree)
        }
        assert ours == git_verdicts(patch_path, patch, tree)
        verdicts[tree] = ours
    assert all(at is not None for at in verdicts[old].values())
    assert None in verdicts[new].values()  # some hunks meet code that changed
