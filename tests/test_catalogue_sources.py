"""The bad-input catalogue, sources: what a consumer commits never runs when releases are
fetched, `latest` is looked up, a git spec is read or a fix checks a shell script; the
cache cannot pass one release off as another, nor `latest` as a path; a tree without a
dist-info is versioned from itself (or its tags), and says so when it cannot be.

Offline: releases come from a loopback index (tests/fake_index.py), git specs from
local repositories.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from driftaudit.cli import main
from driftaudit.sources import index as index_source
from driftaudit.sources import resolve_spec
from driftaudit.sources.latest import latest_release

from .conftest import FIXTURES, write_tree

ROOT = Path(__file__).resolve().parents[1]
# what a consumer commits to be run in driftaudit's place: pip (started as `python -m pip`
# in the working directory), programs on a relative PATH entry, and the modules a cold
# run imports lazily (`python -m driftaudit` put the working directory on sys.path)
_PROGRAMS = ("git", "bash", "sh", "bin/git", "bin/bash", "bin/pip", "bin/python3")
_LAZY = ("difflib", "tempfile", "shutil", "subprocess", "zipfile", "griffe", "rich")
KINDS = ("pip-and-programs", "lazy-imports")


def _hostile(consumer: Path, marker: Path, kind: str = KINDS[0]) -> Path:
    """A consumer tree that appends to `marker` from every module and program it commits."""
    line = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    modules = ("pip",) if kind == KINDS[0] else _LAZY
    for name in modules:
        write_tree(consumer, {f"{name}/__init__.py": line, f"{name}/__main__.py": line})
    if kind == KINDS[0]:
        for name in _PROGRAMS:
            script = consumer / name
            script.parent.mkdir(exist_ok=True)
            script.write_text(f"#!/bin/sh\necho {name} >> {marker}\nexit 1\n")
            script.chmod(0o755)
    else:
        for name in ("difflib", "tempfile"):  # a module beside the package of the same name
            write_tree(consumer, {f"{name}.py": line})
    return consumer


def _git(repo: Path, *args: str) -> None:
    base = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*base, *args], check=True, capture_output=True)


def _driftaudit(consumer: Path, index_url: str, *argv: str) -> subprocess.CompletedProcess:
    """`python -m driftaudit ARGV` run in the consumer (as CI runs it in the checkout),
    PATH starting with entries relative to it (empty, `.`, `bin`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PATH=os.pathsep.join(["", ".", "bin", os.environ["PATH"]]),
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL=index_url,
        NO_PROXY="127.0.0.1",
        PYTHONPATH=str(ROOT),  # driftaudit itself, as installed
    )
    return subprocess.run(
        [sys.executable, "-m", "driftaudit", *argv],
        cwd=consumer,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(params=KINDS)
def hostile(tmp_path: Path, request) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    consumer = write_tree(tmp_path / "consumer", {"app.py": "import sglang.m0\n"})
    return _hostile(consumer, marker, request.param), marker


def _ran(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


@pytest.mark.parametrize("new", ["1.1.0", "latest"])
def test_fetching_a_release_runs_nothing_of_the_consumer(fake_index, hostile, tmp_path, new):
    consumer, marker = hostile
    fake_index.add("1.0.0")
    fake_index.add("1.1.0")
    argv = ["compare", "--old", "1.0.0", "--new", new, "--cache-dir", str(tmp_path / "k")]
    done = _driftaudit(consumer, fake_index.url, *argv, ".")
    assert not _ran(marker), f"the consumer's code ran: {_ran(marker)}"
    assert done.returncode == 0, done.stderr
    assert len(fake_index.downloads()) == 2 and "Traceback" not in done.stderr


def test_a_git_spec_runs_nothing_of_the_consumer(fake_index, hostile, tmp_path):
    consumer, marker = hostile
    repo = write_tree(tmp_path / "sglang-repo", {"python/sglang/__init__.py": ""})
    write_tree(repo, {"python/sglang/m0.py": "def f(a): ...\n"})
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "v1.0.0")
    argv = ["compare", "--old", f"git:{repo}@v1.0.0", "--new", f"git:{repo}@HEAD"]
    done = _driftaudit(consumer, fake_index.url, *argv, "--cache-dir", str(tmp_path / "k"), ".")
    assert not _ran(marker), f"the consumer's code ran: {_ran(marker)}"
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_a_fix_checking_a_shell_script_runs_nothing_of_the_consumer(fake_index, tmp_path, kind):
    case = FIXTURES / "codes" / "DA404"
    consumer = tmp_path / "consumer"
    shutil.copytree(case / "consumer", consumer)
    marker = tmp_path / "ran"
    _hostile(consumer, marker, kind)
    argv = ["fix", "--old", str(case / "old"), "--new", str(case / "new"), "--apply", "."]
    done = _driftaudit(consumer, fake_index.url, *argv, "--cache-dir", str(tmp_path / "k"))
    assert not _ran(marker), f"the consumer's code ran: {_ran(marker)}"
    assert done.returncode == 0, done.stderr
    assert "--disable-radix-cache  # expect" in (consumer / "scripts" / "launch.sh").read_text()


def test_children_ignore_relative_path_entries_and_the_environment(tmp_path, monkeypatch):
    from driftaudit import children

    marker = tmp_path / "ran"
    consumer = _hostile(tmp_path / "consumer", marker)
    monkeypatch.chdir(consumer)
    monkeypatch.setenv("PATH", os.pathsep + "." + os.pathsep + "bin" + os.pathsep + os.defpath)
    monkeypatch.setenv("GIT_DIR", str(consumer))  # what a git hook exports
    assert children.program("git") == shutil.which("git", path=os.defpath)
    done = children.run("git", ["rev-parse", "--git-dir"])
    assert "GIT_DIR" not in done.stderr.decode() and not _ran(marker)
    env = children.run("sh", ["-c", "env; pwd"]).stdout.decode().splitlines()
    assert "/" in env and not any(line.startswith("GIT_DIR=") for line in env)


# ---- the cache: `latest` and releases are bound to what they name ---------------------


@pytest.mark.parametrize(
    "version",
    ["git:{repo}@HEAD", "{repo}", "../../{name}", "0.9.0rc1", "v" + "9" * 100, 3, None],
)
def test_a_cached_latest_must_name_a_final_release(fake_index, tmp_path, version):
    repo = write_tree(tmp_path / "elsewhere", {"sglang/__init__.py": "", "sglang/x.py": ""})
    fake_index.add("0.8.0")
    cache = tmp_path / "cache"
    cache.mkdir()
    text = version.format(repo=repo, name=repo.name) if isinstance(version, str) else version
    record = {"checked": time.time(), "version": text, "index": index_source.source()}
    (cache / "latest-sglang.json").write_text(json.dumps(record))
    assert latest_release(cache) == "0.8.0"
    tree = resolve_spec("latest", cache)
    assert tree.version == "0.8.0" and tree.root == index_source.release_dir(cache, "0.8.0")


def test_a_cached_latest_of_another_index_is_looked_up_again(fake_index, tmp_path):
    fake_index.add("0.8.0")
    cache = tmp_path / "cache"
    cache.mkdir()
    record = {"checked": time.time(), "version": "0.7.0", "index": "https://elsewhere/simple"}
    (cache / "latest-sglang.json").write_text(json.dumps(record))
    assert latest_release(cache) == "0.8.0"


def _swap(cache: Path, source: str, target: str, keep: str | None = None) -> None:
    """Put the unpack of `source` where `target`'s is (keeping `target`'s file `keep`)."""
    src, dest = index_source.release_dir(cache, source), index_source.release_dir(cache, target)
    kept = (dest / keep).read_bytes() if keep else None
    shutil.rmtree(dest)
    shutil.copytree(src, dest)
    if kept is not None:
        (dest / keep).write_bytes(kept)


@pytest.mark.parametrize(
    "swap",
    [
        lambda cache: _swap(cache, "1.0.0", "1.1.0"),  # the whole folder
        lambda cache: _swap(cache, "1.0.0", "1.1.0", keep=".driftaudit-complete"),
        lambda cache: (  # a folder of an older driftaudit: the record is the wheel's name
            _swap(cache, "1.0.0", "1.1.0"),
            (index_source.release_dir(cache, "1.1.0") / ".driftaudit-complete").write_text(
                "sglang-1.0.0-py3-none-any.whl\n"
            ),
        ),
        lambda cache: (  # the package alone, with a manifest made for it
            shutil.rmtree(index_source.release_dir(cache, "1.1.0") / "sglang"),
            shutil.copytree(
                index_source.release_dir(cache, "1.0.0") / "sglang",
                index_source.release_dir(cache, "1.1.0") / "sglang",
            ),
            (index_source.release_dir(cache, "1.1.0") / ".driftaudit-manifest.json").unlink(),
        ),
    ],
    ids=["folder", "files-and-manifest", "legacy-record", "package-only"],
)
def test_a_cached_release_is_the_release_it_is_filed_under(fake_index, capsys, tmp_path, swap):
    fake_index.add("1.0.0", files={"sglang/__init__.py": "", "sglang/api.py": "def f(a): ...\n"})
    fake_index.add("1.1.0", files={"sglang/__init__.py": "", "sglang/api.py": "def f(b): ...\n"})
    cache = tmp_path / "cache"
    resolve_spec("1.0.0", cache)
    resolve_spec("1.1.0", cache)
    swap(cache)
    tree = resolve_spec("1.1.0", cache)
    assert len(fake_index.downloads()) == 3, "the swapped release was read as 1.1.0"
    assert "cached sglang 1.1.0 is damaged" in capsys.readouterr().err
    assert (tree.root / "sglang" / "api.py").read_text() == "def f(b): ...\n"
    assert tree.version == "1.1.0"


def test_a_wheel_that_holds_another_release_is_refused(fake_index, tmp_path):
    fake_index.add("1.1.0", metadata_version="1.0.0")
    with pytest.raises(Exception, match="holds sglang 1.0.0, not 1.1.0"):
        resolve_spec("1.1.0", tmp_path / "cache")
    assert not index_source.release_dir(tmp_path / "cache", "1.1.0").exists()


def test_old_latest_is_a_release(fake_index, capsys, tmp_path):
    consumer = write_tree(tmp_path / "c", {"app.py": "import sglang.m0\n"})
    fake_index.add("1.0.0")
    fake_index.add("1.1.0")
    for old, new in (("latest", "1.0.0"), ("LATEST", "latest")):
        argv = ["compare", "--old", old, "--new", new, "--format", "json", str(consumer)]
        code = main([*argv, "--cache-dir", str(tmp_path / "k")])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert json.loads(out.out)["old"]["version"] == "1.1.0"


def test_latest_in_the_consumers_config_is_a_release(fake_index, capsys, tmp_path):
    pyproject = '[tool.driftaudit]\nold = "1.0.0"\nnew = "latest"\n'
    consumer = write_tree(
        tmp_path / "c", {"app.py": "import sglang.m0\n", "pyproject.toml": pyproject}
    )
    fake_index.add("1.0.0")
    fake_index.add("1.1.0")
    code = main(["check", "--format", "json", "--cache-dir", str(tmp_path / "k"), str(consumer)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert json.loads(out.out)["new"]["version"] == "1.1.0"


# ---- trees without a dist-info ----------------------------------------------------------

_SCM_VERSION_PY = """\
try:
    from sglang._version import __version__, __version_tuple__
except ImportError:
    try:
        import importlib.metadata

        __version__ = importlib.metadata.version("sglang")
    except Exception:
        __version__ = "0.0.0.dev0"
"""


@pytest.mark.parametrize(
    ("files", "version"),
    [
        ({"sglang/version.py": '__version__ = "0.5.2"\n'}, "0.5.2"),
        ({"sglang/version.py": _SCM_VERSION_PY}, None),  # a checkout never built
        (
            {
                "sglang/version.py": _SCM_VERSION_PY,
                "sglang/_version.py": (  # setuptools-scm's template
                    "version: str\n__version__: str\n"
                    '__version__ = version = "0.5.14"\n'
                    "__version_tuple__ = version_tuple = (0, 5, 14)\n"
                ),
            },
            "0.5.14",
        ),
        ({"sglang/_version.py": "version = __version__ = '0.5.9'\n"}, "0.5.9"),  # older one
        ({"sglang/_version.py": '__version__: str = "0.5.10rc0"\n'}, "0.5.10rc0"),
        ({"sglang/_version.py": '__version__ = version = "0.0.0.dev9596+g29b7f22d8"\n'}, None),
        (
            {
                "sglang/version.py": _SCM_VERSION_PY,
                "pyproject.toml": '[project]\nversion = "0.5.1"\n',
            },
            "0.5.1",
        ),
        (
            {
                "sglang/version.py": _SCM_VERSION_PY,
                "pyproject.toml": '[project]\ndynamic = ["version"]\nversion = "9"\n',
            },
            None,
        ),
    ],
    ids=[
        "literal",
        "scm-unbuilt",
        "scm-built",
        "scm-older",
        "annotated",
        "scm-fallback",
        "pyproject",
        "pyproject-dynamic",
    ],  # fmt: skip
)
def test_a_tree_without_dist_info_is_versioned_from_itself(tmp_path, files, version):
    root = write_tree(tmp_path / "python", {"sglang/__init__.py": "", **files})
    assert resolve_spec(str(root), tmp_path / "cache").version == version


def _sglang_repo(path: Path) -> Path:
    """A repository laid out as sglang's since 0.5.9: no version literal in the tree."""
    repo = write_tree(
        path,
        {
            "python/sglang/__init__.py": "",
            "python/sglang/version.py": _SCM_VERSION_PY,
            "python/pyproject.toml": '[project]\nname = "sglang"\ndynamic = ["version"]\n',
        },
    )
    _git(repo, "init", "-q", "-b", "main")
    return repo


def _commit(repo: Path, name: str, tag: str | None = None) -> str:
    write_tree(repo, {f"python/sglang/{name}.py": f"{name} = 1\n"})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", name)
    if tag:
        _git(repo, "tag", "-a", "-m", tag, tag)
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


def test_a_git_ref_is_versioned_as_sglangs_build_versions_it(tmp_path):
    repo = _sglang_repo(tmp_path / "repo")
    _commit(repo, "a", tag="v0.5.9")
    before = _commit(repo, "b")
    _git(repo, "checkout", "-q", "-b", "release/0.5.14")
    _commit(repo, "c", tag="v0.5.14")  # tagged on its release branch, as sglang does
    _git(repo, "checkout", "-q", "main")
    _commit(repo, "d")
    head = _commit(repo, "e")
    cache = tmp_path / "cache"
    assert resolve_spec(f"git:{repo}@v0.5.9", cache).version == "0.5.9"
    assert resolve_spec(f"git:{repo}@v0.5.14", cache).version == "0.5.14"
    # before the release branch: what v0.5.9 holds, one commit on
    assert resolve_spec(f"git:{repo}@{before}", cache).version == f"0.5.10.dev1+g{before[:9]}"
    # main after the release: past 0.5.14, two commits from where it branched
    assert resolve_spec(f"git:{repo}@main", cache).version == f"0.5.15.dev2+g{head[:9]}"
    # the export keeps it: a second resolution reads the record
    assert resolve_spec(f"git:{repo}@main", cache).version == f"0.5.15.dev2+g{head[:9]}"


def test_a_git_ref_without_tags_says_the_checks_it_turns_off(capsys, tmp_path):
    repo = _sglang_repo(tmp_path / "repo")
    _commit(repo, "a")
    packs = write_tree(tmp_path / "packs", {"p.toml": _PACK})
    consumer = write_tree(tmp_path / "c", {"app.py": "import sglang.a\nUSE_OLD_THING = 1\n"})
    argv = ["compare", "--old", f"git:{repo}@HEAD", "--new", f"git:{repo}@HEAD", "--packs"]
    code = main([*argv, str(packs), "--cache-dir", str(tmp_path / "k"), str(consumer)])
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "states no version" in line]
    assert code == 0 and len(warnings) == 2, err
    assert "packs (DA901, DA902) are off" in warnings[0]


_PACK = """\
[pack]
name = "test"
from = "0.5.9"
to = "0.5.14"

[[entry]]
id = "old-thing"
introduced = "0.5.12"
severity = "warning"
message = "USE_OLD_THING is read no more."
evidence = "sglang/a.py (0.5.12)"
pattern = { kind = "text", regex = "USE_OLD_THING" }
"""


def test_packs_apply_to_git_refs_versioned_by_their_tags(capsys, tmp_path):
    """SpecForge on a git spec of 0.5.9 or later: the packs were off without a word."""
    repo = _sglang_repo(tmp_path / "repo")
    _commit(repo, "a", tag="v0.5.9")
    _commit(repo, "b", tag="v0.5.14")
    packs = write_tree(tmp_path / "packs", {"p.toml": _PACK})
    consumer = write_tree(tmp_path / "c", {"app.py": "import sglang.a\nUSE_OLD_THING = 1\n"})
    argv = ["compare", "--old", f"git:{repo}@v0.5.9", "--new", f"git:{repo}@v0.5.14"]
    argv += ["--packs", str(packs), "--format", "json", "--cache-dir", str(tmp_path / "k")]
    code = main([*argv, str(consumer)])
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert (report["old"]["version"], report["new"]["version"]) == ("0.5.9", "0.5.14")
    assert [f["rule"] for f in report["findings"]] == ["DA902"]
    assert "states no version" not in out.err


def test_a_tree_without_metadata_says_dependency_pins_are_unchecked(capsys, tmp_path):
    old = write_tree(
        tmp_path / "old", {"sglang/__init__.py": "", "sglang/version.py": '__version__ = "1.0"\n'}
    )
    new = write_tree(
        tmp_path / "new", {"sglang/__init__.py": "", "sglang/version.py": '__version__ = "1.1"\n'}
    )
    consumer = write_tree(
        tmp_path / "c", {"app.py": "import sglang\n", "requirements.txt": "torch==2.1\n"}
    )
    argv = ["compare", "--old", str(old), "--new", str(new), "--cache-dir", str(tmp_path / "k")]
    assert main([*argv, str(consumer)]) == 0
    err = capsys.readouterr().err
    assert "has no wheel METADATA (Requires-Dist): the consumer's 1 dependency pins" in err
