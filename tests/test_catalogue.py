"""The bad-input catalogue: untrusted repositories, broken trees, bad config, a damaged
cache. Each input has its expected outcome: a one-line error and exit 2, or a warning
or finding and the run goes on. Never a traceback, never a silently different result.

Offline: the specs are hand-made trees (tests/fixtures/themes/calls) and local git
repositories; the real-release cases live in tests/integration/test_robust_releases.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftaudit.cli import main
from driftaudit.errors import DriftauditError
from driftaudit.sources import index as index_source
from driftaudit.sources import resolve_spec
from driftaudit.sources.git import export_ref
from driftaudit.store.db import SCHEMA_VERSION, BlobStore

from .conftest import FIXTURES, write_tree

CASE = FIXTURES / "themes" / "calls"
OLD, NEW = str(CASE / "old"), str(CASE / "new")
SGLANG = {"python/sglang/__init__.py": "", "python/sglang/version.py": '__version__ = "1.0"\n'}
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def _one_line_error(capsys, argv: list[str], *needles: str) -> str:
    code, _, err = _run(capsys, argv)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("driftaudit: error: "), err
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def _consumer(tmp_path: Path, pyproject: str | None = None, name: str = "c") -> Path:
    files = {"calls.py": (CASE / "consumer" / "calls.py").read_text()}
    if pyproject is not None:
        files["pyproject.toml"] = pyproject
    return write_tree(tmp_path / name, files)


def _git(repo: Path, *args: str) -> None:
    base = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*base, *args], check=True, capture_output=True)


def _evil_repo(path: Path, marker: Path) -> Path:
    """A repository whose config runs `touch marker` from a smudge filter and hooks, with
    an absolute symlink and a submodule entry in the package."""
    write_tree(path, {**SGLANG, ".gitattributes": "* filter=evil\n"})
    _git(path, "init", "-q")
    for key, value in (
        ("filter.evil.smudge", f"touch {marker}; cat"),
        ("filter.evil.clean", f"touch {marker}; cat"),
        ("core.fsmonitor", f"touch {marker}; echo"),
    ):
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)
    (path / "python" / "sglang" / "passwd.py").symlink_to("/etc/passwd")
    (path / "python" / "sglang" / "up.py").symlink_to("../../../outside.py")
    # the filter runs on `add` as the clean side: only the reading side is under test
    subprocess.run(["git", "-C", str(path), "config", "--unset", "filter.evil.clean"], check=True)
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "evil")
    hooks = path / ".git" / "hooks"
    for hook in ("post-checkout", "post-merge", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    marker.unlink(missing_ok=True)
    return path


# ---- version specs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("0.5.99999999999999999999999999999999999!", "invalid sglang version"),  # was ReDoS
        ("0." + "9" * 200, "too long"),
        ("0.5.14..1", "invalid sglang version"),
        ("not/a/dir", "cannot resolve sglang spec"),
        ("git:/nonexistent@HEAD", "does not exist"),
        ("git:repo", "git:PATH@REF"),
    ],
)
def test_bad_version_specs_are_one_line_and_fast(capsys, tmp_path, spec, needle):
    start = time.perf_counter()
    argv = ["compare", "--old", OLD, "--new", spec, "--cache-dir", str(tmp_path / "cache")]
    _one_line_error(capsys, [*argv, str(CASE / "consumer")], needle)
    assert time.perf_counter() - start < 30  # no network wait, no retry loop: not a speed target


def test_git_ref_that_looks_like_an_option_is_refused(tmp_path):
    with pytest.raises(DriftauditError, match="must not start with '-'"):
        export_ref(f"git:{tmp_path}@--output=/tmp/x", tmp_path / "cache")


# ---- config ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pyproject", "needle"),
    [
        ('[tool]\ndriftaudit = "x"\n', "must be a table"),
        ('tool = "x"\n', "must be a table"),
        ('[tool.driftaudit]\nexclude = [""]\n', "exclude must not hold an empty string"),
        ("[tool.driftaudit]\nexclude = 3\n", "exclude must be a list of strings"),
        ("[tool.driftaudit]\nexclude = [1]\n", "exclude must be a list of strings"),
        ("[tool.driftaudit]\nwrap-prefixes = 'x'\n", "wrap-prefixes must be a list"),
        ("[tool.driftaudit]\nold = 5\n", "old must be a string"),
        ('[tool.driftaudit]\nnew = ""\n', "new must not be empty"),
        ('[tool.driftaudit]\nfail-on = "bogus"\n', "fail-on must be one of"),
        ('[tool.driftaudit]\nfail-on = "error"\nfail_on = "never"\n', "sets fail-on twice"),
        ('[tool.driftaudit]\nnwe = "0.5.14"\nexcldue = []\n', "unknown keys 'excldue', 'nwe'"),
        ("[tool.driftaudit\n", "not valid TOML"),
    ],
)
def test_bad_config_is_one_line(capsys, tmp_path, pyproject, needle):
    consumer = _consumer(tmp_path, pyproject)
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(tmp_path / "cache")]
    _one_line_error(capsys, [*argv, str(consumer)], needle)


def test_config_without_a_driftaudit_table_is_fine(capsys, tmp_path):
    consumer = _consumer(tmp_path, '[tool.black]\nline-length = 100\n[project]\nname = "c"\n')
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(tmp_path / "cache")]
    assert _run(capsys, [*argv, str(consumer)])[0] == 1


# ---- untrusted repositories -----------------------------------------------------------


@pytest.mark.parametrize("key", ["old", "new"])
@pytest.mark.parametrize("spec", ["git:{evil}@HEAD", "{tree}"])
def test_config_may_not_name_local_paths_without_the_opt_in(capsys, tmp_path, key, spec):
    marker = tmp_path / "pwned"
    evil = _evil_repo(tmp_path / "c" / "evil.git", marker)
    spec = spec.format(evil=evil, tree=CASE / key)
    consumer = _consumer(tmp_path, f'[tool.driftaudit]\n{key} = "{spec}"\n')
    other = "--new" if key == "old" else "--old"
    argv = ["check", other, NEW if key == "old" else OLD, "--cache-dir", str(tmp_path / "k")]
    _one_line_error(capsys, [*argv, str(consumer)], "--trust-config-paths")
    assert not marker.exists()


def test_repository_inside_the_consumer_is_refused_even_when_trusted(capsys, tmp_path):
    marker = tmp_path / "pwned"
    _evil_repo(tmp_path / "c" / "evil.git", marker)
    consumer = _consumer(tmp_path, '[tool.driftaudit]\nold = "git:c/evil.git@HEAD"\n')
    argv = ["check", "--new", NEW, "--trust-config-paths", "--cache-dir", str(tmp_path / "k")]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        _one_line_error(capsys, [*argv, str(consumer)], "inside the audited consumer")
    finally:
        os.chdir(cwd)
    assert not marker.exists()


def test_git_export_reads_blobs_runs_nothing_and_follows_no_symlink(tmp_path):
    marker = tmp_path / "pwned"
    (tmp_path / "outside.py").write_text("SECRET = 1\n")
    repo = _evil_repo(tmp_path / "repo", marker)
    tree = resolve_spec(f"git:{repo}@HEAD", tmp_path / "cache")
    package = tree.root / "sglang"
    assert tree.version == "1.0" and (package / "__init__.py").is_file()
    assert not marker.exists(), "a filter, hook or fsmonitor of the repository ran"
    assert not (package / "passwd.py").exists() and not (package / "up.py").exists()
    assert not any(p.is_symlink() for p in tree.root.rglob("*"))


def test_two_cold_runs_export_the_same_ref_at_once(tmp_path):
    repo = write_tree(tmp_path / "repo", SGLANG)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "v1")
    results, errors = [], []

    def export():
        try:
            results.append(export_ref(f"git:{repo}@HEAD", tmp_path / "cache")[0])
        except Exception as exc:  # noqa: BLE001 - the assertion reports it
            errors.append(exc)

    threads = [threading.Thread(target=export) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(results)) == 1
    assert (results[0] / "sglang" / "version.py").read_text() == '__version__ = "1.0"\n'


# ---- the cache and the output -----------------------------------------------------------


def test_cache_dir_that_is_a_file(capsys, tmp_path):
    (tmp_path / "cache").write_text("")
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(tmp_path / "cache")]
    _one_line_error(capsys, [*argv, str(CASE / "consumer")], "is not a directory")


@pytest.mark.skipif(AS_ROOT, reason="root writes into read-only directories")
def test_cache_dir_that_is_read_only(capsys, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o500)
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(cache)]
    _one_line_error(capsys, [*argv, str(CASE / "consumer")], "not writable")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("fmt", ["json", "console"])
def test_output_to_a_full_device(capsys, tmp_path, fmt):
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(tmp_path / "cache")]
    argv += ["--format", fmt, "--output", "/dev/full", str(CASE / "consumer")]
    _one_line_error(capsys, argv, "No space left on device")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_to_a_full_device(tmp_path):
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(tmp_path / "cache")]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "driftaudit", *argv, str(CASE / "consumer")],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == ["driftaudit: error: No space left on device"]


def _findings(capsys, cache: Path, old: str = OLD, new: str = NEW) -> list[dict]:
    argv = ["compare", "--old", old, "--new", new, "--cache-dir", str(cache)]
    code, out, _ = _run(capsys, [*argv, "--format", "json", str(CASE / "consumer")])
    assert code == 1
    return json.loads(out)["findings"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b"this is not a database" * 100),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 3]),
        lambda p: p.write_bytes(p.read_bytes()[:100]),
    ],
    ids=["junk", "truncated", "header-only"],
)
def test_corrupt_snapshot_store_is_rebuilt(capsys, tmp_path, damage):
    cache = tmp_path / "cache"
    fresh = _findings(capsys, cache)
    store = cache / "snapshots.sqlite"
    BlobStore(store)._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damage(store)
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    assert _findings(capsys, cache) == fresh
    db = sqlite3.connect(store)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] > 0, "rebuilt and filled"


def test_store_of_another_schema_version_is_emptied(tmp_path):
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE blobs (key TEXT PRIMARY KEY, data BLOB, extra TEXT)")
    db.execute("INSERT INTO blobs VALUES ('k', x'00', 'old')")
    db.commit()
    db.close()
    store = BlobStore(path)
    assert store.get("k") is None
    store.put("k", b"v")
    assert store.get("k") == b"v"
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION


@pytest.mark.parametrize(
    "blob",
    [
        b"[]",
        b'{"name": 1}',
        b'{"name": "x", "file": "x", "members": [], "wildcards": [], "exports": null, '
        b'"parse_error": null}',
        b'{"name": "x", "file": "x", "members": {"f": {"k": "function", "n": "f", "l": 1, '
        b'"p": [["a"]], "lb": [], "rt": [], "ro": false, "re": [], "r": null}}, '
        b'"wildcards": [], "exports": null, "parse_error": null}',
        b"not json",
    ],
    ids=["list", "bad-name", "members-list", "bad-param", "not-json"],
)
def test_cache_entries_of_the_wrong_shape_are_recomputed(capsys, tmp_path, blob):
    cache = tmp_path / "cache"
    fresh = _findings(capsys, cache)
    store = BlobStore(cache / "snapshots.sqlite")
    keys = [k for (k,) in store._db.execute("SELECT key FROM blobs") if not k.startswith("stats")]
    assert keys
    store.put_many([(key, blob) for key in keys])
    store._db.close()
    assert _findings(capsys, cache) == fresh


def test_entry_of_another_module_is_recomputed(capsys, tmp_path):
    cache = tmp_path / "cache"
    fresh = _findings(capsys, cache)
    store = BlobStore(cache / "snapshots.sqlite")
    rows = list(store._db.execute("SELECT key FROM blobs WHERE key LIKE 'module:%'"))
    empty = b'{"name":"sglang","file":"sglang/__init__.py","members":{},"wildcards":[],'
    empty += b'"exports":null,"parse_error":null}'
    store.put_many([(key, empty) for (key,) in rows])
    store._db.close()
    assert _findings(capsys, cache) == fresh


# ---- broken trees -------------------------------------------------------------------------


def _copy_tree(src: Path, dest: Path) -> Path:
    for path in src.rglob("*.py"):
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    return dest


def test_dangling_module_is_a_warning_and_the_run_goes_on(capsys, tmp_path):
    new = _copy_tree(CASE / "new", tmp_path / "new")
    (new / "sglang" / "ghost.py").symlink_to(tmp_path / "nowhere.py")
    cache = tmp_path / "cache"
    argv = ["compare", "--old", OLD, "--new", str(new), "--cache-dir", str(cache)]
    code, out, err = _run(capsys, [*argv, "--format", "json", str(CASE / "consumer")])
    assert code == 1 and json.loads(out)["findings"] == _findings(capsys, tmp_path / "c2")
    assert "warning: cannot read sglang/ghost.py" in err


def test_dangling_module_a_consumer_imports_is_not_reported_removed(capsys, tmp_path):
    new = _copy_tree(CASE / "new", tmp_path / "new")
    (new / "sglang" / "ghost.py").symlink_to(tmp_path / "nowhere.py")
    old = _copy_tree(CASE / "old", tmp_path / "old")
    (old / "sglang" / "ghost.py").write_text("def f(a): ...\n")
    consumer = write_tree(tmp_path / "c", {"a.py": "from sglang.ghost import f\nf(a=1)\n"})
    argv = ["compare", "--old", str(old), "--new", str(new), "--cache-dir", str(tmp_path / "k")]
    code, out, _ = _run(capsys, [*argv, "--format", "json", str(consumer)])
    assert code == 0 and json.loads(out)["findings"] == []


@pytest.mark.skipif(AS_ROOT, reason="root reads unreadable files")
def test_unreadable_module_is_a_warning(capsys, tmp_path):
    new = _copy_tree(CASE / "new", tmp_path / "new")
    secret = new / "sglang" / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    argv = ["compare", "--old", OLD, "--new", str(new), "--cache-dir", str(tmp_path / "k")]
    code, _, err = _run(capsys, [*argv, str(CASE / "consumer")])
    assert code == 1 and "warning: cannot read sglang/secret.py" in err


@pytest.mark.parametrize(
    "damage",
    [
        lambda root: [p.unlink() for p in sorted(root.glob("sglang/m*.py"))[:3]],
        lambda root: (root / "sglang" / "m0.py").write_text("def f0(a, b): ...\n"),
        lambda root: (root / "sglang" / "extra.py").write_text(""),
    ],
    ids=["half-deleted", "edited", "added"],
)
def test_damaged_cached_release_is_fetched_again(fake_index, capsys, tmp_path, damage):
    wheel = fake_index.add("1.2.3").name
    cache = tmp_path / "cache"
    tree = resolve_spec("1.2.3", cache)
    assert resolve_spec("1.2.3", cache).root == tree.root and fake_index.downloads() == [wheel]
    damage(tree.root)
    tree = resolve_spec("1.2.3", cache)
    assert fake_index.downloads() == [wheel, wheel], "the damaged release was not fetched again"
    assert "cached sglang 1.2.3 is damaged" in capsys.readouterr().err
    assert sorted(p.name for p in tree.root.glob("sglang/*.py")) == [
        "__init__.py",
        *(f"m{i}.py" for i in range(6)),
    ]
    assert (tree.root / "sglang" / "m0.py").read_text() == "def f0(a): ...\n"


def test_touched_but_unchanged_release_is_not_fetched_again(fake_index, tmp_path):
    fake_index.add("1.2.3")
    tree = resolve_spec("1.2.3", tmp_path / "cache")
    os.utime(tree.root / "sglang" / "m1.py", (1, 1))  # stats differ, content does not
    resolve_spec("1.2.3", tmp_path / "cache")
    assert len(fake_index.downloads()) == 1


def test_two_cold_runs_fetch_the_same_release_at_once(fake_index, tmp_path):
    fake_index.add("1.2.3")
    roots, errors = [], []

    def fetch():
        try:
            roots.append(resolve_spec("1.2.3", tmp_path / "cache").root)
        except Exception as exc:  # noqa: BLE001 - the assertion reports it
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(roots)) == 1
    assert not isinstance(index_source.check_manifest(roots[0]), str)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_module_that_is_not_a_regular_file_is_a_warning(capsys, tmp_path, kind):
    new = _copy_tree(CASE / "new", tmp_path / "new")
    odd = new / "sglang" / "odd.py"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    argv = ["compare", "--old", OLD, "--new", str(new), "--cache-dir", str(tmp_path / "k")]
    code, _, err = _run(capsys, [*argv, str(CASE / "consumer")])
    assert code == 1 and "warning: cannot read sglang/odd.py" in err
    assert "not a regular file" in err


def test_snapshot_store_that_is_a_directory(capsys, tmp_path):
    (tmp_path / "cache" / "snapshots.sqlite").mkdir(parents=True)
    argv = ["compare", "--old", OLD, "--new", NEW, "--cache-dir", str(tmp_path / "cache")]
    _one_line_error(capsys, [*argv, str(CASE / "consumer")], "snapshots.sqlite")


def test_cached_release_that_is_a_file_is_fetched_again(fake_index, tmp_path):
    fake_index.add("1.2.3")
    target = index_source.release_dir(tmp_path / "cache", "1.2.3")
    target.parent.mkdir(parents=True)
    target.write_text("junk")
    assert resolve_spec("1.2.3", tmp_path / "cache").version == "1.2.3"
    assert len(fake_index.downloads()) == 1


def test_git_spec_on_a_directory_that_is_no_repository(capsys, tmp_path):
    argv = ["compare", "--old", OLD, "--new", f"git:{tmp_path}@HEAD"]
    argv += ["--cache-dir", str(tmp_path / "cache"), str(CASE / "consumer")]
    _one_line_error(capsys, argv, "unknown ref 'HEAD'")


# ---- what griffe cannot resolve -------------------------------------------------------------

REBOUND = {
    "sglang/__init__.py": "",
    "sglang/layers/norm.py": (
        "class RMSNorm:\n    def __init__(self, hidden): ...\n"
        "if _fallback:\n    from vllm.layers import RMSNorm  # noqa\n"
    ),
    "sglang/layers/comp.py": (
        "class Compressor:\n    def __init__(self, a): ...\n"
        "if _is_hip:\n    from sglang.layers.hip import CompressorHip as Compressor\n"
    ),
}


def test_names_rebound_by_unresolvable_imports_are_aliases(tmp_path):
    from driftaudit.snapshot import Snapshot
    from driftaudit.snapshot.api_model import Alias
    from driftaudit.sources.tree import tree_from_root

    root = write_tree(tmp_path / "tree", REBOUND)
    snapshot = Snapshot(tree_from_root("d", "directory", root), BlobStore(tmp_path / "s.db"))
    norm, comp = snapshot.module("sglang.layers.norm"), snapshot.module("sglang.layers.comp")
    assert norm.parse_error is None and comp.parse_error is None
    assert norm.members["RMSNorm"] == Alias("RMSNorm", 4, "vllm.layers.RMSNorm")
    assert comp.members["Compressor"].target == "sglang.layers.hip.CompressorHip"
    assert snapshot.resolve("sglang.layers.norm.RMSNorm").opaque


def test_griffe_failing_on_a_module_leaves_it_opaque(monkeypatch):
    import griffe

    from driftaudit.snapshot import extract

    def broken(*args, **kwargs):
        raise KeyError("griffe internals")

    monkeypatch.setattr(griffe, "visit", broken)
    module = extract.extract_module("sglang.x", "sglang/x.py", "x = 1\n")
    assert module.members == {} and "griffe could not read it: KeyError" in module.parse_error


# ---- paths the consumer names: read and written only inside its tree ----------------------

CHECK = ["check", "--old", OLD, "--new", NEW]


def _accepted(capsys, consumer: Path, cache: Path) -> str:
    """A valid baseline of the consumer's findings (its text)."""
    argv = [*CHECK, "--cache-dir", str(cache), "--update-baseline", str(consumer)]
    assert _run(capsys, argv)[0] == 0
    baseline = consumer / ".driftaudit-baseline.json"
    text = baseline.read_text()
    baseline.unlink()
    return text


@pytest.mark.parametrize("update", [False, True], ids=["check", "update-baseline"])
def test_a_committed_baseline_symlink_out_of_the_tree_is_refused(capsys, tmp_path, update):
    consumer, cache = _consumer(tmp_path), tmp_path / "k"
    outside = tmp_path / "outside.json"
    outside.write_text(_accepted(capsys, consumer, cache))
    before = outside.read_text()
    (consumer / ".driftaudit-baseline.json").symlink_to(outside)
    argv = [*CHECK, "--cache-dir", str(cache), str(consumer)]
    argv += ["--update-baseline"] if update else []
    _one_line_error(capsys, argv, "symbolic link out of the consumer tree: not followed")
    assert outside.read_text() == before


def test_a_baseline_symlink_inside_the_tree_is_read_but_not_written_through(capsys, tmp_path):
    consumer, cache = _consumer(tmp_path), tmp_path / "k"
    (consumer / "ci").mkdir()
    (consumer / "ci" / "accepted.json").write_text(_accepted(capsys, consumer, cache))
    (consumer / ".driftaudit-baseline.json").symlink_to("ci/accepted.json")
    code, _, err = _run(capsys, [*CHECK, "--cache-dir", str(cache), str(consumer)])
    assert code == 0 and "known (in the baseline" in err
    argv = [*CHECK, "--cache-dir", str(cache), "--update-baseline", str(consumer)]
    _one_line_error(capsys, argv, "is a symbolic link in the consumer tree: not written")


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("../../x.json", "must not leave the consumer ('..')"),
        ("ci/../../x.json", "must not leave the consumer ('..')"),
        ("{tmp}/x.json", "must be a path inside the consumer"),
        ("x\\u0000.json", "holds a NUL character"),
    ],
)
@pytest.mark.parametrize("update", [False, True], ids=["check", "update-baseline"])
def test_config_baseline_outside_the_tree_is_refused(capsys, tmp_path, name, needle, update):
    name = name.format(tmp=tmp_path)  # an absolute path: one under this test's folder
    consumer = _consumer(tmp_path / "a" / "b", f'[tool.driftaudit]\nbaseline = "{name}"\n')
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), str(consumer)]
    argv += ["--update-baseline"] if update else []
    _one_line_error(capsys, argv, needle)
    assert not list(tmp_path.rglob("x.json"))


def test_config_baseline_through_a_folder_symlink_is_not_written(capsys, tmp_path):
    consumer = _consumer(tmp_path, '[tool.driftaudit]\nbaseline = "ci/accepted.json"\n')
    (tmp_path / "elsewhere").mkdir()
    (consumer / "ci").symlink_to(tmp_path / "elsewhere")
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), "--update-baseline", str(consumer)]
    _one_line_error(capsys, argv, "symbolic link")
    assert not list((tmp_path / "elsewhere").iterdir())


@pytest.mark.parametrize("name", ["pyproject.toml", "driftaudit.toml"])
def test_a_config_symlink_out_of_the_tree_is_not_read(capsys, tmp_path, name):
    foreign = tmp_path / "foreign.toml"
    table = "[tool.driftaudit]\n" if name == "pyproject.toml" else ""
    foreign.write_text(f'{table}fail-on = "never"\n')
    consumer = _consumer(tmp_path)
    (consumer / name).symlink_to(foreign)
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), str(consumer)]
    _one_line_error(capsys, argv, "symbolic link out of the consumer tree: not followed")


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_a_config_symlink_to_a_special_file_is_not_opened(capsys, tmp_path):
    consumer = _consumer(tmp_path)
    (consumer / "driftaudit.toml").symlink_to("/proc/self/environ")
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), str(consumer)]
    _one_line_error(capsys, argv, "symbolic link out of the consumer tree")


@pytest.mark.parametrize("name", ["driftaudit.toml", ".driftaudit-baseline.json"])
def test_a_fifo_in_place_of_a_config_or_baseline_is_not_read(capsys, tmp_path, name):
    consumer = _consumer(tmp_path)
    os.mkfifo(consumer / name)  # opened for reading, it would block the run forever
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), str(consumer)]
    _one_line_error(capsys, argv, "is not a regular file")


def test_output_through_a_planted_symlink_is_refused(capsys, tmp_path):
    consumer = _consumer(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (consumer / "driftaudit.sarif").symlink_to(victim)
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), "--fail-on", "never", "--format"]
    argv += ["sarif", "--output", str(consumer / "driftaudit.sarif"), str(consumer)]
    code, _, err = _run(capsys, argv)
    assert code == 2 and err.strip().splitlines()[-1].endswith(
        "is a symbolic link in the consumer tree: not written through "
        "(remove it, or name another file on the command line)"
    )
    assert victim.read_text() == "keep\n"


def test_output_is_written_atomically_and_devices_in_place(capsys, tmp_path):
    consumer = _consumer(tmp_path)
    report = tmp_path / "reports" / "out.json"
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), "--fail-on", "never", "--format"]
    assert _run(capsys, [*argv, "json", "--output", str(report), str(consumer)])[0] == 0
    assert json.loads(report.read_text())["findings"]
    assert sorted(p.name for p in report.parent.iterdir()) == ["out.json"], "no temp file left"
    assert _run(capsys, [*argv, "json", "--output", os.devnull, str(consumer)])[0] == 0


def test_an_empty_cache_dir_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(_consumer(tmp_path))
    _one_line_error(capsys, [*CHECK, "--cache-dir", "", "."], "--cache-dir must not be empty")
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["calls.py"]


def test_a_cache_dir_inside_the_consumer_is_refused(capsys, tmp_path):
    consumer = _consumer(tmp_path)
    argv = [*CHECK, "--cache-dir", str(consumer / ".cache"), str(consumer)]
    _one_line_error(capsys, argv, "lies inside the audited consumer")
    assert not (consumer / ".cache").exists()


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_cache_dir_variable_is_the_default(capsys, tmp_path, monkeypatch, value):
    monkeypatch.setenv("DRIFTAUDIT_CACHE_DIR", value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(_consumer(tmp_path))
    assert _run(capsys, [*CHECK, "--fail-on", "never", "."])[0] == 0
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["calls.py"]
    assert (tmp_path / "xdg" / "driftaudit").is_dir()


def test_a_patch_naming_a_file_outside_the_sglang_tree_is_not_read(capsys, tmp_path):
    """`sglang/../../secret.py` would be placed on a file next to each tree: a finding
    would tell whether its text is what the patch guesses."""
    roots = []
    for name, token in (("o", "1"), ("n", "2")):
        roots.append(_copy_tree(CASE / ("old" if name == "o" else "new"), tmp_path / name / "t"))
        (tmp_path / name / "secret.py").write_text(f"TOKEN = {token}\n")
    patch = "--- a/python/sglang/../../secret.py\n+++ b/python/sglang/../../secret.py\n"
    patch += "@@ -1 +1 @@\n-TOKEN = 1\n+TOKEN = 3\n"
    consumer = write_tree(tmp_path / "c", {"probe.patch": patch})
    argv = ["compare", "--old", str(roots[0]), "--new", str(roots[1])]
    argv += ["--cache-dir", str(tmp_path / "k"), "--format", "json", str(consumer)]
    code, out, _ = _run(capsys, argv)
    assert code == 0 and json.loads(out)["findings"] == []


# ---- consumer input that must be a one-line error, never a traceback --------------------

DEEP = 100_000


@pytest.mark.parametrize(
    "pyproject",
    [
        "[tool.driftaudit]\nexclude = " + "[" * DEEP + "]" * DEEP + "\n",
        "[project]\ndependencies = " + "[" * DEEP + "]" * DEEP + "\n",
        "x = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
    ],
    ids=["array", "dependencies", "inline-table"],
)
def test_a_deeply_nested_pyproject_is_one_line(capsys, tmp_path, pyproject):
    consumer = _consumer(tmp_path, pyproject)
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), str(consumer)]
    _one_line_error(capsys, argv, "not valid TOML: nested too deeply to read")


@pytest.mark.parametrize(
    ("baseline", "needle"),
    [
        ('{"findings": ' + "[" * DEEP + "]" * DEEP + "}", "not a driftaudit baseline"),
        ('{"findings": [{"fingerprint": "x", "line": "x"}]}', "entry 1 has a line that is not"),
        ('{"findings": [{"fingerprint": "x", "line": 1.5}]}', "entry 1 has a line that is not"),
        ('{"findings": [{"fingerprint": "x", "line": true}]}', "entry 1 has a line that is not"),
        ('{"findings": [{"fingerprint": "x", "line": 0}]}', "entry 1 has a line below 1"),
        ('{"findings": [{"fingerprint": "x", "path": 3}]}', "entry 1 has a path that is not a"),
        ('{"findings": [{"fingerprint": "x", "path": "/etc/passwd"}]}', "not in the consumer"),
        ('{"findings": [{"fingerprint": "x", "path": "../x.py"}]}', "not in the consumer"),
        ('{"findings": [{"fingerprint": "x", "symbol": null}]}', "has a symbol that is not"),
        ('{"findings": [{"fingerprint": 1}]}', "entry 1 has no fingerprint"),
        ('{"findings": [{"fingerprint": "x"}, 7]}', "entry 2 is not an object"),
        ('{"findings": {"fingerprint": "x"}}', "not a driftaudit baseline"),
        ("[]", "not a driftaudit baseline"),
        ('{"findings": [1e999999]}', "entry 1 is not an object"),
        ("\xff", "not a driftaudit baseline"),
    ],
)
def test_a_bad_baseline_is_one_line(capsys, tmp_path, baseline, needle):
    consumer = _consumer(tmp_path)
    (consumer / ".driftaudit-baseline.json").write_text(baseline, encoding="latin-1")
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), str(consumer)]
    _one_line_error(capsys, argv, needle)


def test_a_stale_entry_at_a_symlink_to_a_device_is_not_read(capsys, tmp_path):
    """A DA003 finding's region is read from its file: a baseline may name any path."""
    consumer = _consumer(tmp_path)
    (consumer / "zero.py").symlink_to("/dev/zero")
    entry = {"fingerprint": "0" * 32, "rule": "DA201", "path": "zero.py", "symbol": "x"}
    document = {"findings": [{**entry, "line": 1}]}
    (consumer / ".driftaudit-baseline.json").write_text(json.dumps(document))
    argv = [*CHECK, "--cache-dir", str(tmp_path / "k"), "--format", "sarif", str(consumer)]
    code, out, _ = _run(capsys, argv)
    assert code == 1 and "zero.py" in out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "fingerprint": st.text(max_size=4) | _JSON,
        "rule": st.text(max_size=4) | _JSON,
        "path": st.sampled_from(["a.py", "../a.py", "/a", "", "a\0b", "ok/b.py"]) | _JSON,
        "symbol": st.text(max_size=4) | _JSON,
        "line": st.integers(-2, 3) | _JSON,
    },
)
_BASELINE = st.fixed_dictionaries({}, optional={"findings": st.lists(_ENTRY, max_size=3) | _JSON})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_BASELINE | _JSON)
def test_any_baseline_document_loads_or_is_refused_in_one_line(tmp_path_factory, document):
    from driftaudit.check import triage
    from driftaudit.check.baseline import Baseline
    from driftaudit.usage.files import ConsumerFiles

    consumer = _consumer(tmp_path_factory.mktemp("b"))
    path = consumer / ".driftaudit-baseline.json"
    path.write_text(json.dumps(document))
    try:
        baseline = Baseline.load(path, consumer)
    except DriftauditError as exc:
        assert "\n" not in str(exc)
        return
    # what loads, the gate can use: stale entries become findings the reports can show
    from driftaudit import report
    from driftaudit.sources.tree import tree_from_root

    _, _, stale = baseline.split([], ConsumerFiles(consumer))
    for finding in stale:
        assert isinstance(finding.path, str) and isinstance(finding.line, int)
        assert finding.line >= 1 and ".." not in finding.path.split("/")
    tree = tree_from_root("d", "directory", CASE / "old")
    report.findings_sarif(stale, tree, tree, "c", ConsumerFiles(consumer), consumer, "", [])
    report.findings_markdown(stale, tree, tree, "c")
    triage([], ConsumerFiles(consumer), path)


_TOML_VALUE = st.recursive(
    st.booleans() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
_PATHS = st.sampled_from(["../x.json", "/abs.json", "a/../b.json", "ok.json", "x\0", " "])
_KEYS = st.sampled_from(
    ["old", "new", "fail-on", "fail_on", "baseline", "exclude", "wrap-prefixes", "x"]
)


@settings(max_examples=300, deadline=None)
@given(table=st.dictionaries(_KEYS, _TOML_VALUE | _PATHS, max_size=4))
def test_any_config_table_loads_or_is_refused_in_one_line(table):
    from driftaudit.config import Config, _from_table

    try:
        config = _from_table(table, Path("pyproject.toml"), "[tool.driftaudit]")
    except DriftauditError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(config, Config)
    if config.baseline is not None:
        assert not Path(config.baseline).is_absolute() and ".." not in Path(config.baseline).parts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet="[]{}=\"'., \nax1tool.driftaudit", max_size=200))
def test_any_pyproject_text_loads_or_is_refused_in_one_line(tmp_path_factory, text):
    from driftaudit.config import load_config

    consumer = tmp_path_factory.mktemp("p")
    (consumer / "pyproject.toml").write_text(text)
    try:
        load_config(consumer)
    except DriftauditError as exc:
        assert "\n" not in str(exc)


# ---- what the walk reads: folders by what they hold, notebooks -----------------------------

REMOVED = FIXTURES / "codes" / "DA103"
R_OLD, R_NEW = str(REMOVED / "old"), str(REMOVED / "new")
IMPORT = "from sglang.srt.utils import removed_helper\n"


def _audit(capsys, tmp_path: Path, consumer: Path, *extra: str) -> tuple[list[dict], str]:
    argv = ["compare", "--old", R_OLD, "--new", R_NEW, "--cache-dir", str(tmp_path / "k")]
    code, out, err = _run(capsys, [*argv, "--format", "json", *extra, str(consumer)])
    assert code in (0, 1), err
    return json.loads(out)["findings"], err


@pytest.mark.parametrize("name", ["env", "build", "dist", "site-packages", "venv"])
def test_a_consumer_package_named_like_an_environment_is_audited(capsys, tmp_path, name):
    consumer = write_tree(tmp_path / "c", {f"{name}/__init__.py": IMPORT})
    findings, err = _audit(capsys, tmp_path, consumer)
    assert [(f["path"], f["rule"]) for f in findings] == [(f"{name}/__init__.py", "DA103")]
    assert "not read" not in err


SITE = "lib/python3.12/site-packages/m.py"


@pytest.mark.parametrize(
    ("files", "folder", "why"),
    [
        (
            {"venv/pyvenv.cfg": "home = /usr/bin\n", f"venv/{SITE}": IMPORT},
            "venv/",
            "a virtualenv: it holds pyvenv.cfg",
        ),
        ({"tools/pyvenv.cfg": "home = /usr\n", f"tools/{SITE}": IMPORT}, "tools/", "a virtualenv"),
        ({"env/conda-meta/history": "", f"env/{SITE}": IMPORT}, "env/", "a conda environment"),
        (
            {"vendor/sglang-0.1.dist-info/METADATA": "Name: sglang\n", "vendor/m.py": IMPORT},
            "vendor/",
            "installed packages: it holds sglang-0.1.dist-info/",
        ),
        (
            {"build/lib/app/m.py": IMPORT, "build/bdist.linux-x86_64/y": ""},
            "build/",
            "setuptools build output",
        ),
        ({"dist/app-1.0-py3-none-any.whl": "PK", "dist/app-1.0.tar.gz": ""}, "dist/", "built"),
    ],
)
def test_an_environment_in_the_tree_is_skipped_with_a_note(capsys, tmp_path, files, folder, why):
    consumer = write_tree(tmp_path / "c", {"app.py": "x = 1\n", **files})
    findings, err = _audit(capsys, tmp_path, consumer)
    assert findings == []
    assert f"driftaudit: note: not read: {folder} ({why}" in err


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# from sglang.srt.utils import x\n"]},
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": [IMPORT]}],
            "source": ["%load_ext autoreload\n", "!pip install sglang\n", IMPORT.rstrip("\n")],
        },
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "%%bash\n" + IMPORT},
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "source": [
                "import sglang.srt.utils as u\n",
                'label = "caf\\u00e9 \\"q\\""; u.removed_helper()  # driftaudit: ignore[DA201]',
            ],
        },
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _notebook(tmp_path: Path, document: dict = NOTEBOOK, ascii_only: bool = True) -> Path:
    text = json.dumps(document, indent=1, ensure_ascii=ascii_only) + "\n"
    return write_tree(tmp_path / "c", {"nb/demo.ipynb": text})


def _at(consumer: Path, finding: dict) -> str:
    """The text of the notebook file at a finding's place."""
    line = (consumer / finding["path"]).read_text().splitlines()[finding["line"] - 1]
    return line[finding["column"] - 1 : finding["end_column"] - 1]


@pytest.mark.parametrize("ascii_only", [True, False], ids=["escaped", "utf-8"])
def test_a_notebook_importing_a_removed_symbol_is_audited(capsys, tmp_path, ascii_only):
    consumer = _notebook(tmp_path, ascii_only=ascii_only)
    findings, _ = _audit(capsys, tmp_path, consumer)
    placed = [(f["rule"], _at(consumer, f)) for f in findings]
    assert placed == [
        ("DA103", "removed_helper"),  # the import of cell 2 (its magics left out)
        ("DA103", "removed_helper"),  # the attribute of cell 4, after escaped quotes
        ("DA002", "# driftaudit: ignore[DA201]"),  # placed as the findings are
    ]
    lines = (consumer / "nb" / "demo.ipynb").read_text().splitlines()
    assert all(IMPORT.strip() in lines[f["line"] - 1] for f in findings[:1])


def test_a_suppression_in_a_notebook_silences_its_line(capsys, tmp_path):
    document = json.loads(json.dumps(NOTEBOOK))
    document["cells"][3]["source"][1] = "u.removed_helper()  # driftaudit: ignore[DA103]"
    consumer = _notebook(tmp_path, document)
    findings, _ = _audit(capsys, tmp_path, consumer)
    assert [f["rule"] for f in findings] == ["DA103"]


def test_a_notebook_cell_that_does_not_parse_is_DA001_and_the_rest_is_audited(capsys, tmp_path):
    document = json.loads(json.dumps(NOTEBOOK))
    document["cells"].insert(1, {"cell_type": "code", "source": ["def broken(:\n"]})
    consumer = _notebook(tmp_path, document)
    findings, _ = _audit(capsys, tmp_path, consumer)
    assert [f["rule"] for f in findings] == ["DA001", "DA103", "DA103", "DA002"]
    assert "def broken(:" in _at(consumer, {**findings[0], "column": 1, "end_column": 99})


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("{not json", "DA001"),
        ("[" * DEEP + "]" * DEEP, "DA001"),
        ('{"cells": 3}', "DA001"),
        ('{"cells": [], "metadata": {"kernelspec": {"language": "R"}}}', None),
    ],
    ids=["invalid", "deep", "no-cells", "another-language"],
)
def test_a_notebook_that_is_not_one_is_a_finding_or_a_note(capsys, tmp_path, text, rule):
    consumer = write_tree(tmp_path / "c", {"nb.ipynb": text})
    findings, err = _audit(capsys, tmp_path, consumer)
    assert [f["rule"] for f in findings] == ([rule] if rule else [])
    if rule is None:
        assert "not read: nb.ipynb (a notebook in r, not Python)" in err


def test_fix_does_not_rewrite_a_notebook_and_lists_it(capsys, tmp_path):
    moved = FIXTURES / "codes" / "DA102"
    source = (moved / "consumer" / "pkg" / "top.py").read_text().splitlines()[0]
    document = {"cells": [{"cell_type": "code", "source": [source]}], "nbformat": 4}
    consumer = write_tree(tmp_path / "c", {"demo.ipynb": json.dumps(document, indent=1)})
    before = (consumer / "demo.ipynb").read_bytes()
    argv = ["fix", "--old", str(moved / "old"), "--new", str(moved / "new"), "--apply"]
    code, _, err = _run(capsys, [*argv, "--cache-dir", str(tmp_path / "k"), str(consumer)])
    assert code == 0 and (consumer / "demo.ipynb").read_bytes() == before
    assert "1 findings need a human" in err and "demo.ipynb:" in err
