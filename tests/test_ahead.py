"""A cold run's tree-wide entries built ahead in a forked child: the same bytes, or none."""

from __future__ import annotations

import json
from pathlib import Path

from driftaudit.pipeline import _build_ahead, _snapshots
from driftaudit.snapshot import Snapshot, callgraph, fingerprints
from driftaudit.snapshot.entries import calls_key, env_entry, prints_key
from driftaudit.sources.tree import tree_from_root
from driftaudit.store import Entry, Raw, Store
from driftaudit.store.ahead import Ahead
from driftaudit.store.db import BlobStore
from driftaudit.usage.imported import imported_modules

FIXTURES = Path(__file__).parent / "fixtures" / "codes"


def _pair(tmp_path: Path, guessed: list[str]) -> tuple[Snapshot, Snapshot]:
    old = tree_from_root("old", "directory", FIXTURES / "DA401" / "old")
    new = tree_from_root("new", "directory", FIXTURES / "DA302-registry" / "new")
    return _snapshots(old, new, tmp_path, guessed)


def _start(snapshots, guessed=(), env_names=()) -> list[Ahead]:
    store = snapshots[0].store
    children = []
    for jobs in _build_ahead(store, snapshots, list(guessed), set(env_names)):
        children.append(Ahead(store, jobs))
        store.building(children[-1])
    return children


def test_the_child_builds_what_the_lookups_would(tmp_path):
    guessed = ["sglang.srt.server_args", "sglang.srt.spec"]
    snapshots = _pair(tmp_path, guessed)
    children = _start(snapshots, guessed)
    assert len(children) == 2  # a child per tree
    for child in children:
        child.join()
    db = snapshots[0].store.db
    for snapshot in snapshots:
        wanted = snapshot.tree_entries()
        assert len(wanted) > 8  # ServerArgs, the name index, every surface
        modules = [name for name in snapshot.files if name.startswith("sglang.srt.")]
        assert len(modules) == 1  # each tree has one of the two guessed modules
        wanted.append(snapshot.module_entry(modules[0]))
        for entry in wanted:
            assert db.get(entry.key) == entry.build()[0], entry.key
    # read from the same parse as the models, what the behaviour checks would build
    old, new = snapshots
    for snapshot, module in ((old, "sglang.srt.server_args"), (new, "sglang.srt.spec")):
        key = calls_key(module, snapshot.file_digest(module))
        expected = callgraph.extract_calls(module, snapshot.source(module))
        assert json.loads(db.get(key)) == expected
    module = "sglang.srt.server_args"
    key = prints_key(module, old.file_digest(module))
    prints = fingerprints.extract_prints(module, old.source(module))
    assert db.get(key) == fingerprints.prints_codec(module).encode(prints)
    module = "sglang.srt.spec"  # fingerprints are asked of the old tree only
    assert db.get(prints_key(module, new.file_digest(module))) is None


def test_the_modules_a_consumer_imports_are_guessed():
    texts = [
        "import sglang.srt.server_args as sa\n",
        "from sglang.srt.managers import io_struct, scheduler as s\n    from sglang import x\n",
        None,
        "import torch  # no sglang here\n",
    ]
    assert imported_modules(texts) == [
        "sglang",
        "sglang.srt",
        "sglang.srt.server_args",
        "sglang.srt.managers",
        "sglang.srt.managers.io_struct",
        "sglang.srt.managers.scheduler",
        "sglang.x",
    ]


def test_a_warm_tree_has_nothing_to_build(tmp_path):
    snapshots = _pair(tmp_path, [])
    for snapshot in snapshots:
        for entry in snapshot.tree_entries():
            snapshot.store.get(entry)
    assert _build_ahead(snapshots[0].store, snapshots, [], set()) == []


def _fails() -> bytes:
    raise ValueError("left to the lookup")


def _dies() -> bytes:
    import os

    os._exit(3)


def _raw(key: str, compute) -> Entry:
    return Entry(key, compute, Raw())


def test_a_failed_job_or_a_dead_child_is_left_to_the_lookup(tmp_path):
    store = Store(BlobStore(tmp_path / "cache.sqlite"))
    jobs = [(_raw("a", lambda: b"1"), "wait"), (_raw("b", _fails), "wait")]
    child = Ahead(store, [*jobs, (_raw("c", lambda: b"3"), "wait")])
    child.join()
    assert [store.db.get(k) for k in "abc"] == [b"1", None, b"3"]
    child = Ahead(store, [(_raw("d", _dies), "wait"), (_raw("e", lambda: b"5"), "wait")])
    child.join()  # returns: the child ended without sending it
    assert (store.db.get("d"), store.db.get("e")) == (None, None)
    store.building(child)
    assert store.get(_raw("d", lambda: b"4")) == b"4"  # computed by the lookup


def _slow() -> bytes:
    import time

    time.sleep(0.5)
    return b"1"


def test_a_job_asked_for_before_the_child_starts_it_is_taken_over(tmp_path):
    store = Store(BlobStore(tmp_path / "cache.sqlite"))
    child = Ahead(store, [(_raw("a", _slow), "wait"), (_raw("b", lambda: b"2"), "wait")])
    child.wait("b")  # not started (the child is on "a"): returns at once, the caller builds it
    assert store.db.get("b") is None
    child.join()
    assert (store.db.get("a"), store.db.get("b")) == (b"1", None)  # the child skipped "b"


def test_a_shared_job_is_waited_for(tmp_path):
    store = Store(BlobStore(tmp_path / "cache.sqlite"))
    child = Ahead(store, [(_raw("a", _slow), "wait"), (_raw("b", lambda: b"2"), "share")])
    child.wait("b")  # not started yet: waits for the child to build it
    assert store.db.get("b") == b"2"
    child.join()


def test_the_child_reads_the_env_vars_the_consumer_names(tmp_path):
    from driftaudit.snapshot.surfaces.envs import EnvVar

    root = FIXTURES / "DA504" / "old"
    snapshot = Snapshot(tree_from_root("old", "directory", root), BlobStore(tmp_path / "w.db"))
    whole = snapshot.surface("env_vars")
    name = next(iter(whole))
    cold = Snapshot(tree_from_root("old", "directory", root), BlobStore(tmp_path / "c.db"))
    children = _start((cold,), env_names=[name, "SGLANG_NOT_READ"])
    assert children
    children[0].join()
    db = cold.store.db
    stored = json.loads(db.get(env_entry(cold.digest, name).key))
    assert EnvVar.from_json(stored) == whole[name]
    assert json.loads(db.get(env_entry(cold.digest, "SGLANG_NOT_READ").key)) is None
    assert cold.env_vars({name}) == {n: e for n, e in whole.items() if n == name}


def test_the_env_var_names_a_consumer_spells(tmp_path):
    from driftaudit.usage.files import ConsumerFiles
    from driftaudit.usage.surface_uses.scan import env_names_spelled

    (tmp_path / "run.sh").write_text("export SGLANG_A=1 SGL_B=2\necho $MY_SGLANG_C\n")
    (tmp_path / "app.py").write_text('os.environ["SGLANG_D"] = "1"  # SGLANG_\n')
    (tmp_path / "README.md").write_text("no names here\n")
    spelled = env_names_spelled(ConsumerFiles(tmp_path))
    assert spelled == {"SGLANG_A", "SGL_B", "SGLANG_C", "SGLANG_D"}


def test_a_warm_tree_has_no_env_batch_either(tmp_path):
    root = FIXTURES / "DA504" / "old"
    snapshot = Snapshot(tree_from_root("old", "directory", root), BlobStore(tmp_path / "c.db"))
    names = ["SGLANG_NOT_READ", *snapshot.surface("env_vars")]
    snapshot.env_vars(names)  # each name's entry kept
    again = Snapshot(tree_from_root("old", "directory", root), BlobStore(tmp_path / "c.db"))
    assert again.env_batch(names) is None
