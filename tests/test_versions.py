"""Release ordering is PEP 440's (packaging): rc, post, dev and local versions."""

from __future__ import annotations

import pytest

from driftaudit.errors import DriftauditError
from driftaudit.versions import in_range, parse_version


def test_order_of_pre_post_dev_and_local_releases():
    ordered = [
        "0.5.9",
        "0.5.10.dev0",
        "0.5.10rc0",
        "0.5.10rc1",
        "0.5.10",
        "0.5.10+cu128",
        "0.5.10.post1",
        "0.5.13.post1",
        "0.5.14.post1.dev0",
        "0.5.14.post1",
        "0.5.14.post2",
        "0.5.100",
    ]
    assert sorted(reversed(ordered), key=parse_version) == ordered
    assert parse_version("v0.5.14") == parse_version("0.5.14")


@pytest.mark.parametrize(
    ("version", "lower", "upper", "inside"),
    [
        ("0.5.10rc0", "0.5.9", "0.5.10", True),  # a release candidate of the upper bound
        ("0.5.10rc0", "0.5.10rc0", "0.5.14", False),  # the lower bound is excluded
        ("0.5.14", "0.5.9", "0.5.14.post1.dev0", True),  # a dev tree after 0.5.14
        ("0.5.14.post1", "0.5.9", "0.5.14.post1.dev0", False),
        ("0.5.14", "0.5.14rc2", "0.5.14+local", True),
        ("0.5.13.post1", "0.5.13", "0.5.14", True),
    ],
)
def test_in_range(version, lower, upper, inside):
    assert in_range(version, lower, upper) is inside


@pytest.mark.parametrize("text", ["main", "0.5.x", "", "1.0-beta-final", "9" * 5000 + "a"])
def test_invalid_versions_are_a_clear_error(text):
    with pytest.raises(DriftauditError, match="is not a valid PEP 440 version") as error:
        parse_version(text, "sglang version")
    assert str(error.value).startswith("sglang version ") and len(str(error.value)) < 200


def test_a_tree_with_an_invalid_version_exits_2(tmp_path, capsys):
    from driftaudit.cli import main

    from .conftest import write_tree

    for name, version in (("old", "0.5.9"), ("new", "main-branch")):
        write_tree(
            tmp_path / name,
            {"sglang/__init__.py": "", "sglang/version.py": f"__version__ = {version!r}\n"},
        )
    write_tree(tmp_path / "consumer", {"app.py": "import sglang\n"})
    argv = ["compare", "--cache-dir", str(tmp_path / "cache"), "--old", str(tmp_path / "old")]
    code = main([*argv, "--new", str(tmp_path / "new"), str(tmp_path / "consumer")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "'main-branch' is not a valid PEP 440 version" in err
    assert str(tmp_path / "new") in err
