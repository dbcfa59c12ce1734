"""What an sglang method reads from `self` and what `__init__` sets: read from source
once per tree, then answered from the snapshot store."""

from __future__ import annotations

from driftaudit.snapshot import Snapshot, selfreads
from driftaudit.snapshot.selfreads import SelfReads
from driftaudit.sources.tree import tree_from_root
from driftaudit.store.db import BlobStore

from .conftest import write_tree

FILES = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/runner.py": """
class Runner:
    def __init__(self, size):
        self.size = size
        self.setup()

    def setup(self):
        self.pool = [0] * self.size

    def step(self, batch):
        if hasattr(self, "cache"):
            return self.pool[batch.index]
        return batch.tokens + self.size
""",
}
RUNNER = "sglang.srt.runner.Runner"


def _reads(tmp_path) -> SelfReads:
    root = write_tree(tmp_path / "tree", FILES)
    store = BlobStore(tmp_path / "cache.sqlite")
    return SelfReads(Snapshot(tree_from_root("1.0", "directory", root), store))


def test_reads_sets_and_parameter_reads(tmp_path):
    reads = _reads(tmp_path)
    assert reads.reads(RUNNER, "step") == ({"pool": 12, "size": 13}, {"cache"})
    assert reads.init_sets(RUNNER) == {"size": 4, "pool": 8}
    places = {"index": "sglang/srt/runner.py:12", "tokens": "sglang/srt/runner.py:13"}
    assert reads.parameter_reads(f"{RUNNER}.step", "batch") == (places, set())
    assert reads.reads(RUNNER, "missing") is None


def test_answers_come_from_the_store_the_second_time(tmp_path, monkeypatch):
    first = _reads(tmp_path)
    answers = [
        first.reads(RUNNER, "step"),
        first.init_sets(RUNNER),
        first.parameter_reads(f"{RUNNER}.step", "batch"),
    ]

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(selfreads.SelfReads, "_parsed", no_parse)
    again = _reads(tmp_path)
    assert [
        again.reads(RUNNER, "step"),
        again.init_sets(RUNNER),
        again.parameter_reads(f"{RUNNER}.step", "batch"),
    ] == answers


GUARDED = {
    "sglang/__init__.py": "",
    "sglang/chat.py": """
class Chat:
    def process(self, text):
        if not self.template:
            return text
        return self.render(text)

    def render(self, text):
        if self.template == "inkling":
            return self.effort
        return self.style
""",
}


def test_read_guards_follow_early_exits_and_calls(tmp_path):
    root = write_tree(tmp_path / "tree", GUARDED)
    store = BlobStore(tmp_path / "cache.sqlite")
    reads = SelfReads(Snapshot(tree_from_root("1.0", "directory", root), store))
    places = reads.read_guards("sglang.chat.Chat", "process")
    truthy = ["self.template", "truthy", []]
    assert places["template"][0] == []  # the test itself reads it unguarded
    assert places["effort"] == [[truthy, ["self.template", "in", ["inkling"]]]]
    assert places["style"] == [[truthy, ["self.template", "not in", ["inkling"]]]]
    # a stored answer of the wrong shape is computed again
    key = f"selfreads:{selfreads.SELFREADS_VERSION}:{reads.snapshot.digest}:guards:"
    store.put_many([(key + "sglang.chat.Chat:process", b'{"effort": [1]}')])
    again = SelfReads(Snapshot(tree_from_root("1.0", "directory", root), store))
    assert again.read_guards("sglang.chat.Chat", "process") == places


HELPERS = {
    "sglang/__init__.py": "",
    "sglang/util.py": """
def page(args):
    return args.page_size


def deeper(args):
    return args.too_deep
""",
    "sglang/pool.py": """
from sglang.util import page
from sglang import util


def _local(x, *, cfg):
    util.deeper(cfg)
    return cfg.local


class Pool:
    def __init__(self, server_args):
        self.size = page(server_args) + server_args.tp_size
        _local(1, cfg=server_args)
        self.check(server_args)
        if getattr(server_args, "knob", None):
            pass
        self.cache.evict(self.cache.size)

    def check(self, args):
        return args.checked and hasattr(self.cache, "lock")


def rebinds(server_args):
    server_args = server_args or None
    return server_args.x
""",
}


def test_parameter_reads_follow_helpers_one_call_deep(tmp_path):
    root = write_tree(tmp_path / "tree", HELPERS)
    store = BlobStore(tmp_path / "cache.sqlite")
    reads = SelfReads(Snapshot(tree_from_root("1.0", "directory", root), store))
    found, fallbacks = reads.parameter_reads("sglang.pool.Pool.__init__", "server_args")
    assert found == {
        "tp_size": "sglang/pool.py:13",
        "page_size": "sglang/util.py:3",  # an imported helper, by position
        "local": "sglang/pool.py:8",  # a helper of the module, by keyword
        "checked": "sglang/pool.py:21",  # a method on self
    }  # not `too_deep`: two calls down
    assert fallbacks == {"knob"}
    assert reads.parameter_reads("sglang.pool.rebinds", "server_args") is None
    members, member_fallbacks = reads.member_reads("sglang.pool.Pool", "__init__")
    at = "sglang/pool.py:18"
    assert members == {"cache": {"evict": at, "size": at}}
    assert member_fallbacks == {"cache.lock"}


MIXIN = {
    "sglang/__init__.py": "",
    "sglang/mixin.py": """
class Mixin:
    def helper(self):
        return self.from_mixin.size
""",
    "sglang/sched.py": """
from sglang.mixin import Mixin


class Sched(Mixin):
    def run(self):
        return self.helper() + self.own
""",
}


def test_read_places_name_the_file_of_the_method_that_reads(tmp_path):
    root = write_tree(tmp_path / "tree", MIXIN)
    store = BlobStore(tmp_path / "cache.sqlite")
    reads = SelfReads(Snapshot(tree_from_root("1.0", "directory", root), store))
    places = reads.read_places("sglang.sched.Sched", "run")
    assert places["own"] == "sglang/sched.py:7"
    assert places["from_mixin"] == "sglang/mixin.py:4"
    members, _ = reads.member_reads("sglang.sched.Sched", "run")
    assert members == {"from_mixin": {"size": "sglang/mixin.py:4"}}
