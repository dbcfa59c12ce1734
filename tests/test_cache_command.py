"""`driftaudit cache info|clean|prune` (store/maintenance.py) and the use markers it reads
(sources/in_use.py): each part of the cache with its size, removal of driftaudit's own
entries only, links removed as links, trees in use left alone, prune's policy.

Offline: releases come from a loopback index (tests/fake_index.py); store entries are
written through the store itself.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from driftaudit.cli import main
from driftaudit.errors import DriftauditError
from driftaudit.sources import in_use, resolve_spec
from driftaudit.sources import index as index_source
from driftaudit.store import maintenance
from driftaudit.store.db import BlobStore

from .conftest import FIXTURES, write_tree
from .report_schemas import assert_valid

PACKAGE = Path(__file__).resolve().parents[1] / "driftaudit"
DAY = 86400.0


def _release(fake_index, cache_dir: Path, version: str, text: str = "") -> Path:
    """sglang `version` fetched into the cache (its modules' text made its own by
    `text`), its root; no hold kept."""
    files = {"sglang/__init__.py": "", "sglang/version.py": f'__version__ = "{version}"\n'}
    files.update({f"sglang/m{i}.py": f"def f{i}(a): ...  # {text or version}\n" for i in range(3)})
    fake_index.add(version, files=files)
    tree = resolve_spec(version, cache_dir)
    root = tree.root
    del tree  # releases its hold: as a run that ended
    return root


def _digests(root: Path) -> set[str]:
    manifest = json.loads((root / index_source.MANIFEST).read_text())
    return {entry[2] for rel, entry in manifest.items() if rel.endswith(".py")}


def _used(root: Path, when: float) -> None:
    os.utime(root / in_use.USED, (when, when))


def _store(cache_dir: Path, name: str, keys: list[str]) -> None:
    store = BlobStore(cache_dir / name)
    store.put_many([(k, b"{}") for k in keys])
    store.close()


def _keys(cache_dir: Path, name: str) -> set[str]:
    store = BlobStore(cache_dir / name)
    try:
        return {k for k, _ in store.sizes()}
    finally:
        store.close()


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _current(namespace: str) -> str:
    return maintenance.current_versions()["snapshots.sqlite"][namespace]


# ---- info -----------------------------------------------------------------------------


def test_info_shows_each_part_its_size_and_the_total(fake_index, cache_dir, capsys):
    old = _release(fake_index, cache_dir, "1.0.0")
    _release(fake_index, cache_dir, "1.1.0")
    _used(old, time.time() - 3 * DAY)
    module = _current("module")
    digest = sorted(_digests(old))[0]
    _store(cache_dir, "snapshots.sqlite", [f"module:{module}:sglang.m0:{digest}", "module:0:x:y"])
    _store(cache_dir, "findings.sqlite", ["findings:1:slot"])
    (cache_dir / "latest-sglang.json").write_text(
        json.dumps({"checked": time.time(), "version": "1.1.0", "index": "x"})
    )
    (cache_dir / "notes.txt").write_text("mine")
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "info", "--format", "json")
    assert code == 0
    info = json.loads(out)
    assert_valid("cache", info)
    assert info["schema_version"] == 1
    assert info["cache_dir"] == str(cache_dir)
    assert [r["version"] for r in info["releases"]] == ["1.1.0", "1.0.0"]
    assert all(r["bytes"] > 0 for r in info["releases"])
    assert time.time() - info["releases"][1]["last_used"] == pytest.approx(3 * DAY, abs=60)
    stores = {s["name"]: s for s in info["stores"]}
    namespaces = {
        (n["namespace"], n["version"]): n for n in stores["snapshots.sqlite"]["namespaces"]
    }
    assert namespaces["module", module]["current"] and namespaces["module", module]["entries"] == 1
    assert not namespaces["module", "0"]["current"]
    assert stores["snapshots.sqlite"]["entries"] == 2
    assert not stores["findings.sqlite"]["namespaces"][0]["current"]  # findings:1 is stale
    assert info["latest"]["version"] == "1.1.0"
    assert info["not_driftaudits"] == ["notes.txt"]
    parts = [r["bytes"] for r in info["releases"]] + [s["bytes"] for s in info["stores"]]
    assert info["total_bytes"] == sum(parts) + info["latest"]["bytes"]

    code, out, _ = _run(capsys, "cache", "info", "--cache-dir", str(cache_dir))
    assert code == 0
    assert re.search(r"^  1\.0\.0 .* last used .*\(3 days ago\)$", out, re.M)
    assert "module:0" in out and "prune removes it" in out
    assert "not driftaudit's (left alone, not counted): notes.txt" in out
    assert out.rstrip().splitlines()[-1].startswith("total: ")


def test_info_of_an_absent_cache_creates_nothing(tmp_path, capsys):
    cache = tmp_path / "none"
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache), "info")
    assert code == 0 and "does not exist" in out
    assert not cache.exists()


def test_opening_a_release_marks_it_used(fake_index, cache_dir):
    root = _release(fake_index, cache_dir, "1.0.0")
    _used(root, time.time() - 10 * DAY)
    tree = resolve_spec("1.0.0", cache_dir)  # warm: served from the cache
    assert len(fake_index.downloads()) == 1
    assert time.time() - in_use.last_used(root, index_source.COMPLETE) < 60
    assert isinstance(tree.in_use, in_use.Hold)
    assert in_use.claim(root) is None, "a tree a run holds cannot be claimed"
    del tree
    claim = in_use.claim(root)
    assert claim is not None
    claim.release()


# ---- clean ----------------------------------------------------------------------------


def test_clean_removes_driftaudits_entries_and_nothing_else(fake_index, tmp_path, capsys):
    cache = tmp_path / "cache"
    _release(fake_index, cache, "1.0.0")
    _store(cache, "snapshots.sqlite", ["module:1:a:b", "names:1:c"])
    (cache / "latest-sglang.json").write_text("{}")
    outside = write_tree(tmp_path / "outside", {"sglang/__init__.py": "", "keep.txt": "x"})
    (cache / "sources" / "sglang-9.9.9").symlink_to(outside)
    (cache / "sources" / "sglang-1.2.0").mkdir()  # not written by driftaudit: no record
    (cache / "sources" / "sglang-1.2.0" / "data").write_text("x")
    (cache / "mine").mkdir()
    (cache / "mine" / "f").write_text("x")
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache), "clean")
    assert code == 0
    assert "removed sglang 1.0.0" in out and "removed latest-sglang.json" in out
    assert "removed sglang 9.9.9 (a symlink: removed as a link)" in out
    assert "removed snapshots.sqlite: 2 entries" in out
    assert "skipped mine: not driftaudit's: left alone" in out
    assert "skipped sources/sglang-1.2.0: not driftaudit's" in out
    assert out.rstrip().splitlines()[-1].startswith("freed ")
    assert not (cache / "sources" / "sglang-1.0.0").exists()
    assert not (cache / "sources" / "sglang-9.9.9").is_symlink()
    assert (outside / "keep.txt").read_text() == "x" and (outside / "sglang").is_dir()
    assert (cache / "mine" / "f").is_file() and (
        cache / "sources" / "sglang-1.2.0" / "data"
    ).is_file()
    assert _keys(cache, "snapshots.sqlite") == set()
    assert cache.is_dir(), "the cache directory itself stays"


@pytest.mark.parametrize("layout", ["home", "root-like"])
def test_clean_of_a_folder_that_is_not_a_cache_deletes_nothing(tmp_path, capsys, layout):
    """`--cache-dir ~` or `/`: every entry is someone else's."""
    home = tmp_path / "home"
    files = {".bashrc": "x", "projects/a.py": "x", "sources/notes.md": "x", "sources/sglang/x": "x"}
    if layout == "root-like":
        files = {"etc/passwd": "x", "usr/bin/tool": "x", "sources/sglang-0.1/x.py": "x"}
    write_tree(home, files)
    before = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
    for action in (["clean"], ["prune", "--keep-days", "0"]):
        code, out, _ = _run(capsys, "cache", "--cache-dir", str(home), *action)
        assert code == 0
        assert "removed" not in out and "left alone" in out
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == before


def test_clean_named_releases_and_what_only_they_used(fake_index, cache_dir, capsys):
    old = _release(fake_index, cache_dir, "1.0.0")
    new = _release(fake_index, cache_dir, "1.1.0")
    module = _current("module")
    shared = write_tree(cache_dir.parent / "shared", {"x": ""})  # a tree read by a walk
    old_only = sorted(_digests(old) - _digests(new))
    keys = [f"module:{module}:sglang.m0:{d}" for d in old_only]
    kept = [f"module:{module}:sglang.m0:{d}" for d in sorted(_digests(new))]
    kept.append(f"stats:{_current('stats')}:{shared}")
    _store(cache_dir, "snapshots.sqlite", keys + kept)
    code, out, _ = _run(capsys, "cache", "clean", "1.0.0", "--cache-dir", str(cache_dir))
    assert code == 0 and "removed sglang 1.0.0" in out
    assert f"removed snapshots.sqlite: {len(keys)} entries" in out
    assert not old.exists() and new.is_dir()
    assert _keys(cache_dir, "snapshots.sqlite") == set(kept)


def test_clean_an_unknown_release_is_a_one_line_error(fake_index, cache_dir, capsys):
    _release(fake_index, cache_dir, "1.0.0")
    code, out, err = _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean", "2.0")
    assert code == 2 and out == ""
    assert err == "driftaudit: error: '2.0' is not in the cache (cached: 1.0.0)\n"
    assert index_source.release_dir(cache_dir, "1.0.0").is_dir(), "nothing removed"
    code, _, err = _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean", "not a version")
    assert code == 2 and len(err.splitlines()) == 1


@pytest.mark.parametrize("action", [["info"], ["clean"], ["prune"]])
def test_a_cache_dir_that_is_a_file_is_a_one_line_error(tmp_path, capsys, action):
    plain = tmp_path / "file"
    plain.write_text("x")
    code, out, err = _run(capsys, "cache", "--cache-dir", str(plain), *action)
    assert (code, out) == (2, "")
    assert err == f"driftaudit: error: cache directory {str(plain)!r} is not a directory\n"
    assert plain.read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_cache_is_a_one_line_error(fake_index, cache_dir, capsys):
    _release(fake_index, cache_dir, "1.0.0")
    cache_dir.chmod(0o555)
    try:
        code, _, err = _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean")
        assert code == 2 and err.endswith("is not writable\n") and len(err.splitlines()) == 1
        assert _run(capsys, "cache", "--cache-dir", str(cache_dir), "info")[0] == 0
    finally:
        cache_dir.chmod(0o755)


def test_bad_prune_options_exit_2(cache_dir, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["cache", "--cache-dir", str(cache_dir), "prune", "--keep-days", "-1"])
    assert stopped.value.code == 2


# ---- prune ----------------------------------------------------------------------------


def test_prune_removes_what_cannot_be_used_and_idle_releases(fake_index, cache_dir, capsys):
    now = time.time()
    idle = _release(fake_index, cache_dir, "1.0.0")
    recent = _release(fake_index, cache_dir, "1.1.0")
    damaged = _release(fake_index, cache_dir, "1.2.0")
    _used(idle, now - 40 * DAY)
    (damaged / "sglang" / "m1.py").write_text("changed\n")  # no longer what was unpacked
    os.utime(damaged / "sglang" / "m1.py", (0, 0))
    sources = cache_dir / "sources"
    stale_tmp = write_tree(sources / ".download-abc", {"unpacked/sglang/x.py": ""})
    os.utime(stale_tmp, (now - 2 * 3600, now - 2 * 3600))
    os.utime(stale_tmp / "unpacked", (now - 2 * 3600, now - 2 * 3600))
    fresh_tmp = write_tree(sources / ".download-def", {"wheel.whl": ""})
    module, stats = _current("module"), _current("stats")
    live_dir = write_tree(cache_dir.parent / "live", {"x": ""})
    live = [f"module:{module}:sglang.m0:{d}" for d in sorted(_digests(recent))]
    live += [f"stats:{stats}:{live_dir}", f"names:{_current('names')}:treedigest"]
    stale = [
        f"module:{module}:sglang.m0:{'0' * 64}",  # a file no tree holds
        "module:0:sglang.m0:abc",  # another extractor version
        "nosuchspace:1:x",  # a namespace this driftaudit does not have
        f"stats:{stats}:{cache_dir.parent / 'gone'}",  # the stat cache of a deleted folder
    ]
    _store(cache_dir, "snapshots.sqlite", live + stale)
    _store(
        cache_dir,
        "files.sqlite",
        ["file:0:old", f"file:{maintenance.current_versions()['files.sqlite']['file']}:now"],
    )
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "prune")
    assert code == 0
    assert "removed sglang 1.0.0 (not used for 40 days)" in out
    assert "removed sglang 1.2.0 (does not verify: sglang/m1.py changed)" in out
    assert "removed sources/.download-abc (left by an interrupted run)" in out
    assert "1.1.0" not in out and ".download-def" not in out
    assert f"removed snapshots.sqlite: {len(stale)} entries" in out
    assert not idle.exists() and not damaged.exists() and recent.is_dir()
    assert not stale_tmp.exists() and fresh_tmp.is_dir()
    assert _keys(cache_dir, "snapshots.sqlite") == set(live)
    assert len(_keys(cache_dir, "files.sqlite")) == 1

    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "prune", "--keep", "0")
    assert "removed sglang 1.1.0 (not among the 0 most recently used)" in out
    assert not recent.exists()


def test_prune_and_clean_skip_a_release_another_run_reads(fake_index, cache_dir, capsys):
    root = _release(fake_index, cache_dir, "1.0.0")
    tree = resolve_spec("1.0.0", cache_dir)  # a run reading it
    for action in (["prune", "--keep-days", "0"], ["clean"], ["clean", "1.0.0"]):
        code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), *action)
        assert code == 0
        assert "skipped sglang 1.0.0: in use by another driftaudit run" in out
        assert (root / "sglang" / "m0.py").is_file()
    del tree
    _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean", "1.0.0")
    assert not root.exists()


def test_a_run_opening_a_release_being_removed_fetches_it_again(fake_index, cache_dir):
    root = _release(fake_index, cache_dir, "1.0.0")
    claim = in_use.claim(root)  # a remover holds it, and moves it aside
    assert claim is not None
    root.rename(root.with_name(".discard-sglang-1.0.0-1"))
    assert in_use.hold(root) == in_use.GONE
    claim.release()
    tree = resolve_spec("1.0.0", cache_dir)
    assert len(fake_index.downloads()) == 2 and (tree.root / "sglang" / "m0.py").is_file()


def test_a_marker_moved_aside_while_waiting_is_gone(tmp_path):
    tree = write_tree(tmp_path / "sglang-1.0", {".driftaudit-complete": "{}"})
    fd = os.open(tree / in_use.USED, os.O_RDWR | os.O_CREAT)
    try:
        tree.rename(tmp_path / "aside")
        tree.mkdir()
        (tree / in_use.USED).write_text("")  # another tree now in its place
        assert not in_use._same_file(fd, tree / in_use.USED)
    finally:
        os.close(fd)


def test_prune_keeps_what_a_warm_run_reads(cache_dir, capsys):
    """A compare over directory trees, then prune: every entry the run wrote stays."""
    from driftaudit.pipeline import run_compare

    case = FIXTURES / "codes" / "DA102"
    run_compare(case / "consumer", str(case / "old"), str(case / "new"), cache_dir)
    before = _keys(cache_dir, "snapshots.sqlite")
    assert any(k.startswith("module:") for k in before)
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "prune")
    assert code == 0 and "entries" not in out
    assert _keys(cache_dir, "snapshots.sqlite") == before


# ---- the registry of namespaces ---------------------------------------------------------


def _written_namespaces() -> set[str]:
    """Every namespace the package builds a key with: `key("ns", ...)`, `key(NAME, ...)`
    of a module constant, and f-strings starting `ns:{..._VERSION}`."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        constants = {
            t.id: n.value.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name) and isinstance(n.value.value, str)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "key" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.add(first.value)
                elif isinstance(first, ast.Name) and first.id in constants:
                    found.add(constants[first.id])
            if isinstance(node, ast.JoinedStr) and len(node.values) > 1:
                head, version = node.values[:2]
                if (
                    isinstance(head, ast.Constant)
                    and re.fullmatch(r"[a-z_]+:", str(head.value))
                    and isinstance(version, ast.FormattedValue)
                    and getattr(version.value, "id", "").endswith("VERSION")
                ):
                    found.add(str(head.value)[:-1])
    return found


def test_every_namespace_the_code_writes_has_its_version_known():
    known = set().union(*maintenance.current_versions().values())
    written = _written_namespaces()
    assert {"module", "pair", "selfreads", "deprecated", "findings", "file"} <= written
    assert written - known == set()


def test_info_on_the_test_cache_of_real_releases(release_cache):
    """Read only: the integration tests' cache, when it holds releases already."""
    if not (release_cache / "sources").is_dir():
        pytest.skip("no real release cached")
    found = maintenance.inventory(release_cache)
    releases = [t for t in found.trees if t.kind == "release"]
    if not releases:
        pytest.skip("no real release cached")
    assert all(t.size > 1_000_000 and t.last_used for t in releases)
    assert found.total >= sum(t.size for t in releases)


def test_a_missing_release_name_is_refused_before_anything_is_removed(fake_index, cache_dir):
    _release(fake_index, cache_dir, "1.0.0")
    with pytest.raises(DriftauditError):
        maintenance.clean(cache_dir, ["1.0.0", "3.0"])
    assert index_source.release_dir(cache_dir, "1.0.0").is_dir()


def test_a_release_read_by_another_process_is_skipped(fake_index, cache_dir, capsys):
    """A second driftaudit process holding the release (as a compare does while it runs)."""
    root = _release(fake_index, cache_dir, "1.0.0")
    reader = (
        "import sys\n"
        "from pathlib import Path\n"
        "from driftaudit.sources import configure_sources, resolve_spec\n"
        "configure_sources(offline=True)\n"
        f"tree = resolve_spec('1.0.0', Path({str(cache_dir)!r}))\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", reader], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean")
        assert code == 0 and "skipped sglang 1.0.0: in use by another driftaudit run" in out
        assert (root / "sglang" / "m0.py").is_file()
    finally:
        child.communicate("\n", timeout=60)
    _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean")
    assert not root.exists()


def test_prune_does_not_wait_long_for_a_reader_of_the_store(cache_dir, capsys):
    """A run reading the store (an open read transaction): the rows go, the VACUUM is
    done, the log is left for SQLite, and prune is not held for the writers' 30 s."""
    _store(cache_dir, "snapshots.sqlite", [f"module:0:m:{i}" for i in range(50)])
    reader = sqlite3.connect(cache_dir / "snapshots.sqlite", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM blobs").fetchone()
    try:
        start = time.perf_counter()
        code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "prune")
        assert time.perf_counter() - start < 20
        assert code == 0 and "removed snapshots.sqlite: 50 entries" in out
        assert "another run is reading it" in out
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert _keys(cache_dir, "snapshots.sqlite") == set()


def test_a_git_export_is_listed_and_removed_with_its_stat_cache(tmp_path, cache_dir, capsys):
    repo = write_tree(
        tmp_path / "repo", {"python/sglang/__init__.py": "", "python/sglang/a.py": ""}
    )
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    tree = resolve_spec(f"git:{repo}@HEAD", cache_dir)
    export, name = tree.root, tree.root.name
    del tree
    other = write_tree(tmp_path / "checkout", {"sglang/__init__.py": ""})  # a walked tree, kept
    stats, module = _current("stats"), _current("module")
    _store(cache_dir, "snapshots.sqlite", [])
    store = BlobStore(cache_dir / "snapshots.sqlite")
    table = {"sglang/a.py": [0, 0, "d-export"], "sglang/__init__.py": [0, 0, "d-shared"]}
    store.put(f"stats:{stats}:{export.resolve()}", json.dumps(table).encode())
    store.put(f"stats:{stats}:{other}", json.dumps({"x": [0, 0, "d-shared"]}).encode())
    store.close()
    _store(
        cache_dir,
        "snapshots.sqlite",
        [f"module:{module}:a:d-export", f"module:{module}:i:d-shared"],
    )
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "info", "--format", "json")
    assert [e["name"] for e in json.loads(out)["git_exports"]] == [name]
    code, out, _ = _run(capsys, "cache", "--cache-dir", str(cache_dir), "clean", name)
    assert code == 0 and f"removed {name}" in out and not export.exists()
    assert _keys(cache_dir, "snapshots.sqlite") == {
        f"stats:{stats}:{other}",
        f"module:{module}:i:d-shared",  # the checkout still holds that file
    }


def test_the_help_states_the_default_policy(capsys):
    with pytest.raises(SystemExit):
        main(["cache", "prune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default {maintenance.DEFAULT_KEEP_DAYS})" in text


def test_a_warm_run_does_not_import_the_maintenance_module():
    """`driftaudit.cli` is imported by every run: `cache` loads its module when asked."""
    code = "import sys, driftaudit.cli; print('driftaudit.store.maintenance' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.strip() == "False"


def test_every_store_file_the_code_opens_is_known():
    """A new `*.sqlite` beside the three would be listed as not driftaudit's, and never
    cleaned: it must be added to `maintenance.STORES` (and its namespaces)."""
    named = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"[\w.-]+\.sqlite", node.value):
                    named.add(node.value)
    assert named == set(maintenance.STORES) == set(maintenance.current_versions())
