"""The API model: every module (namespace folders too), resolution, the cache."""

from __future__ import annotations

import sqlite3

from driftaudit.snapshot import Snapshot
from driftaudit.snapshot.api_model import Function
from driftaudit.sources.tree import tree_from_root
from driftaudit.store.db import BlobStore

from .conftest import write_tree

TREE = {
    "sglang/__init__.py": "",
    # srt has no __init__.py: a namespace folder inside a regular package
    "sglang/srt/distributed/__init__.py": "from .parallel_state import *\nfrom .utils import *\n",
    "sglang/srt/distributed/parallel_state.py": (
        "__all__ = ['init_group']\n"
        "def init_group(ranks, backend='nccl'):\n    return ranks, backend\n"
        "def not_exported():\n    pass\n"
    ),
    "sglang/srt/distributed/utils.py": "def _private():\n    pass\ndef public():\n    pass\n",
    "sglang/srt/layers/deep/nested/mod.py": (
        "from sglang.srt.distributed import init_group as ig\n"
        "import torch\n"
        "class Base:\n    def base_method(self):\n        pass\n"
        "class Child(Base):\n    __slots__ = ('slot_a',)\n"
        "    def __init__(self):\n        self.inst = 1\n"
        "def gen():\n    yield 1\n"
    ),
    "sglang/srt/broken.py": "def oops(:\n",
}


def _snapshot(tmp_path, store=None):
    root = write_tree(tmp_path / "tree", TREE)
    store = store or BlobStore(tmp_path / "cache.sqlite")
    return Snapshot(tree_from_root("dir", "directory", root), store)


def test_every_module_is_seen_including_namespace_folders(tmp_path):
    snap = _snapshot(tmp_path)
    assert set(snap.files) == {
        "sglang",
        "sglang.srt.distributed",
        "sglang.srt.distributed.parallel_state",
        "sglang.srt.distributed.utils",
        "sglang.srt.layers.deep.nested.mod",
        "sglang.srt.broken",
    }
    assert len(snap.load_all(workers=1)) == len(snap.files)


def test_resolution_follows_star_imports_aliases_and_bases(tmp_path):
    snap = _snapshot(tmp_path)
    found = snap.resolve("sglang.srt.distributed.init_group")
    assert found.canonical == "sglang.srt.distributed.parallel_state.init_group"
    assert found.location == "sglang/srt/distributed/parallel_state.py:2"
    assert snap.resolve("sglang.srt.distributed.not_exported") is None  # not in __all__
    assert snap.resolve("sglang.srt.distributed.public") is not None
    assert snap.resolve("sglang.srt.distributed._private") is None  # star skips _names
    alias = snap.resolve("sglang.srt.layers.deep.nested.mod.ig")
    assert alias.canonical.endswith("parallel_state.init_group")
    assert snap.resolve("sglang.srt.layers.deep.nested.mod.Child.base_method") is not None
    assert snap.resolve("sglang.srt.layers.deep.nested.mod.Child.inst") is not None
    assert snap.resolve("sglang.srt.layers.deep.nested.mod.Child.slot_a") is not None
    assert snap.resolve("sglang.srt.layers.deep.nested.mod.torch.anything").opaque
    found, consumed = snap.resolve_longest("sglang.srt.layers.deep.nested.mod.Child.nope.x")
    assert consumed == 7 and found.canonical.endswith("Child")


def test_return_shapes_and_unparsable_modules(tmp_path):
    snap = _snapshot(tmp_path)
    init_group = snap.resolve("sglang.srt.distributed.init_group").obj
    assert isinstance(init_group, Function) and init_group.return_arity == 2
    assert init_group.return_elements == ["ranks", "backend"]
    assert snap.resolve("sglang.srt.layers.deep.nested.mod.gen").obj.return_arity is None
    broken = snap.module("sglang.srt.broken")
    assert broken.parse_error
    assert snap.resolve("sglang.srt.broken.anything").opaque  # unknown, never "removed"


def test_warm_snapshot_is_read_from_the_cache(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / "cache.sqlite")
    _snapshot(tmp_path, store).load_all(workers=1)
    import driftaudit.snapshot.entries as entries_module

    def fail(*args):
        raise AssertionError("parsed again")

    monkeypatch.setattr(entries_module, "extract_module_entries", fail)
    again = _snapshot(tmp_path, store)
    assert len(again.load_all(workers=1)) == len(TREE)


def test_corrupt_cache_entries_and_database_are_rebuilt(tmp_path):
    path = tmp_path / "cache.sqlite"
    store = BlobStore(path)
    snap = _snapshot(tmp_path, store)
    snap.load_all(workers=1)
    db = sqlite3.connect(path)
    db.execute("UPDATE blobs SET data = x'00ff00'")
    db.commit()
    db.close()
    rebuilt = _snapshot(tmp_path, BlobStore(path))
    assert rebuilt.resolve("sglang.srt.distributed.init_group") is not None
    store._db.close()
    path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"cache.sqlite{suffix}").unlink(missing_ok=True)
    fresh = _snapshot(tmp_path, BlobStore(path))
    assert fresh.resolve("sglang.srt.distributed.init_group") is not None


def test_definers_are_kept_per_name_and_read_back_without_the_index(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    first = _snapshot(tmp_path, store)
    names = ["init_group", "public", "Child", "nowhere"]
    answers = first.definers(iter(names))  # any iterable, answered in full
    assert answers == {name: first.name_index().get(name, []) for name in names}
    assert answers["init_group"] == ["sglang.srt.distributed.parallel_state"]
    assert answers["nowhere"] == []
    again = _snapshot(tmp_path, store)  # a later run asking the same names
    assert again.definers(names) == answers
    # read per name, the whole index never decoded
    assert not any(key.startswith("names:") for key in again.store._memory)
    db = sqlite3.connect(tmp_path / "cache.sqlite")
    db.execute("UPDATE blobs SET data = x'00ff00' WHERE key LIKE 'definers:%Child'")
    db.commit()
    db.close()
    damaged = _snapshot(tmp_path, BlobStore(tmp_path / "cache.sqlite"))
    assert damaged.definers(["Child", "public"]) == {n: answers[n] for n in ("Child", "public")}


def test_get_many_reads_what_is_stored_and_skips_the_rest(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    store.put_many([(f"k{i}", str(i).encode()) for i in range(1200)])
    keys = [f"k{i}" for i in range(0, 1200, 2)] + ["missing"]
    assert store.get_many(keys) == {f"k{i}": str(i).encode() for i in range(0, 1200, 2)}
