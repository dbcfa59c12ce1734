"""A cached run after a consumer edit: only the edited files are parsed and analysed
again, and the findings equal those of a `--no-cache` run of the same tree."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from .conftest import FIXTURES
from .test_findings_cache import cached_copy, compare

CASE = FIXTURES / "themes" / "reexports"


@pytest.fixture
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return cached_copy(CASE, tmp_path, monkeypatch)


def _by_file(report: dict) -> dict[str, list]:
    """Findings per file, without their fact numbers (counted across the whole report)."""
    found: dict[str, list] = {}
    for finding in report["findings"]:
        place = {k: v for k, v in finding.items() if k != "fact"}
        found.setdefault(finding["path"], []).append(place)
    return found


def _cached_and_fresh(case: Path, cache: Path) -> dict:
    cached = compare(case, cache)
    assert cached == compare(case, cache, "--no-cache")
    return cached


def test_an_edited_file_changes_only_its_own_findings(case, tmp_path):
    cache = tmp_path / "cache"
    before = _by_file(_cached_and_fresh(case, cache))
    runner = case / "consumer" / "app" / "runner.py"
    runner.write_text(
        "# a line on top: every finding of this file moves\n"
        + runner.read_text()
        + "\n\ndef more():\n    build('m', legacy=False)\n"
    )
    after = _by_file(_cached_and_fresh(case, cache))
    assert set(after) == set(before) == {"app/runner.py"}
    lines = [f["line"] for f in after["app/runner.py"]]
    assert lines == [f["line"] + 1 for f in before["app/runner.py"]] + [max(lines)]
    assert len(lines) == 4


def test_an_edited_export_recomputes_the_files_that_use_it(case, tmp_path):
    cache = tmp_path / "cache"
    assert len(_cached_and_fresh(case, cache)["findings"]) == 3
    backend = case / "consumer" / "app" / "backend" / "__init__.py"
    # still a re-export of sglang, so runner.py is read, but `build` now names the module
    backend.write_text("from sglang.srt import api as build\n")
    assert _cached_and_fresh(case, cache)["findings"] == []  # runner.py: not edited, recomputed
    backend.write_text("def build(model, **options):  # the consumer's own now\n    return model\n")
    assert _cached_and_fresh(case, cache)["findings"] == []
    backend.write_text(CASE.joinpath("consumer", "app", "backend", "__init__.py").read_text())
    assert len(_cached_and_fresh(case, cache)["findings"]) == 3


def test_corrupt_per_file_entries_are_computed_again(case, tmp_path):
    cache = tmp_path / "cache"
    expected = _cached_and_fresh(case, cache)
    (case / "consumer" / "app" / "runner.py").write_text(
        (case / "consumer" / "app" / "runner.py").read_text() + "\n# edited\n"
    )
    for suffix in ("-wal", "-shm"):
        (cache / f"files.sqlite{suffix}").unlink(missing_ok=True)
    (cache / "files.sqlite").write_bytes(b"not a database at all")
    assert _cached_and_fresh(case, cache)["findings"] == expected["findings"]


@pytest.mark.parametrize("code", ["DA701", "DA702", "DA401-replacement", "DA704"])
def test_what_is_stored_per_version_pair_gives_the_same_findings(code, tmp_path, monkeypatch):
    case = cached_copy(FIXTURES / "codes" / code, tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    fresh = compare(case, cache, "--no-cache")
    with sqlite3.connect(cache / "snapshots.sqlite") as db:
        assert db.execute("SELECT count(*) FROM blobs WHERE key LIKE 'pair:%'").fetchone()[0] == 0
    assert compare(case, cache) == fresh  # computed and stored
    with sqlite3.connect(cache / "snapshots.sqlite") as db:
        assert db.execute("SELECT count(*) FROM blobs WHERE key LIKE 'pair:%'").fetchone()[0] > 0
    for path in (case / "consumer").rglob("*.py"):
        path.write_text(path.read_text() + "\n# edited\n")  # the findings cache misses
    assert compare(case, cache) == compare(case, cache, "--no-cache") == fresh
    assert any(f["rule"] == code.partition("-")[0] for f in fresh["findings"])


def test_surfaces_and_name_owners_follow_an_edit(tmp_path, monkeypatch):
    """Flags scanned per file and whose a `sglang_*` name is are kept per file: an edited
    flag literal changes the findings of its file as a `--no-cache` run does."""
    case = cached_copy(FIXTURES / "fix" / "dests", tmp_path, monkeypatch)
    config = case / "consumer" / "app" / "run_config.py"
    stale = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass RunConfig:\n"
        '    sglang_cuda_graph_bs: str = ""\n\n\n'
        "def argv(cfg: RunConfig) -> list[str]:\n"
        '    args = ["python", "-m", "sglang.launch_server"]\n'
        "    if cfg.sglang_cuda_graph_bs:\n"
        '        args += ["--sglang-cuda-graph-bs"] + cfg.sglang_cuda_graph_bs.split()\n'
        "    return args\n"
    )
    config.write_text(stale)
    cache = tmp_path / "cache"
    before = _by_file(_cached_and_fresh(case, cache))
    assert "app/run_config.py" in before
    config.write_text(stale.replace("--sglang-cuda-graph-bs", "--sglang-cuda-graph-bs-decode"))
    after = _by_file(_cached_and_fresh(case, cache))
    assert "app/run_config.py" not in after  # its own field, passed as the new flag
    assert {k: v for k, v in after.items()} == {
        k: v for k, v in before.items() if k != "app/run_config.py"
    }
    config.write_text(stale)
    assert _by_file(_cached_and_fresh(case, cache)) == before


def test_text_pattern_matches_follow_an_edit(tmp_path, monkeypatch):
    case = cached_copy(FIXTURES / "codes" / "DA902", tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    packs = ("--packs", str(case / "packs"))

    def texts(report: dict) -> list:
        return [(f["path"], f["line"]) for f in report["findings"] if f["path"].endswith(".sh")]

    assert texts(compare(case, cache, *packs)) == [("scripts/serve.sh", 2)]
    script = case / "consumer" / "scripts" / "serve.sh"
    script.write_text(script.read_text() + "python -m sglang.launch_server --port 2\n")
    (case / "consumer" / "runner.py").write_text(
        (case / "consumer" / "runner.py").read_text() + "\n# edited\n"
    )
    edited = compare(case, cache, *packs)
    assert texts(edited) == [("scripts/serve.sh", 2), ("scripts/serve.sh", 4)]
    assert edited == compare(case, cache, *packs, "--no-cache")


def test_flags_in_scripts_follow_an_edit(tmp_path, monkeypatch):
    """A shell script's flags are scanned per file: an edit changes its findings as a
    `--no-cache` run does, and leaves the other files' alone."""
    case = cached_copy(FIXTURES / "codes" / "DA401", tmp_path, monkeypatch)
    script = case / "consumer" / "serve.sh"
    script.write_text("python -m sglang.launch_server --model-path m --tp-size 2\n")
    cache = tmp_path / "cache"
    before = _by_file(_cached_and_fresh(case, cache))
    assert "serve.sh" not in before
    script.write_text(script.read_text().replace("--tp-size 2", "--enable-piecewise-cuda-graph"))
    after = _by_file(_cached_and_fresh(case, cache))
    assert [f["rule"] for f in after["serve.sh"]] == ["DA404"]  # a flag it passes is gone
    assert {k: v for k, v in after.items() if k != "serve.sh"} == before


def test_what_a_tree_alone_decides_is_stored_with_it(tmp_path, monkeypatch):
    """A parameter the new release deprecates is read from its source once: a run after a
    consumer edit answers from the snapshot store, and finds what a fresh run finds."""
    from driftaudit.drift import deprecations

    case = cached_copy(FIXTURES / "codes" / "DA205-deprecated", tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    first = compare(case, cache)
    with sqlite3.connect(cache / "snapshots.sqlite") as db:
        stored = db.execute("SELECT count(*) FROM blobs WHERE key LIKE 'deprecated:%'")
        assert stored.fetchone()[0] > 0

    def no_read(*args):
        raise AssertionError("read again")

    monkeypatch.setattr(deprecations, "deprecated_params", no_read)
    for path in (case / "consumer").rglob("*.py"):
        path.write_text(path.read_text() + "\n# edited\n")  # the findings cache misses
    assert compare(case, cache) == first
