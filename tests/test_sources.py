"""Version specs -> source trees."""

from __future__ import annotations

import subprocess

import pytest

from driftaudit.errors import DriftauditError
from driftaudit.sources import index as index_source
from driftaudit.sources import resolve_spec

from .conftest import write_tree

SGLANG = {"sglang/__init__.py": "", "sglang/version.py": '__version__ = "9.9.9"\n'}


def test_directory_spec_finds_the_package_in_checkout_layouts(tmp_path, cache_dir):
    write_tree(tmp_path / "checkout" / "python", SGLANG)
    for spec in ("checkout", "checkout/python", "checkout/python/sglang"):
        tree = resolve_spec(str(tmp_path / spec), cache_dir)
        assert tree.root == tmp_path / "checkout" / "python"
        assert tree.version == "9.9.9" and tree.origin == "directory"


def test_directory_without_sglang_is_an_error(tmp_path, cache_dir):
    with pytest.raises(DriftauditError, match="no sglang package"):
        resolve_spec(str(tmp_path), cache_dir)


def test_nonsense_spec_is_an_error(cache_dir):
    with pytest.raises(DriftauditError, match="cannot resolve sglang spec"):
        resolve_spec("not-a-version-or-path", cache_dir)


def test_git_spec_exports_the_ref(tmp_path, cache_dir):
    repo = write_tree(tmp_path / "repo", {f"python/{k}": v for k, v in SGLANG.items()})
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], check=True)
    subprocess.run([*git, "tag", "v1"], check=True)
    (repo / "python/sglang/version.py").write_text('__version__ = "10.0.0"\n')
    subprocess.run([*git, "commit", "-qam", "v2"], check=True)
    old = resolve_spec(f"git:{repo}@v1", cache_dir)
    new = resolve_spec(f"git:{repo}@HEAD", cache_dir)
    assert (old.version, new.version) == ("9.9.9", "10.0.0")
    assert old.origin == "git" and (old.root / "sglang" / "__init__.py").is_file()
    with pytest.raises(DriftauditError, match="unknown ref"):
        resolve_spec(f"git:{repo}@nope", cache_dir)


def test_unknown_release_names_the_available_versions(fake_index, cache_dir):
    for version in ("0.5.9", "0.5.14", "0.5.10rc0"):
        fake_index.add(version)
    with pytest.raises(DriftauditError) as caught:
        resolve_spec("0.5.99", cache_dir)
    message = str(caught.value)
    assert message == "unknown sglang version '0.5.99'; available: 0.5.14, 0.5.10rc0, 0.5.9"


def test_interrupted_unpack_is_redone(fake_index, tmp_path, cache_dir):
    """A release folder without its completion marker is not trusted."""
    partial = index_source.release_dir(cache_dir, "1.2.3")
    write_tree(partial, {"sglang/__init__.py": ""})
    files = {"sglang/__init__.py": "", "sglang/version.py": '__version__ = "1.2.3"\n'}
    fake_index.add("1.2.3", files=files)
    tree = resolve_spec("1.2.3", cache_dir)
    assert len(fake_index.downloads()) == 1 and tree.version == "1.2.3"
    assert not (tree.root / "tools").exists(), "only the sglang package is unpacked"
    resolve_spec("1.2.3", cache_dir)
    assert len(fake_index.downloads()) == 1, "second use is served from the cache"


def test_installed_spec_locates_without_importing(monkeypatch, tmp_path, cache_dir):
    import importlib.machinery
    import importlib.util

    package = write_tree(tmp_path / "site", SGLANG) / "sglang"
    spec = importlib.machinery.ModuleSpec("sglang", None, is_package=True)
    spec.submodule_search_locations = [str(package)]
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: spec if name == "sglang" else None
    )
    tree = resolve_spec("installed", cache_dir)
    assert tree.root == package.parent and tree.version == "9.9.9" and tree.origin == "installed"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DriftauditError, match="no sglang package is importable"):
        resolve_spec("installed", cache_dir)


def test_a_tree_is_versioned_by_its_dist_info_metadata(tmp_path, cache_dir):
    metadata = "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.14\n\nVersion: 9.9 (body)\n"
    root = write_tree(
        tmp_path / "wheel",
        {
            "sglang/__init__.py": "",
            "sglang/version.py": '__version__ = "0.0.1"\n',
            "sglang-0.5.14.dist-info/METADATA": metadata,
        },
    )
    tree = resolve_spec(str(root), cache_dir)
    assert tree.version == "0.5.14"  # the header, not the body, not version.py
    (root / "sglang-0.5.14.dist-info" / "METADATA").write_text("Name: sglang\n")
    assert resolve_spec(str(root), cache_dir).version == "0.0.1"  # no Version header
