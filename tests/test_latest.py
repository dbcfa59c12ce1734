"""`new = "latest"`: the newest final release, looked up once a day, or offline from the cache."""

from __future__ import annotations

import json

import pytest

from driftaudit.errors import DriftauditError
from driftaudit.sources import index, latest
from driftaudit.sources.latest import latest_release, newest_release, resolve_latest


def test_newest_release_orders_like_packaging_and_skips_prereleases():
    versions = ["0.5.9", "0.5.10rc0", "0.5.10", "0.5.10.post1", "0.6.0.dev1", "0.5.2", "junk"]
    assert newest_release(versions) == "0.5.10.post1"
    assert newest_release(["0.6.0rc1"]) is None


@pytest.fixture
def index_calls(monkeypatch):
    calls = []

    def available():
        calls.append(1)
        return ["0.5.23", "0.5.22", "0.6.0rc1"]

    monkeypatch.setattr(index, "available_versions", available)
    return calls


def test_looked_up_at_most_once_a_day(tmp_path, index_calls):
    assert latest_release(tmp_path, now=1000.0) == "0.5.23"
    assert latest_release(tmp_path, now=1000.0 + 3600) == "0.5.23"
    assert len(index_calls) == 1
    record = json.loads((tmp_path / "latest-sglang.json").read_text())
    assert record == {"checked": 1000.0, "version": "0.5.23", "index": index.source()}
    assert latest_release(tmp_path, now=1000.0 + latest.MAX_AGE_SECONDS + 1) == "0.5.23"
    assert len(index_calls) == 2


def test_offline_takes_the_newest_cached_release(tmp_path, index_calls):
    for version, complete in (("0.5.9", True), ("0.5.14", True), ("0.5.16", False)):
        root = tmp_path / "sources" / f"sglang-{version}"
        (root / "sglang").mkdir(parents=True)
        if complete:
            (root / ".driftaudit-complete").write_text("x\n")
    assert latest_release(tmp_path, offline=True) == "0.5.14"
    assert index_calls == []
    with pytest.raises(DriftauditError, match="no sglang release in the cache"):
        latest_release(tmp_path / "empty", offline=True)


def test_no_answer_from_the_index_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(index, "available_versions", lambda: [])
    with pytest.raises(DriftauditError, match="latest sglang release"):
        latest_release(tmp_path)


def test_only_latest_is_resolved(tmp_path, index_calls):
    assert resolve_latest("0.5.14", tmp_path) == "0.5.14"
    assert resolve_latest(None, tmp_path) is None
    assert resolve_latest("latest", tmp_path) == "0.5.23"
