"""Every module of every cached real release goes through the snapshot, and `diff`
completes on every consecutive pair: a name griffe cannot resolve (a conditional
re-binding, an import from outside sglang) is an alias in the model, never a crash.

The diffs come first: cold, they parse each distinct file once (the store is keyed by
content, so releases share unchanged files) and the sweep that follows reads the store.
Timings per pair, cold and warm: benchmarks/bench_releases.py.
"""

from __future__ import annotations

import json

import pytest

from driftaudit.cli import main
from driftaudit.pipeline import run_compare
from driftaudit.snapshot import Snapshot
from driftaudit.sources import resolve_spec
from driftaudit.store.db import BlobStore

from ..conftest import write_tree

pytestmark = pytest.mark.integration

RELEASES = [
    "0.5.2",
    "0.5.4.post1",
    "0.5.5",
    "0.5.9",
    "0.5.14",
    "0.5.15",
    "0.5.16",
    "0.5.22",
    "0.5.23",
]
PAIRS = list(zip(RELEASES, RELEASES[1:], strict=False))


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_diff_completes_on_consecutive_releases(capsys, release_cache, old, new):
    argv = ["diff", "--old", old, "--new", new, "--format", "json"]
    assert main([*argv, "--cache-dir", str(release_cache)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    report = json.loads(out.out)
    assert report["changes"], f"no change at all between {old} and {new}?"


@pytest.mark.parametrize("version", RELEASES)
def test_every_module_of_the_release_is_modelled(release_cache, version):
    snapshot = Snapshot(
        resolve_spec(version, release_cache), BlobStore(release_cache / "snapshots.sqlite")
    )
    modules = snapshot.load_all()
    assert len(modules) == len(snapshot.files) > 500
    assert not snapshot.unreadable
    for module in modules:  # every alias is a path, whatever griffe could resolve
        depth = len(module.name.split("."))
        for name in module.members:
            assert snapshot.resolve_longest(f"{module.name}.{name}")[1] >= depth


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        # RMSNorm is defined in layernorm.py and re-bound from vllm on some platforms
        ("0.5.4.post1", "0.5.5", "from sglang.srt.layers.layernorm import RMSNorm\n"),
        # Compressor is re-bound by a conditional `import ... as Compressor` (HIP)
        (
            "0.5.14",
            "0.5.15",
            "from sglang.srt.layers.attention.dsv4.compressor import Compressor\n",
        ),
    ],
)
def test_consumer_of_rebound_names_compares(tmp_path, release_cache, old, new, code):
    consumer = write_tree(tmp_path / "c", {"a.py": code + "x = RMSNorm\n"})
    result = run_compare(consumer, old, new, release_cache)
    assert result.old.version == old and result.new.version == new
