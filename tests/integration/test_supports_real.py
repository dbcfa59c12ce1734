"""`fix --supports` on real releases: `prepare_mlp_sync_batch_raw` left
`sglang.srt.managers.scheduler_dp_attn_mixin` for `scheduler_components.dp_attn` in
0.5.13, so a consumer that runs on 0.5.12.post1 and 0.5.13 needs both imports (fetched
from the package index once, DRIFTAUDIT_TEST_CACHE)."""

from __future__ import annotations

import json

import pytest

from driftaudit.cli import main

from ..conftest import write_tree

pytestmark = pytest.mark.integration

CAPTURE = """\
from sglang.srt.managers.scheduler_dp_attn_mixin import prepare_mlp_sync_batch_raw


def sync(batch, **kwargs):
    return prepare_mlp_sync_batch_raw(batch, **kwargs)
"""
GUARDED = """\
try:
    from sglang.srt.managers.scheduler_components.dp_attn import prepare_mlp_sync_batch_raw
except ImportError:
    from sglang.srt.managers.scheduler_dp_attn_mixin import prepare_mlp_sync_batch_raw
"""


def test_fix_writes_the_guarded_import_both_releases_run(release_cache, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", {"app/__init__.py": "", "app/capture.py": CAPTURE})
    span = ["--supports", ">=0.5.12.post1,<=0.5.13", "--cache-dir", str(release_cache)]
    assert main(["fix", str(consumer), "-q", *span, "--apply"]) == 0, capsys.readouterr().err
    fixed = (consumer / "app" / "capture.py").read_text()
    assert fixed == GUARDED + CAPTURE.split("\n", 1)[1]
    capsys.readouterr()
    assert main(["compare", str(consumer), "-q", *span, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
