"""A cold run's tree-wide entries built in a forked child: the same bytes, or none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftaudit.cache import BlobStore
from driftaudit.snapshot import Snapshot, callgraph, fingerprints, prefetch
from driftaudit.sources.tree import tree_from_root

FIXTURES = Path(__file__).parent / "fixtures" / "codes"


def _snapshots(tmp_path: Path) -> list[Snapshot]:
    store = BlobStore(tmp_path / "cache.sqlite")
    return [
        Snapshot(tree_from_root(side, "directory", FIXTURES / case / side), store)
        for case, side in (("DA401", "old"), ("DA302-registry", "new"))
    ]


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefetch, "_cores", lambda: 2)
    monkeypatch.setattr(prefetch, "MIN_FILES", 0)


def test_the_child_builds_what_the_lookups_would(tmp_path, two_cores):
    snapshots = _snapshots(tmp_path)
    guessed = ["sglang.srt.server_args", "sglang.srt.spec"]
    for snapshot, side in zip(snapshots, [("calls", "prints"), ("calls",)], strict=True):
        snapshot.side = dict.fromkeys(guessed, side)
    prefetch.prefetch_tree_entries(snapshots, guessed)
    assert snapshots[0].prefetch is not snapshots[1].prefetch  # a child per tree
    for snapshot in snapshots:
        assert snapshot.prefetch is not None
        entries = snapshot.tree_entries()
        assert len(entries) > 8  # ServerArgs, the name index, every surface
        modules = [name for name in snapshot.files if name.startswith("sglang.srt.")]
        assert len(modules) == 1  # each tree has one of the two guessed modules
        entries.update(snapshot.module_entry(modules[0]))
        snapshot.prefetch.join()
        for key, compute in entries.items():
            value = compute()
            for k, v in value if isinstance(value, list) else [(key, value)]:
                assert snapshot.store.get(k) == v, k
    # read from the same parse as the models, what the behaviour checks would build
    old, new = snapshots
    for snapshot, module in ((old, "sglang.srt.server_args"), (new, "sglang.srt.spec")):
        key = callgraph.data_key(module, snapshot.file_digest(module))
        expected = callgraph.extract_calls(module, snapshot.source(module))
        assert json.loads(snapshot.store.get(key)) == expected
    module = "sglang.srt.server_args"
    key = fingerprints.prints_key(module, old.file_digest(module))
    prints = fingerprints.extract_prints(module, old.source(module))
    assert old.store.get(key) == fingerprints.encode_prints(prints)
    module = "sglang.srt.spec"  # fingerprints are asked of the old tree only
    assert new.store.get(fingerprints.prints_key(module, new.file_digest(module))) is None


def test_the_modules_a_consumer_imports_are_guessed():
    texts = [
        "import sglang.srt.server_args as sa\n",
        "from sglang.srt.managers import io_struct, scheduler as s\n    from sglang import x\n",
        None,
        "import torch  # no sglang here\n",
    ]
    assert prefetch.imported_modules(texts) == [
        "sglang",
        "sglang.srt",
        "sglang.srt.server_args",
        "sglang.srt.managers",
        "sglang.srt.managers.io_struct",
        "sglang.srt.managers.scheduler",
        "sglang.x",
    ]


def test_a_warm_tree_starts_no_child(tmp_path, two_cores):
    snapshots = _snapshots(tmp_path)
    for snapshot in snapshots:
        snapshot.store.put_many([(k, f()) for k, f in snapshot.tree_entries().items()])
    prefetch.prefetch_tree_entries(snapshots)
    assert all(s.prefetch is None for s in snapshots)


def test_one_core_or_a_small_tree_starts_no_child(tmp_path, monkeypatch):
    monkeypatch.setattr(prefetch, "_cores", lambda: 1)
    snapshots = _snapshots(tmp_path)
    prefetch.prefetch_tree_entries(snapshots)
    assert all(s.prefetch is None for s in snapshots)
    monkeypatch.setattr(prefetch, "_cores", lambda: 2)
    prefetch.prefetch_tree_entries(snapshots)  # fixture trees: below MIN_FILES
    assert all(s.prefetch is None for s in snapshots)


def _fails() -> bytes:
    raise ValueError("left to the lookup")


def _dies() -> bytes:
    import os

    os._exit(3)


def test_a_failed_job_or_a_dead_child_is_left_to_the_lookup(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    jobs = {"a": lambda: b"1", "b": _fails, "c": lambda: b"3"}
    child = prefetch.Prefetch(jobs, store)
    child.join()
    assert (store.get("a"), store.get("b"), store.get("c")) == (b"1", None, b"3")
    child = prefetch.Prefetch({"d": _dies, "e": lambda: b"5"}, store)
    child.join()  # returns: the child ended without sending it
    assert (store.get("d"), store.get("e")) == (None, None)


def _slow() -> bytes:
    import time

    time.sleep(0.5)
    return b"1"


def test_a_job_asked_for_before_the_child_starts_it_is_taken_over(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    child = prefetch.Prefetch({"a": _slow, "b": lambda: b"2"}, store)
    child.wait("b")  # not started (the child is on "a"): returns at once, the caller builds it
    assert store.get("b") is None
    child.join()
    assert (store.get("a"), store.get("b")) == (b"1", None)  # the child skipped "b"


def test_a_job_not_taken_over_is_waited_for(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    child = prefetch.Prefetch({"a": _slow, "b": lambda: b"2"}, store)
    child.wait("b", take=False)  # not started yet: waits for the child to build it
    assert store.get("b") == b"2"
    child.join()


def test_the_child_reads_the_env_vars_the_consumer_names(tmp_path, two_cores):
    from driftaudit.snapshot.surfaces.envs import EnvVar

    store = BlobStore(tmp_path / "cache.sqlite")
    root = FIXTURES / "DA504" / "old"
    snapshot = Snapshot(tree_from_root("old", "directory", root), store)
    whole = snapshot.surface("env_vars")
    name = next(iter(whole))
    store = BlobStore(tmp_path / "cold.sqlite")  # nothing built yet
    snapshot = Snapshot(tree_from_root("old", "directory", root), store)
    prefetch.prefetch_tree_entries([snapshot], env_names=[name, "SGLANG_NOT_READ"])
    assert snapshot.prefetch is not None
    snapshot.prefetch.join()
    stored = json.loads(store.get(snapshot._env_key(name)))
    assert EnvVar.from_json(stored) == whole[name]
    assert json.loads(store.get(snapshot._env_key("SGLANG_NOT_READ"))) is None
    assert snapshot.env_vars({name}) == {n: e for n, e in whole.items() if n == name}


def test_the_env_var_names_a_consumer_spells(tmp_path):
    from driftaudit.usage.files import ConsumerFiles
    from driftaudit.usage.surfaces.scan import env_names_spelled

    (tmp_path / "run.sh").write_text("export SGLANG_A=1 SGL_B=2\necho $MY_SGLANG_C\n")
    (tmp_path / "app.py").write_text('os.environ["SGLANG_D"] = "1"  # SGLANG_\n')
    (tmp_path / "README.md").write_text("no names here\n")
    spelled = env_names_spelled(ConsumerFiles(tmp_path))
    assert spelled == {"SGLANG_A", "SGL_B", "SGLANG_C", "SGLANG_D"}


def test_a_warm_tree_starts_no_child_for_the_env_vars_either(tmp_path, two_cores):
    store = BlobStore(tmp_path / "cache.sqlite")
    root = FIXTURES / "DA504" / "old"
    snapshot = Snapshot(tree_from_root("old", "directory", root), store)
    store.put_many([(k, f()) for k, f in snapshot.tree_entries().items()])
    names = ["SGLANG_NOT_READ", *snapshot.surface("env_vars")]
    snapshot.env_vars(names)  # each name's entry kept
    again = Snapshot(tree_from_root("old", "directory", root), store)
    prefetch.prefetch_tree_entries([again], env_names=names)
    assert again.prefetch is None
