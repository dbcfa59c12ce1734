"""The per-file usage cache: what a cached run collects equals a fresh visit of every file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from driftaudit.usage.collect import collect_usages
from driftaudit.usage.file_cache import FileCache
from driftaudit.usage.files import ConsumerFiles

BASE = """from sglang.srt.managers.scheduler import Scheduler


class Base(Scheduler):
    def setup(self):
        self.ready = True
        self.peer = Scheduler()
"""

USER = """from pkg.base import Base


class Mine(Base):
    def run(self):
        self.ready = False
        return self.step(1, fast=True)
"""

CALLS = """from sglang.srt.server_args import ServerArgs


def make():
    return ServerArgs(model_path="m", tp_size=2)
"""


def _consumer(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "base.py").write_text(BASE)
    (root / "pkg" / "user.py").write_text(USER)
    (root / "pkg" / "calls.py").write_text(CALLS)
    return root


def _collect(root: Path, cache_dir: Path | None, files: ConsumerFiles | None = None):
    files = files or ConsumerFiles(root)
    files.cache = FileCache(cache_dir, root, "tool") if cache_dir else None
    usages = collect_usages(files)
    if files.cache is not None:
        files.cache.flush()
    return usages, files.cache


def _same(root: Path, cache_dir: Path) -> FileCache:
    cached, cache = _collect(root, cache_dir)
    fresh, _ = _collect(root, None)
    assert cached.usages == fresh.usages
    assert cached.defined_names == fresh.defined_names
    assert cached.fields == fresh.fields  # the attribute table, kept with the usages
    assert cached.files_scanned == fresh.files_scanned
    return cache


def test_only_the_edited_file_is_visited_again(tmp_path):
    root, cache_dir = _consumer(tmp_path / "c"), tmp_path / "cache"
    first = _same(root, cache_dir)
    assert first.hits == 0 and first.misses == 3
    again = _same(root, cache_dir)
    assert again.hits == 3 and again.misses == 0
    cached, _ = _collect(root, cache_dir)
    peer = ("call", "sglang.srt.managers.scheduler.Scheduler")
    assert cached.fields["pkg.base.Base"] == {"peer": peer}  # read back from the records
    calls = root / "pkg" / "calls.py"
    calls.write_text(CALLS.replace("tp_size=2)", "tp_size=2,\n        dp_size=1)"))
    edited = _same(root, cache_dir)
    assert (edited.hits, edited.misses) == (2, 1)
    usages, _ = _collect(root, None)
    assert any("dp_size" in getattr(u, "keywords", []) for u in usages.usages)
    calls.write_text(CALLS)
    files = ConsumerFiles(root)
    _collect(root, cache_dir, files)
    parsed = {f.rel for f in files.python() if f.parsed}
    assert parsed == {"pkg/calls.py"}  # the unchanged files are not even parsed


def test_a_file_that_does_not_parse_is_reported_every_time(tmp_path):
    root, cache_dir = _consumer(tmp_path / "c"), tmp_path / "cache"
    (root / "pkg" / "broken.py").write_text("import sglang\ndef f(:\n")
    for _ in range(2):
        _same(root, cache_dir)
        found, _ = _collect(root, cache_dir)
        assert [f.path for f in found.failures] == ["pkg/broken.py"]


def test_an_edited_export_visits_its_dependants_again(tmp_path):
    root, cache_dir = _consumer(tmp_path / "c"), tmp_path / "cache"
    _same(root, cache_dir)
    before, _ = _collect(root, None)
    # the base class now defines `step` itself: `self.step` in user.py is the consumer's own
    base = root / "pkg" / "base.py"
    base.write_text(BASE + "\n    def step(self, *args, **kwargs):\n        return None\n")
    edited = _same(root, cache_dir)
    assert edited.hits == 0 and edited.misses == 3  # the export table changed
    after, _ = _collect(root, None)
    assert before.usages != after.usages  # what user.py uses did change


def test_a_corrupt_store_is_visited_again(tmp_path):
    root, cache_dir = _consumer(tmp_path / "c"), tmp_path / "cache"
    _same(root, cache_dir)
    with sqlite3.connect(cache_dir / "files.sqlite") as db:
        db.execute("UPDATE blobs SET data = ?", (b"not zlib",))
    broken = _same(root, cache_dir)
    assert broken.misses == 3
    assert _same(root, cache_dir).hits == 3  # and replaced
    for suffix in ("-wal", "-shm"):  # a WAL would still hold the pages
        (cache_dir / f"files.sqlite{suffix}").unlink(missing_ok=True)
    (cache_dir / "files.sqlite").write_bytes(b"garbage, not a database")
    assert _same(root, cache_dir).misses == 3


def test_a_record_of_another_form_is_visited_again(tmp_path):
    import pickle
    import zlib

    root, cache_dir = _consumer(tmp_path / "c"), tmp_path / "cache"
    _same(root, cache_dir)
    with sqlite3.connect(cache_dir / "files.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM blobs")]
        for number, key in enumerate(keys):
            record = [
                {"file": "x", "values": {}, "usage_key": "x", "usages": b"junk"},
                ["a list"],
                {"usages": 3, "values": {"exports-summary": b"junk"}},
            ][number % 3]
            db.execute(
                "UPDATE blobs SET data = ? WHERE key = ?",
                (zlib.compress(pickle.dumps(record)), key),
            )
    assert _same(root, cache_dir).misses == 3
