"""Requirement conflicts with real specifier semantics (packaging), markers evaluated in
the assumed environment; DA507 on a hand-made wheel and DA508 between two of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftaudit.drift.surface_changes import surface_changes
from driftaudit.pipeline import run_compare
from driftaudit.requirements import applies, parse_requirement, satisfiable
from driftaudit.snapshot import Snapshot
from driftaudit.sources.tree import tree_from_root
from driftaudit.store.db import BlobStore

from .conftest import write_tree


@pytest.mark.parametrize(
    ("pin", "required", "compatible"),
    [
        ("==2.9.1", "==2.11.0", False),
        ("==2.9.1+cu128", "==2.9.1", True),  # a local build of the required release
        ("==2.8.0+rocm6.3", "==2.11.0", False),
        # ~= is a range with an upper bound, not >=
        ("==0.7.0", "~=0.6.0", False),
        ("==0.6.5", "~=0.6.0", True),
        ("~=0.6.0", ">=0.7", False),
        ("~=2.2", "<2.3", True),
        ("~=2.2", ">=3.0", False),
        ("~=4.2", ">=4,<5", True),
        # wildcards are ranges too
        ("==2.*", "==3.0", False),
        ("==2.*", ">=2.5,<3", True),
        ("==2.4", "!=2.*", False),
        ("!=2.9.0", "==2.9.0", False),
        ("==2.9.1", "!=2.9.0", True),
        (">=4.0,<5", "==5.8.1", False),  # ranges on both sides are compared as well
        (">=4.0", "<=3.9", False),
        (">1.9", "<2.0", True),
        # pre-releases count only when a specifier names one (as packaging counts them)
        ("==0.5.10rc0", ">=0.5.9", True),
        (">=0.5.9", "==0.5.10rc0", True),
        ("==0.5.10rc0", ">=0.5.9,<0.5.10", False),  # <V excludes V's pre-releases
        ("==1.0.dev0", ">=0.9", True),
        (">=0.0.9.post1", "==0.0.9", False),
        ("==1.0", "==1.0.0", True),
    ],
)
def test_satisfiable(pin, required, compatible):
    assert satisfiable(pin, required) is compatible


def test_what_cannot_be_told():
    assert satisfiable("===weird", "==1.0") is None
    assert satisfiable("==1.0", "@ https://example.com/x.whl") is None
    assert satisfiable("", "") is True


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        (None, True),
        ('python_version < "3.10"', False),  # the assumed environment runs 3.12
        ('python_version >= "3.10"', True),
        ('platform_system == "Linux"', True),
        ('sys_platform == "darwin"', False),
        ('platform_machine == "aarch64" or platform_machine == "arm64"', False),
        ('extra == "dev"', False),
    ],
)
def test_markers_in_the_assumed_environment(marker, expected):
    assert applies(marker) is expected


def test_one_parser_for_every_form():
    requirement = parse_requirement("Foo.Bar[x] (>=1.0, <2) ; python_version < '3.11'")
    assert requirement.name == "Foo.Bar" and str(requirement.specifier) == "<2,>=1.0"
    assert parse_requirement("./local/path") is None
    assert parse_requirement("-r other.txt") is None


def _wheel(root: Path, version: str, requires: list[str], server_args: str = "") -> Path:
    metadata = f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    files = {
        "sglang/__init__.py": "",
        # the snapshot cache keys surfaces by the .py files' digest: make them differ
        "sglang/version.py": f"__version__ = {version!r}\n",
        f"sglang-{version}.dist-info/METADATA": metadata,
    }
    if server_args:
        files["sglang/srt/__init__.py"] = ""
        files["sglang/srt/server_args.py"] = server_args
    return write_tree(root / version, files)


def test_requirement_conflicts_da507(tmp_path: Path):
    old = _wheel(tmp_path, "1.0.0", ["torch==2.9.1", "kernels~=0.14.0"])
    new = _wheel(
        tmp_path,
        "1.1.0",
        [
            "torch==2.11.0",
            "kernels~=0.15.0",
            "flashinfer==0.7.2; platform_machine == 'aarch64'",
            "numpy<2",
            'pytest==9.0; extra == "test"',
        ],
    )
    consumer = write_tree(
        tmp_path / "consumer",
        {
            "requirements.txt": (
                "sglang==1.0.0\n"
                "torch==2.9.1+cu128\n"  # 2: conflicts with ==2.11.0
                "kernels==0.16.0\n"  # 3: not in ~=0.15.0 (read as >= it was accepted)
                "flashinfer==0.6.0\n"  # 4: sglang wants 0.7.2 on aarch64 only
                "numpy==1.26.4\n"  # 5: fine
                "pytest==8.0\n"  # 6: only sglang's `test` extra pins it
                "numpy>=2.0; python_version < '3.10'\n"  # 7: not installed on 3.12
            ),
            "requirements-rocm.txt": "sglang==0.9\ntorch==2.8.0+rocm6.3\n",  # another stack
            "pyproject.toml": '[project]\nname = "c"\ndependencies = [\n  "numpy>=2",\n]\n',
        },
    )
    result = run_compare(consumer, str(old), str(new), tmp_path / "cache")
    conflicts = {(f.path, f.line) for f in result.findings if f.code.code == "DA507"}
    assert conflicts == {
        ("requirements.txt", 2),
        ("requirements.txt", 3),
        ("pyproject.toml", 4),  # numpy>=2 against numpy<2: a range against a range
    }
    by_line = {f.line: f for f in result.findings if f.path == "requirements.txt"}
    assert "`kernels~=0.15.0`" in by_line[3].message


def test_requirement_changes_da508(tmp_path: Path):
    store = BlobStore(tmp_path / "cache.sqlite")
    old_root = _wheel(
        tmp_path,
        "1.0.0",
        ["torch==2.9.1", "kernels (>=0.14.1, <0.15)", "gone>=1", 'pytest==8; extra == "test"'],
    )
    new_root = _wheel(
        tmp_path,
        "1.1.0rc0",
        ["torch==2.11.0", "kernels<0.15,>=0.14.1", "added==1", 'pytest==9; extra == "test"'],
    )
    old = Snapshot(tree_from_root(str(old_root), "directory", old_root), store)
    new = Snapshot(tree_from_root(str(new_root), "directory", new_root), store)
    assert new.tree.version == "1.1.0rc0"
    changes = {c.symbol: c.explain() for c in surface_changes(old, new) if c.code.code == "DA508"}
    assert changes == {
        "torch": "requirement torch: changed (==2.9.1 -> ==2.11.0)",
        "gone": "requirement gone: removed (>=1 -> -)",
        "added": "requirement added: added (- -> ==1)",
    }  # kernels: the same specifier written otherwise; pytest: an extra's pin
