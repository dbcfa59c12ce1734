"""The static call graph of a snapshot, and what an entry no longer reaches."""

from __future__ import annotations

import ast

import pytest

from driftaudit.drift.reach_changes import ReachDiffer
from driftaudit.snapshot import Snapshot, callgraph
from driftaudit.snapshot.callgraph import CallGraph
from driftaudit.snapshot.entries import calls_key
from driftaudit.sources.tree import tree_from_root
from driftaudit.store import Store
from driftaudit.store.db import BlobStore

from .conftest import write_tree

POOL = """
class Pool:
    def __init__(self, size):
        self.size = size

    def clear(self):
        self.free = list(range(self.size))
        self.used = []
        self.count = 0
"""

OLD = {
    "sglang/__init__.py": "",
    "sglang/srt/pool.py": POOL,
    "sglang/srt/base.py": """
class Base:
    def setup(self):
        self.ready = True
        self.steps = []
        self.more = 1

    def go(self):
        return 1
""",
    "sglang/srt/runner.py": """
from sglang.srt.base import Base
from .pool import Pool
import sglang.srt.pool as pool_module


class Runner(Base):
    def __init__(self, size):
        self.pool = Pool(size)
        self.initialize()

    def initialize(self):
        self.setup()
        self.init_memory_pool()
        self.get_size()

    def init_memory_pool(self):
        self.pool.clear()
        self.tokens = 2
        self.max = 3

    def get_size(self):
        return self.pool.size

    def go(self):
        return super().go()

    def rebuild(self):
        return pool_module.Pool(1)


class Worker:
    def __init__(self, runner: "Runner"):
        self.runner = runner

    @property
    def current(self) -> Runner:
        return self.runner

    def step(self):
        self.runner.go()
        self.current.init_memory_pool()
""",
}

NEW = dict(OLD)
NEW["sglang/srt/runner.py"] = (
    OLD["sglang/srt/runner.py"]
    .replace("        self.init_memory_pool()\n        self.get_size()\n", "")
    .replace(
        "    def go(self):\n        return super",
        "    def alloc_memory_pool(self):\n        self.init_memory_pool()\n        "
        "self.get_size()\n\n    def go(self):\n        return super",
    )
)
NEW["sglang/srt/worker.py"] = """
from sglang.srt.runner import Runner


class TpWorker:
    def __init__(self, size):
        self.model_runner = Runner(size)
        self.model_runner.alloc_memory_pool()
"""

R = "sglang.srt.runner"


def graph(tmp_path, files, name="old", store=None) -> CallGraph:
    root = write_tree(tmp_path / name, files)
    store = store or BlobStore(tmp_path / "cache.sqlite")
    return CallGraph(Snapshot(tree_from_root(name, "directory", root), store))


def test_calls_resolve_through_self_bases_imports_and_typed_attributes(tmp_path) -> None:
    g = graph(tmp_path, OLD)
    assert set(g.callees(f"{R}.Runner.__init__")) == {
        "sglang.srt.pool.Pool.__init__",  # a constructor, through a relative import
        f"{R}.Runner.initialize",
    }
    assert set(g.callees(f"{R}.Runner.initialize")) == {
        "sglang.srt.base.Base.setup",  # inherited: found on the base class
        f"{R}.Runner.init_memory_pool",
        f"{R}.Runner.get_size",
    }
    # self.pool = Pool(...) in __init__ types the attribute
    assert g.callees(f"{R}.Runner.init_memory_pool") == ["sglang.srt.pool.Pool.clear"]
    assert g.callees(f"{R}.Runner.go") == ["sglang.srt.base.Base.go"]  # super()
    assert g.callees(f"{R}.Runner.rebuild") == ["sglang.srt.pool.Pool.__init__"]  # module alias
    # a typed parameter stored on self, and a property with a return annotation
    assert set(g.callees(f"{R}.Worker.step")) == {
        f"{R}.Runner.go",
        f"{R}.Runner.init_memory_pool",
    }


def test_reach_is_bounded_by_depth(tmp_path) -> None:
    g = graph(tmp_path, OLD)
    shallow = g.reach(f"{R}.Runner.__init__", 1)
    assert set(shallow) == {
        f"{R}.Runner.__init__",
        f"{R}.Runner.initialize",
        "sglang.srt.pool.Pool.__init__",
    }
    deep = g.reach(f"{R}.Runner.__init__", 3)
    assert deep["sglang.srt.pool.Pool.clear"].depth == 3
    assert deep["sglang.srt.pool.Pool.clear"].parent == f"{R}.Runner.init_memory_pool"


def test_module_call_data_is_cached_by_content(tmp_path, monkeypatch) -> None:
    store = BlobStore(tmp_path / "cache.sqlite")
    cold = graph(tmp_path, OLD, store=store)
    cold.reach(f"{R}.Runner.__init__", 3)
    cold.save()

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(callgraph, "extract_calls", no_parse)
    monkeypatch.setattr(callgraph, "function_calls_at", no_parse)  # the calls were kept too
    warm = graph(tmp_path, OLD, name="copy", store=store)  # same files, another folder
    assert "sglang.srt.pool.Pool.clear" in warm.reach(f"{R}.Runner.__init__", 3)


def test_a_file_both_trees_share_is_read_once_before_it_is_stored(tmp_path, monkeypatch):
    store = Store(BlobStore(tmp_path / "cache.sqlite"))  # the run's one store
    old = graph(tmp_path, OLD, store=store)
    new = graph(tmp_path, OLD, name="new", store=store)  # the same files: the same digests
    read = []
    real = callgraph.extract_calls
    monkeypatch.setattr(callgraph, "extract_calls", lambda *a: read.append(a[0]) or real(*a))
    entry = f"{R}.Runner.__init__"
    assert old.reach(entry, 3).keys() == new.reach(entry, 3).keys()
    assert read and len(read) == len(set(read))  # neither saved yet: built once, shared
    old.save()
    new.save()
    key = calls_key("sglang.srt.pool", old.snapshot.file_digest("sglang.srt.pool"))
    assert store.db.get(key) is not None  # stored by the first save


def test_lost_callees_are_the_roots_and_say_where_they_are_called_now(tmp_path) -> None:
    store = BlobStore(tmp_path / "cache.sqlite")
    differ = ReachDiffer(graph(tmp_path, OLD, store=store), graph(tmp_path, NEW, "new", store))
    lost = differ.lost(f"{R}.Runner.__init__")
    # init_memory_pool is the root; Pool.clear is lost with it; get_size is a trivial getter
    assert [c.callee for c in lost] == [f"{R}.Runner.init_memory_pool"]
    change = lost[0]
    assert change.old_path == [f"{R}.Runner.__init__", f"{R}.Runner.initialize", change.callee]
    assert change.lost_below == 1
    assert change.sets == ["max", "tokens"]  # on the runner itself, not on the pool
    assert change.new_callers == [
        [f"{R}.Runner.alloc_memory_pool", "sglang.srt.worker.TpWorker.__init__"],
        [f"{R}.Worker.step"],  # through the typed property; nothing calls it
    ]
    assert change.old_location == "sglang/srt/runner.py:14"
    assert change.new_location.startswith("sglang/srt/runner.py:")
    assert "no longer calls `Runner.init_memory_pool`" in change.explain()


@pytest.mark.parametrize("entry", [f"{R}.Runner.go", f"{R}.Worker.step", f"{R}.Runner.gone"])
def test_nothing_lost_where_the_calls_did_not_change(tmp_path, entry) -> None:
    store = BlobStore(tmp_path / "cache.sqlite")
    differ = ReachDiffer(graph(tmp_path, OLD, store=store), graph(tmp_path, NEW, "new", store))
    assert differ.lost(entry) == []


def test_a_loss_is_only_looked_for_where_a_reached_function_sets_a_read_attribute(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    differ = ReachDiffer(graph(tmp_path, OLD, store=store), graph(tmp_path, NEW, "new", store))
    entry = f"{R}.Runner.__init__"
    runner, pool = f"{R}.Runner", "sglang.srt.pool.Pool"
    # init_memory_pool sets it, within depth, on the runner (read on a runner)
    assert differ.can_lose_sets(entry, {"tokens": {runner}})
    assert differ.can_lose_sets(entry, {"free": {pool}})  # Pool.clear, two calls down
    # set on a pool, read on a runner: the read is of another object's attribute
    assert not differ.can_lose_sets(entry, {"free": {runner}})
    # set by Base.setup on the runner (a Base): read on the runner, its subclass
    assert differ.can_lose_sets(entry, {"ready": {runner}})
    assert not differ.can_lose_sets(entry, {"ready": {pool}})
    assert not differ.can_lose_sets(entry, {"nothing_sets_this": {runner}})
    assert not differ.can_lose_sets(f"{R}.Runner.gone", {"tokens": {runner}})  # not a function
    assert not differ.new._data  # the question never opened a module of the new tree


def _every_def(tree):
    from driftaudit.astwalk import walk_statements

    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [n for n in walk_statements(tree) if isinstance(n, defs)]


@pytest.mark.parametrize("path", sorted(OLD) + ["sglang/srt/worker.py"])
def test_a_function_read_alone_gives_the_calls_a_read_of_its_module_gives(path, monkeypatch):
    code = {**OLD, **NEW}[path] + TRICKY
    data = callgraph.extract_calls("sglang.srt.m", code)
    source = callgraph.SourceText(code)
    by_place = {(n.lineno, n.col_offset): n for n in _every_def(ast.parse(code))}
    assert len(by_place) == len(data["functions"])
    for info in data["functions"].values():
        whole = callgraph.function_calls(by_place[info["line"], info["indent"]])
        assert callgraph.function_calls_at(source, info) == whole
        # a region that does not parse alone: the whole module is read instead
        monkeypatch.setattr(callgraph, "parse_region", lambda *a: None)
        assert callgraph.function_calls_at(source, info) == whole
        monkeypatch.undo()


TRICKY = '''

class Tricky:
    @property
    def text(self):
        return """
not indented: a string
""" + self.helper()

    async def fetch(self, x: "Pool"):
        def inner():
            return self.nested()
        pool = Pool(1)
        pool.clear()
        x.clear()
        return inner
'''


def test_only_the_functions_a_walk_reaches_are_read(tmp_path, monkeypatch):
    read = []
    real = callgraph.function_calls
    monkeypatch.setattr(callgraph, "function_calls", lambda fn: read.append(fn.name) or real(fn))
    g = graph(tmp_path, OLD)
    g.reach(f"{R}.Runner.init_memory_pool", 2)
    assert read == ["init_memory_pool", "clear"]  # not the module's other functions
    # callers: only the functions that spell the callee's name are read
    read.clear()
    assert g.callers(f"{R}.Runner.get_size", [R]) == [f"{R}.Runner.initialize"]
    assert read == ["initialize"]


def test_where_the_new_tree_calls_a_lost_callee_from_is_looked_for_only_when_asked(tmp_path):
    store = BlobStore(tmp_path / "cache.sqlite")
    differ = ReachDiffer(graph(tmp_path, OLD, store=store), graph(tmp_path, NEW, "new", store))
    entry = f"{R}.Runner.__init__"
    lost = differ.lost(entry, callers=False)
    assert [c.callee for c in lost] == [f"{R}.Runner.init_memory_pool"]
    assert lost[0].new_callers == [] and lost[0].new_location is None
    assert "sglang.srt.worker" not in differ.new._data  # the callers' module: not read yet
    assert differ.find_callers(entry, lost)
    assert lost[0].new_callers[0] == [
        f"{R}.Runner.alloc_memory_pool",
        "sglang.srt.worker.TpWorker.__init__",
    ]
    assert not differ.find_callers(entry, lost)  # found once
