"""A stage computed in a forked child: its value comes back; a child that fails leaves
the stage to the caller; a cold run that forks the behaviour checks finds what a run
on one core finds, and keeps what the child derived from the consumer's files."""

from __future__ import annotations

import os
import pickle
import sqlite3
import time
import zlib
from pathlib import Path

import pytest

from driftaudit import forked

from .conftest import FIXTURES
from .test_findings_cache import cached_copy, compare


def test_the_childs_values_come_back():
    child = forked.Forked({"a": lambda: {"pid": os.getpid()}, "b": lambda: [1, 2, 3]})
    done, value = child.result("a")
    assert done and value["pid"] != os.getpid()  # computed in another process
    assert child.result("b") == (True, [1, 2, 3])


def _raises():
    raise ValueError("left to the caller")


def _dies():
    os._exit(3)


@pytest.mark.parametrize("compute", [_raises, _dies, lambda: lambda: None])  # last: no pickle
def test_a_failed_job_gives_no_value(compute):
    child = forked.Forked({"bad": compute, "after": lambda: "next"})
    assert child.result("bad") == (False, None)
    expected = (False, None) if compute is _dies else (True, "next")
    assert child.result("after") == expected  # the child goes on unless it died


def test_before_runs_in_the_child_only(tmp_path):
    marker = tmp_path / "marker"
    child = forked.Forked({"read": lambda: marker.read_text()}, lambda: marker.write_text("child"))
    assert child.result("read") == (True, "child")


def test_a_job_not_started_is_taken_back(tmp_path):
    gate = tmp_path / "gate"

    def slow():  # holds the child until this process has taken "second" back
        while not gate.exists():
            time.sleep(0.005)
        return "first"

    child = forked.Forked({"first": slow, "second": lambda: "from the child"})
    assert child.take("second")  # not started: the caller computes it
    gate.write_text("go")
    assert child.result("first") == (True, "first")
    assert child.result("second") == (False, None)  # skipped by the child
    assert not child.take("first")  # done: nothing to take


def _derived_names(cache: Path) -> list[str]:
    with sqlite3.connect(cache / "files.sqlite") as db:
        rows = db.execute("SELECT data FROM blobs").fetchall()
    return sorted(n for (data,) in rows for n in pickle.loads(zlib.decompress(data))["values"])


@pytest.mark.parametrize("code", ["DA701", "DA702"])
def test_a_cold_run_forking_the_behaviour_checks_finds_the_same(code, tmp_path, monkeypatch):
    case = cached_copy(FIXTURES / "codes" / code, tmp_path, monkeypatch)
    monkeypatch.setenv("DRIFTAUDIT_JOBS", "1")  # the public switch
    alone = compare(case, tmp_path / "one-core")
    started = []
    real = forked.Forked.__init__

    def counting(self, *args, **kwargs):
        started.append(True)
        real(self, *args, **kwargs)

    monkeypatch.setattr(forked.Forked, "__init__", counting)
    monkeypatch.setenv("DRIFTAUDIT_JOBS", "2")
    assert compare(case, tmp_path / "two-cores") == alone
    assert started  # the behaviour checks ran in a child
    assert any(f["rule"] == code for f in alone["findings"])
    assert "functions" in _derived_names(tmp_path / "two-cores")  # sent back and stored
    assert _derived_names(tmp_path / "two-cores") == _derived_names(tmp_path / "one-core")
