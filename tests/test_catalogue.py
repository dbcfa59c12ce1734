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
import zipfile
from pathlib import Path

import pytest

from driftaudit.cache import SCHEMA_VERSION, BlobStore
from driftaudit.cli import main
from driftaudit.errors import DriftauditError
from driftaudit.sources import index as index_source
from driftaudit.sources import resolve_spec
from driftaudit.sources.git import export_ref

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
    assert time.perf_counter() - start < 5


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
            results.append(export_ref(f"git:{repo}@HEAD", tmp_path / "cache"))
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


def _fake_wheel(calls: list[str]):
    def download(version, dest):
        calls.append(version)
        wheel = dest / f"sglang-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("sglang/__init__.py", "")
            for i in range(6):
                zf.writestr(f"sglang/m{i}.py", f"def f{i}(a): ...\n")
            zf.writestr(f"sglang-{version}.dist-info/METADATA", f"Version: {version}\n")
        return wheel

    return download


@pytest.mark.parametrize(
    "damage",
    [
        lambda root: [p.unlink() for p in sorted(root.glob("sglang/m*.py"))[:3]],
        lambda root: (root / "sglang" / "m0.py").write_text("def f0(a, b): ...\n"),
        lambda root: (root / "sglang" / "extra.py").write_text(""),
    ],
    ids=["half-deleted", "edited", "added"],
)
def test_damaged_cached_release_is_fetched_again(monkeypatch, capsys, tmp_path, damage):
    calls: list[str] = []
    monkeypatch.setattr(index_source, "_download_wheel", _fake_wheel(calls))
    cache = tmp_path / "cache"
    tree = resolve_spec("1.2.3", cache)
    assert resolve_spec("1.2.3", cache).root == tree.root and calls == ["1.2.3"]
    damage(tree.root)
    tree = resolve_spec("1.2.3", cache)
    assert calls == ["1.2.3", "1.2.3"], "the damaged release was not fetched again"
    assert "cached sglang 1.2.3 is damaged" in capsys.readouterr().err
    assert sorted(p.name for p in tree.root.glob("sglang/*.py")) == [
        "__init__.py",
        *(f"m{i}.py" for i in range(6)),
    ]
    assert (tree.root / "sglang" / "m0.py").read_text() == "def f0(a): ...\n"


def test_touched_but_unchanged_release_is_not_fetched_again(monkeypatch, tmp_path):
    calls: list[str] = []
    monkeypatch.setattr(index_source, "_download_wheel", _fake_wheel(calls))
    tree = resolve_spec("1.2.3", tmp_path / "cache")
    os.utime(tree.root / "sglang" / "m1.py", (1, 1))  # stats differ, content does not
    resolve_spec("1.2.3", tmp_path / "cache")
    assert calls == ["1.2.3"]


def test_two_cold_runs_fetch_the_same_release_at_once(monkeypatch, tmp_path):
    calls: list[str] = []
    monkeypatch.setattr(index_source, "_download_wheel", _fake_wheel(calls))
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
    assert index_source.verify_manifest(roots[0]) is None


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


def test_cached_release_that_is_a_file_is_fetched_again(monkeypatch, tmp_path):
    calls: list[str] = []
    monkeypatch.setattr(index_source, "_download_wheel", _fake_wheel(calls))
    target = index_source.release_dir(tmp_path / "cache", "1.2.3")
    target.parent.mkdir(parents=True)
    target.write_text("junk")
    assert resolve_spec("1.2.3", tmp_path / "cache").version == "1.2.3" and calls == ["1.2.3"]


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
    from driftaudit.snapshot.model import Alias
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
