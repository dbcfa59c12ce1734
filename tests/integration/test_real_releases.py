"""Against the real sglang 0.5.9 and 0.5.14 releases, fetched from the package index
once and cached (DRIFTAUDIT_TEST_CACHE, default ~/.cache/driftaudit-tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from driftaudit.drift import Differ
from driftaudit.drift.changes import ParameterRemoved, ReturnArityChanged
from driftaudit.errors import DriftauditError
from driftaudit.pipeline import open_snapshots, run_compare
from driftaudit.snapshot import Snapshot
from driftaudit.sources import resolve_spec
from driftaudit.store.db import BlobStore

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).parents[2] / "examples" / "sglang_consumer"


@pytest.fixture(scope="module")
def example_result(release_cache):
    # --old omitted: read from the example's pin (pyproject.toml: sglang==0.5.9)
    return run_compare(EXAMPLE, None, "0.5.14", release_cache)


def test_pin_is_read_from_the_consumer(example_result):
    assert example_result.old.version == "0.5.9"
    assert example_result.old_pin == "pyproject.toml:5"
    assert example_result.new.version == "0.5.14"


def test_example_findings_on_real_releases(example_result):
    by_place = {(f.path, f.line, f.code.code): f for f in example_result.findings}
    assert set(by_place) == {
        ("capture/batch.py", 5, "DA102"),
        # pack 0.5.9 -> 0.5.14: req untyped here, so `likely`
        ("capture/batch.py", 27, "DA901"),  # req.fill_ids = ...
        ("capture/batch.py", 28, "DA901"),  # len(req.fill_ids)
        ("capture/batch.py", 41, "DA902"),  # batch.prepare_for_extend(): prefill_input_ids_cpu
        ("capture/batch.py", 42, "DA901"),  # batch.get_model_worker_batch()
        ("capture/logits.py", 7, "DA301"),  # self.multi_item_delimiter in the replacement
        # the replacement is called with `hidden_states_before_norm=` by one model's code
        ("capture/logits.py", 13, "DA305"),
        ("capture/parallel.py", 22, "DA201"),  # the keyword, in its multi-line call
        ("capture/parallel.py", 36, "DA303"),
    }
    assert by_place["capture/batch.py", 28, "DA901"].confidence == "likely"
    assert by_place["capture/batch.py", 42, "DA901"].confidence == "certain"
    replacement = by_place["capture/logits.py", 7, "DA301"]
    assert (
        replacement.symbol
        == "sglang.srt.layers.logits_processor.LogitsProcessor.multi_item_delimiter"
    )
    assert replacement.confidence == "certain"
    per_model = by_place["capture/logits.py", 13, "DA305"]
    assert per_model.severity == "warning" and "when that model runs" in per_model.message
    assert replacement.old_location == "sglang/srt/layers/logits_processor.py:277"
    moved = by_place["capture/batch.py", 5, "DA102"]
    assert moved.symbol == "sglang.srt.managers.scheduler_dp_attn_mixin.prepare_mlp_sync_batch_raw"
    assert "sglang.srt.managers.scheduler_components.dp_attn" in moved.message
    assert moved.old_location == "sglang/srt/managers/scheduler_dp_attn_mixin.py:129"
    assert moved.new_location == "sglang/srt/managers/scheduler_components/dp_attn.py:143"
    kwarg = by_place["capture/parallel.py", 22, "DA201"]
    assert "pynccl_use_current_stream" in kwarg.message
    assert kwarg.old_location == "sglang/srt/distributed/parallel_state.py:1361"
    assert kwarg.new_location == "sglang/srt/distributed/parallel_state.py:1525"
    arity = by_place["capture/parallel.py", 36, "DA303"]
    assert "now returns 4 (was 3)" in arity.message
    assert arity.new_location == "sglang/srt/layers/dp_attention.py:245"


def test_snapshot_covers_every_module_of_the_tree(release_cache):
    tree = resolve_spec("0.5.14", release_cache)
    snapshot = Snapshot(tree, BlobStore(release_cache / "snapshots.sqlite"))
    on_disk = [
        p
        for p in tree.package_dir.rglob("*.py")
        if all(part.isidentifier() for part in p.relative_to(tree.root).with_suffix("").parts)
    ]
    assert len(snapshot.files) == len(on_disk) > 2000
    # sglang/srt has no __init__.py; its modules are still there and resolvable
    assert not (tree.package_dir / "srt" / "__init__.py").exists()
    found = snapshot.resolve("sglang.srt.managers.scheduler_components.dp_attn")
    assert found is not None and found.module.file.endswith("dp_attn.py")


def test_whole_release_loads(release_cache):
    tree = resolve_spec("0.5.9", release_cache)
    snapshot = Snapshot(tree, BlobStore(release_cache / "snapshots.sqlite"))
    modules = snapshot.load_all()
    assert len(modules) == len(snapshot.files) > 1000
    assert sum(1 for m in modules if m.parse_error) <= 2


def test_drift_of_known_functions(release_cache):
    old, new = open_snapshots("0.5.9", "0.5.14", release_cache)
    differ = Differ(old, new)
    init = differ.changes_of("sglang.srt.distributed.parallel_state.init_model_parallel_group")
    assert any(
        isinstance(c, ParameterRemoved) and c.param == "pynccl_use_current_stream" for c in init
    )
    world = differ.changes_of("sglang.srt.layers.dp_attention.compute_dp_attention_world_info")
    (arity,) = [c for c in world if isinstance(c, ReturnArityChanged)]
    assert (arity.old_arity, arity.new_arity) == (3, 4)
    assert arity.new_elements[-1] == "attn_dp_size"


def test_warm_run_does_not_parse_sglang_again(release_cache, example_result, monkeypatch):
    import driftaudit.snapshot.entries as entries_module

    def parse(*args):
        raise AssertionError("sglang parsed again on a warm run")

    monkeypatch.setattr(entries_module, "extract_module_entries", parse)
    again = run_compare(EXAMPLE, "0.5.9", "0.5.14", release_cache)
    assert [f.as_dict() for f in again.findings] == [f.as_dict() for f in example_result.findings]


@pytest.mark.skipif(os.environ.get("DRIFTAUDIT_OFFLINE") == "1", reason="needs the index")
def test_unknown_version_names_the_available_ones(release_cache):
    with pytest.raises(DriftauditError, match=r"unknown sglang version '0\.5\.999'.*0\.5\.14"):
        resolve_spec("0.5.999", release_cache)


def test_fix_on_real_releases(release_cache, tmp_path):
    import shutil

    from driftaudit.pipeline import run_fix

    consumer = tmp_path / "consumer"
    shutil.copytree(EXAMPLE, consumer)
    safe = run_fix(consumer, None, "0.5.14", release_cache, apply=True)
    assert safe.fixed == 1 and {e.applicability for c in safe.changes for e in c.applied} == {
        "safe"
    }
    assert {f.code.code for f in safe.unsafe_held} == {"DA201", "DA901"}
    # the moved import would bind the call below it to 0.5.14's function, which the call
    # does not fit (a new DA203): the re-audit holds it back for a human
    held = {(e.kind, why) for c in safe.changes for e, why in c.skipped}
    assert ("move-import", "held back: the fixed code gets DA203 at capture/batch.py:46:5") in held
    result = run_fix(consumer, None, "0.5.14", release_cache, apply=True, unsafe_fixes=True)
    assert result.fixed == 2 and not result.unsafe_held
    batch = (consumer / "capture/batch.py").read_text()
    parallel = (consumer / "capture/parallel.py").read_text()
    assert "from sglang.srt.managers.scheduler_dp_attn_mixin import prepare_mlp_sync_batch_raw" in (
        batch
    )
    assert "return batch\n" in batch
    assert "pynccl_use_current_stream" not in parallel
    assert "attn_tp_rank, attn_tp_size, attn_dp_rank, _ = compute_dp_attention_world_info(" in (
        parallel
    )
    for path in consumer.rglob("*.py"):
        compile(path.read_bytes(), str(path), "exec")
    again = run_fix(consumer, None, "0.5.14", release_cache, apply=True, unsafe_fixes=True)
    assert again.fixed == 0 and not any(c.changed for c in again.changes)
    after = run_compare(consumer, None, "0.5.14", release_cache)
    left = {(f.code.code, f.path) for f in after.findings if f.fix and f.fix.autofixable}
    assert left == {("DA102", "capture/batch.py")}  # the held-back one
    assert {(f.path, f.line) for f in after.findings} >= {("capture/batch.py", 27)}


WRAPPED = Path(__file__).parents[1] / "fixtures" / "consumers" / "wrapped_args"


def test_server_args_keywords_and_wrapped_flags(release_cache):
    """ServerArgs keywords built in a helper dict and splatted elsewhere, and the
    `--sglang-*` flags / `sglang_*` fields that wrap them, on 0.5.9 -> 0.5.14."""
    result = run_compare(WRAPPED, "0.5.9", "0.5.14", release_cache)
    found = {(f.path, f.line, f.code.code) for f in result.findings}
    for line in (28, 29, 30):  # the to_kwargs() keys, splatted at engine.py:5
        assert ("trainer/args.py", line, "DA401") in found
    for line in (12, 13, 14):  # the wrapping dataclass fields
        assert ("trainer/args.py", line, "DA401") in found
    assert ("trainer/args.py", 20, "DA404") in found  # --sglang-enable-piecewise-cuda-graph
    assert ("train.sh", 2, "DA404") in found
    assert not any(
        f.line in (10, 11, 18, 19, 26, 27) for f in result.findings if f.path == "trainer/args.py"
    )
    removed = [f for f in result.findings if f.code.code == "DA401" and f.line == 29]
    assert "cuda_graph_max_bs_prefill" in removed[0].message


def test_diff_0_5_22_to_0_5_23(release_cache):
    from driftaudit.drift.serverarg_changes import ServerArgsDrift
    from driftaudit.drift.surface_changes import surface_changes

    old, new = open_snapshots("0.5.22", "0.5.23", release_cache)
    drift = ServerArgsDrift(old.server_args(), new.server_args())
    by_kind = {(c.code.code, c.symbol.rpartition(".")[2]) for c in drift.all_changes()}
    assert ("DA401", "speculative_skip_dp_mlp_sync") in by_kind
    assert ("DA402", "enable_decoder_swa_bounded_replay") in by_kind
    assert ("DA403", "enable_decoder_swa_bounded_replay") in by_kind
    requirements = {
        c.symbol: c.explain() for c in surface_changes(old, new) if c.code.code == "DA508"
    }
    assert "==0.7.1 -> ==0.7.2" in requirements["flashinfer-python"]
    assert "sgl-flash-mla" in requirements
