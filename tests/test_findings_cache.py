"""The findings cache: a warm run over unchanged inputs returns the stored findings; any
change of the consumer, a release, a pack, an option or the stored form computes them
again; a corrupt entry or store is computed again without a traceback."""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
from dataclasses import fields
from pathlib import Path

import pytest

from driftaudit import findings_cache, pipeline
from driftaudit.cli import main
from driftaudit.codes import lookup
from driftaudit.findings import Finding, Fix
from driftaudit.findings_cache import FindingsCache

from .conftest import FIXTURES

CASE = FIXTURES / "themes" / "calls"


def cached_copy(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of a case (the tests edit it), with the findings cache on."""
    monkeypatch.delenv(findings_cache.DISABLE_ENV, raising=False)
    root = tmp_path / "case"
    shutil.copytree(source, root)
    return root


@pytest.fixture
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of a themed case, the cache on (audits counted by `audits`)."""
    return cached_copy(CASE, tmp_path, monkeypatch)


@pytest.fixture
def audits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the pipeline computed findings (not read them from the cache)."""
    calls: list[int] = []
    compute = pipeline._audit

    def counted(*args, **kwargs):
        calls.append(1)
        return compute(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_audit", counted)
    return calls


def compare(case: Path, cache: Path, *extra: str) -> dict:
    output = cache.parent / "report.json"
    argv = ["compare", "--cache-dir", str(cache), "-q", "--format", "json"]
    argv += ["--output", str(output), "--old", str(case / "old"), "--new", str(case / "new")]
    code = main([*argv, *extra, str(case / "consumer")])
    assert code in (0, 1)
    report = json.loads(output.read_text())
    report.pop("consumer")
    return report


def test_a_warm_run_returns_the_same_findings_without_computing_them(case, tmp_path, audits):
    cold = compare(case, tmp_path / "cache")
    warm = compare(case, tmp_path / "cache")
    assert len(audits) == 1
    assert warm == cold and len(cold["findings"]) >= 8


def test_no_cache_computes_again(case, tmp_path, audits):
    compare(case, tmp_path / "cache")
    assert compare(case, tmp_path / "cache", "--no-cache") == compare(case, tmp_path / "cache")
    assert len(audits) == 2


def test_the_environment_switch_turns_it_off(case, tmp_path, audits, monkeypatch):
    monkeypatch.setenv(findings_cache.DISABLE_ENV, "1")
    compare(case, tmp_path / "cache")
    compare(case, tmp_path / "cache")
    assert len(audits) == 2


def test_editing_a_consumer_file_computes_again(case, tmp_path, audits):
    before = compare(case, tmp_path / "cache")
    path = case / "consumer" / "calls.py"
    path.write_text(path.read_text().replace("renamed_kw(1, img_data=2)", "renamed_kw(1, 2)"))
    after = compare(case, tmp_path / "cache")
    assert len(audits) == 2
    assert [f["rule"] for f in before["findings"]].count("DA202") == 1
    assert "DA202" not in [f["rule"] for f in after["findings"]]


def test_a_new_consumer_file_computes_again(case, tmp_path, audits):
    compare(case, tmp_path / "cache")
    (case / "consumer" / "more.py").write_text(
        "from sglang.srt.distributed import init_group\ninit_group([0], 0, 'nccl', use_stream=1)\n"
    )
    after = compare(case, tmp_path / "cache")
    assert len(audits) == 2
    assert any(f["path"] == "more.py" and f["rule"] == "DA201" for f in after["findings"])


def test_a_changed_release_computes_again(case, tmp_path, audits):
    compare(case, tmp_path / "cache")
    module = case / "new" / "sglang" / "srt" / "distributed" / "parallel_state.py"
    module.write_text(module.read_text() + "\nextra_name = 1\n")
    compare(case, tmp_path / "cache")
    assert len(audits) == 2


def test_other_options_and_packs_compute_again(case, tmp_path, audits):
    compare(case, tmp_path / "cache")
    compare(case, tmp_path / "cache", "--exclude", "nothing/")
    assert len(audits) == 2
    packs = tmp_path / "packs"
    packs.mkdir()
    for pack in (Path(__file__).parents[1] / "rules").glob("*.toml"):
        shutil.copy(pack, packs)
    compare(case, tmp_path / "cache", "--packs", str(packs))
    compare(case, tmp_path / "cache", "--packs", str(packs))
    assert len(audits) == 3
    pack = next(p for p in sorted(packs.iterdir()) if p.suffix == ".toml")
    pack.write_text(pack.read_text() + "\n")
    compare(case, tmp_path / "cache", "--packs", str(packs))
    assert len(audits) == 4


def test_a_corrupt_entry_is_computed_again(case, tmp_path, audits, capsys):
    cache = tmp_path / "cache"
    cold = compare(case, cache)
    db = sqlite3.connect(cache / "findings.sqlite")
    with db:
        db.execute("UPDATE blobs SET data = ?", (b"not zlib at all",))
    db.close()
    assert compare(case, cache) == cold
    assert len(audits) == 2
    assert compare(case, cache) == cold  # and the entry was replaced
    assert len(audits) == 2
    assert capsys.readouterr().err == ""


def test_an_entry_of_another_form_is_computed_again(case, tmp_path, audits):
    cache = tmp_path / "cache"
    cold = compare(case, cache)
    store = FindingsCache(cache).store.db
    for key in [row[0] for row in store._db.execute("SELECT key FROM blobs")]:
        stored = json.loads(store.get(key))
        stored["findings"][0]["code"] = "DA999"  # no such code: not loadable
        store.put(key, json.dumps(stored).encode())
    assert compare(case, cache) == cold
    assert len(audits) == 2


def test_a_corrupt_store_is_rebuilt(case, tmp_path, audits, capsys):
    cache = tmp_path / "cache"
    cold = compare(case, cache)
    # as another process would find it: the first run's connection gone (SQLite shares a
    # file's locks and WAL index among the connections of one process, so a connection
    # still waiting for the collector would serve the old pages from its log)
    gc.collect()
    (cache / "findings.sqlite").write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        Path(f"{cache / 'findings.sqlite'}{suffix}").unlink(missing_ok=True)
    assert compare(case, cache) == cold
    assert len(audits) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_schema_version_bump_invalidates(case, tmp_path, audits, monkeypatch):
    compare(case, tmp_path / "cache")
    monkeypatch.setattr(findings_cache, "SCHEMA_VERSION", findings_cache.SCHEMA_VERSION + 1)
    findings_cache.tool_digest.cache_clear()
    try:
        compare(case, tmp_path / "cache")
    finally:
        monkeypatch.undo()
        findings_cache.tool_digest.cache_clear()
    assert len(audits) == 2


def test_another_driftaudit_invalidates(case, tmp_path, audits, monkeypatch):
    compare(case, tmp_path / "cache")
    monkeypatch.setattr(findings_cache, "tool_digest", lambda: "another build")
    compare(case, tmp_path / "cache")
    assert len(audits) == 2


def test_findings_round_trip_exactly(tmp_path):
    cache = FindingsCache(tmp_path)
    code = lookup("DA303")
    finding = Finding(
        code, "a.py", 3, 4, "sglang.f", "m", "old:1", "new:2",
        Fix("pad", {"kind": "pad-unpack", "slots": (1, [2, (3,)])}, "unsafe"),
        confidence="likely", end_line=3, end_column=9, details="diff", anchor=(3, 0),
        introduced="0.5.13", deprecated="0.5.12", dated=True, fails_on=["0.5.22"],
    )  # fmt: skip
    covered = Finding(code, "b.py", 1, 1, "s", "m", fix=Fix("none here", None, "safe", "a.py:3"))
    cache.save("slot", "key", [finding, covered])
    assert cache.load("slot", "key") == [finding, covered]
    assert cache.load("slot", "other key") is None
    # every field of a finding and of its fix is set above, so a new field must be stored
    assert all(getattr(finding, f.name) is not None for f in fields(Finding) if f.name != "fix")
    assert all(getattr(covered.fix, f.name) is not None for f in fields(Fix) if f.name != "edit")


def test_findings_this_form_cannot_carry_are_not_stored(tmp_path):
    cache = FindingsCache(tmp_path)
    odd = Finding(lookup("DA201"), "a.py", 1, 0, "s", "m", fix=Fix("x", {"kind": {1, 2}}))
    cache.save("slot", "key", [odd])
    assert cache.load("slot", "key") is None
