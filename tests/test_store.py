"""The store: declared entries, codecs that refuse what is not theirs, one key helper, and
the same findings and the same stored entries whether a run forks or not."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest

from driftaudit.cli import main
from driftaudit.store import Entry, Invalid, Json, Pickled, Store, Yield, key
from driftaudit.store.codecs import strings, table_of_strings
from driftaudit.store.db import BlobStore

from .conftest import FIXTURES

# what a forked run builds ahead beside what the run asks for
AHEAD = {"serverargs", "names", "surface", "envindex", "envnames", "env", "module"}
CASES = sorted(p.name for p in (FIXTURES / "codes").iterdir() if (p / "consumer").is_dir())
# a spread of the corpus: imports, calls, surfaces, copies (DA701), reach (DA702), packs
SAMPLE = [
    c for c in CASES if c.split("-")[0] in {"DA102", "DA201", "DA302", "DA504", "DA701", "DA702"}
]


def _compare(case: Path, cache: Path, jobs: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("DRIFTAUDIT_JOBS", jobs)  # the public switch
    output = cache.parent / f"{cache.name}.json"
    argv = ["compare", "--cache-dir", str(cache), "-q", "--format", "json", "--no-cache"]
    argv += ["--output", str(output), "--old", str(case / "old"), "--new", str(case / "new")]
    assert main([*argv, "--fail-on", "never", str(case / "consumer")]) == 0
    report = json.loads(output.read_text())
    report.pop("consumer")
    return report


def _entries(cache: Path) -> dict[str, bytes]:
    with sqlite3.connect(cache / "snapshots.sqlite") as db:
        rows = db.execute("SELECT key, data FROM blobs").fetchall()
    # the stat caches name the tree's folder, which differs between the two runs
    return {k: _settled(k, zlib.decompress(v)) for k, v in rows if not k.startswith("stats:")}


def _settled(key: str, data: bytes) -> bytes:
    """A module's call data grows as functions' calls are asked for and is written by
    whichever process saves it last (`CallGraph.save`): forked, the parent and the child
    ask for different functions, so which calls an entry holds depends on timing. The
    rest of the entry is the same bytes either way; a function's calls, when both hold
    them, are compared by `_same_calls`."""
    if not key.startswith("callgraph:"):
        return data
    module = json.loads(data)
    for record in (module.get("functions") or {}).values():
        record.pop("calls", None)
    return json.dumps(module, sort_keys=True).encode()


def _calls(cache: Path) -> dict[tuple[str, str], list]:
    with sqlite3.connect(cache / "snapshots.sqlite") as db:
        rows = db.execute("SELECT key, data FROM blobs WHERE key LIKE 'callgraph:%'").fetchall()
    found = {}
    for name, data in rows:
        for function, record in (json.loads(zlib.decompress(data)).get("functions") or {}).items():
            if "calls" in record:
                found[(name, function)] = record["calls"]
    return found


@pytest.mark.parametrize("case", SAMPLE)
def test_forked_or_not_the_same_findings_and_the_same_store(case, tmp_path, monkeypatch):
    root = FIXTURES / "codes" / case
    alone = _compare(root, tmp_path / "one", "1", monkeypatch)
    forked = _compare(root, tmp_path / "two", "2", monkeypatch)
    assert forked == alone
    one, two = _entries(tmp_path / "one"), _entries(tmp_path / "two")
    # the same bytes for every entry both runs kept; the forked run has built ahead the
    # tree-wide entries (and guessed models) that a run may ask for, and nothing else
    assert {k: two[k] for k in one if k in two} == {k: one[k] for k in one if k in two}
    assert len(set(one) & set(two)) >= len(one) * 0.8
    assert {k.split(":", 1)[0] for k in set(two) - set(one)} <= AHEAD | {"callgraph"}
    calls_one, calls_two = _calls(tmp_path / "one"), _calls(tmp_path / "two")
    both = set(calls_one) & set(calls_two)
    assert {k: calls_one[k] for k in both} == {k: calls_two[k] for k in both}


@pytest.mark.parametrize("planted", [b"[7]", b'{"x": 1}', b"null", b"\x80\x04K\x07.", b"{"])
def test_a_planted_entry_of_any_shape_is_computed_again(planted, tmp_path, monkeypatch):
    """Every entry of every namespace a compare keeps, replaced by a value of another
    shape: the next run computes each again and finds the same."""
    root = FIXTURES / "codes" / "DA702"
    clean = _compare(root, tmp_path / "cache", "1", monkeypatch)
    stored = _entries(tmp_path / "cache")
    namespaces = {k.split(":", 1)[0] for k in stored}
    assert {"module", "serverargs", "callgraph"} <= namespaces
    db = BlobStore(tmp_path / "cache" / "snapshots.sqlite")
    db.put_many([(k, planted) for k in stored])
    assert _compare(root, tmp_path / "cache", "1", monkeypatch) == clean


def test_a_codec_refuses_what_is_not_its_shape():
    assert Json(strings).decode(b'["a"]') == ["a"]
    for data in (b"[1]", b'{"a": "b"}', b"not json"):
        with pytest.raises(Invalid):
            Json(strings).decode(data)
    with pytest.raises(Invalid):
        Json(table_of_strings).decode(b'{"a": [1]}')
    with pytest.raises(Invalid):
        Pickled(dict).decode(Pickled().encode([1]))


def test_get_computes_once_stores_and_reads_back(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return Yield(["a"], [(key("other", 1, "x"), b'"side"')])

    entry = Entry(key("answer", 1, "digest", "question"), compute, Json(strings))
    store = Store(BlobStore(tmp_path / "s.db"))
    assert store.get(entry) == ["a"] and store.get(entry) == ["a"]
    assert calls == [1]  # remembered for the run
    again = Store(BlobStore(tmp_path / "s.db"))
    assert again.get(entry) == ["a"] and calls == [1]  # read back, not computed
    assert again.db.get(key("other", 1, "x")) == b'"side"'  # what the same work gave
    assert again.get_many([entry, entry]) == [["a"], ["a"]]


def test_a_namespace_off_is_computed_but_never_read_or_written(tmp_path):
    entry = Entry(key("pair", 1, "q"), lambda: ["a"], Json(strings))
    db = BlobStore(tmp_path / "s.db")
    db.put(entry.key, b'["stale"]')
    assert Store(db, off=["pair"]).get(entry) == ["a"]
    assert db.get(entry.key) == b'["stale"]'


def test_keys_are_built_by_one_helper():
    assert key("module", "7", "sglang.x", "abc") == "module:7:sglang.x:abc"
