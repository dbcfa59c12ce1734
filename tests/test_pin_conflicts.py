"""DA004: the consumer's sglang pins that cannot all hold, as one fact (the fixture
tests/fixtures/codes/DA004 covers the near misses through the command line)."""

from __future__ import annotations

from pathlib import Path

from driftaudit.findings import group_facts
from driftaudit.match.pin_conflicts import pin_conflict_findings
from driftaudit.usage.pins import read_pin, read_pins

from .conftest import write_tree

SETUP = """\
from setuptools import setup

SGLANG_REQUIRES = [
    "sglang[srt,openai]==0.5.6",
]
setup(name="x", extras_require={"sglang": SGLANG_REQUIRES})
"""


def places(root: Path, old: str | None) -> list[tuple[str, int, str]]:
    found = pin_conflict_findings(read_pins(root), old)
    assert len(group_facts(found)) == (1 if found else 0), "one fact"
    return [(f.path, f.line, f.severity) for f in group_facts(found)[0]] if found else []


def test_a_stale_requirements_file_beside_the_extra_and_the_image(tmp_path):
    """The first pin gives --old; the extra and the image pin other releases, each in
    an environment of its own: warnings that say the audit does not cover them."""
    write_tree(
        tmp_path,
        {
            "requirements_sglang.txt": "torch==2.8.0\nsglang[all]==0.5.2\n",
            "setup.py": SETUP,
            "docker/Dockerfile.stable.sglang": "FROM lmsysorg/sglang:v0.5.6.post2\n",
        },
    )
    assert read_pin(tmp_path) == ("0.5.2", "requirements_sglang.txt:2")
    found = pin_conflict_findings(read_pins(tmp_path), "0.5.2")
    assert [(f.path, f.line, f.severity) for f in found] == [
        ("setup.py", 4, "warning"),
        ("docker/Dockerfile.stable.sglang", 1, "warning"),
    ]
    assert "`sglang==0.5.6` (extra `sglang`)" in found[0].message
    assert "the audited `sglang==0.5.2` at requirements_sglang.txt:2" in found[0].message
    assert found[0].fix is not None and "--old 0.5.6" in found[0].fix.description
    assert "--old 0.5.6.post2" in found[1].fix.description


def test_one_environment_is_an_error_and_leads_the_fact(tmp_path):
    write_tree(
        tmp_path,
        {
            "requirements.txt": "-r requirements-base.txt\nsglang==0.5.6\n",
            "requirements-base.txt": "sglang==0.5.4\n",
            "requirements-rocm.txt": "sglang==0.5.5\n",
            "requirements-z.txt": "sglang==0.5.3\n",
        },
    )
    # files are read in name order: the reference is the pin of the audited release
    assert places(tmp_path, "0.5.6") == [
        ("requirements-base.txt", 1, "error"),  # the worst place leads
        ("requirements-rocm.txt", 1, "warning"),
        ("requirements-z.txt", 1, "warning"),
    ]


def test_an_explicit_old_that_no_pin_holds_reports_the_pins_that_disagree(tmp_path):
    write_tree(
        tmp_path,
        {"requirements.txt": "sglang==0.5.2\n", "requirements-b.txt": "sglang>=0.5.4\n"},
    )
    found = pin_conflict_findings(read_pins(tmp_path), "0.5.9")
    assert len(found) == 1  # 0.5.9 satisfies `>=0.5.4`: the reference
    write_tree(tmp_path, {"requirements-b.txt": "sglang==0.5.6\n"})
    found = pin_conflict_findings(read_pins(tmp_path), "0.5.9")
    assert [(f.path, f.severity) for f in found] == [
        ("requirements-b.txt", "warning"),
        ("requirements.txt", "warning"),
    ]
    assert "audited" not in found[0].message and "requirements.txt:1" in found[0].message


def test_pins_that_agree_stay_silent(tmp_path):
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\ndependencies = ["sglang[all]==0.5.6"]\n',
            "requirements.txt": (
                "sglang==0.5.6\nsglang>=0.5.6\nsglang==0.5.6.0\nsglang~=0.5.0\n"
                "# sglang==0.5.1\n"
                'sglang==0.5.1; sys_platform == "darwin"\n'
                "sglang===0.5.1-custom\n"  # cannot be told: not reported
            ),
            "Dockerfile": "# FROM lmsysorg/sglang:v0.5.1\nFROM lmsysorg/sglang:v0.5.6-cu129\n",
        },
    )
    assert places(tmp_path, "0.5.6") == []
    assert places(tmp_path, None) == []  # no version known: the first exact pin


def test_a_post_release_is_another_release(tmp_path):
    write_tree(tmp_path, {"requirements.txt": "sglang==0.5.6\nsglang==0.5.6.post1\n"})
    assert places(tmp_path, "0.5.6") == [("requirements.txt", 2, "error")]


def test_a_requirements_file_of_its_own_is_another_way_to_install(tmp_path):
    """`requirements-rocm.txt` beside the project's metadata (SpecForge's layout): an
    environment of its own, not one install with the project's dependencies."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["sglang==0.5.9"]\n',
            "requirements-rocm.txt": "sglang==0.5.4\n",
        },
    )
    (found,) = pin_conflict_findings(read_pins(tmp_path), "0.5.9")
    assert (found.path, found.severity) == ("requirements-rocm.txt", "warning")
    assert "this audit does not cover it" in found.message


def test_the_projects_metadata_files_are_one_install(tmp_path):
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["sglang==0.5.9"]\n',
            "setup.py": 'from setuptools import setup\nsetup(install_requires=["sglang==0.5.4"])\n',
        },
    )
    (found,) = pin_conflict_findings(read_pins(tmp_path), "0.5.9")
    assert (found.path, found.severity) == ("setup.py", "error")
    assert "both are the project's metadata" in found.message


def test_separate_environments_are_offered_as_a_supported_range(tmp_path):
    """The range spans the releases the exact pins name, never the audited release an
    --old given by hand names (no environment runs it); an error offers none."""
    write_tree(
        tmp_path,
        {
            "docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.16\n",
            "docker/Dockerfile.rocm": "FROM lmsysorg/sglang:v0.5.10-rocm630\n",
        },
    )
    for old in ("0.5.16", "0.5.22"):
        found = pin_conflict_findings(read_pins(tmp_path), old)
        assert found, old
        assert all('`supports = ">=0.5.10,<=0.5.16"`' in f.message for f in found), old
    write_tree(tmp_path, {"requirements.txt": "-r requirements-base.txt\nsglang==0.5.6\n"})
    write_tree(tmp_path, {"requirements-base.txt": "sglang==0.5.4\n"})
    found = pin_conflict_findings(read_pins(tmp_path), "0.5.6")
    errors = [f for f in found if f.severity == "error"]
    assert errors and not any("supports" in f.message for f in errors)


def test_sub_projects_that_disagree_are_separate_environments(tmp_path):
    """No pin at the root: the shallowest sub-project's pin gives --old; another
    sub-project pinning another release is an environment of its own (a warning)."""
    write_tree(
        tmp_path,
        {
            "README.md": "two projects\n",
            "train/pyproject.toml": '[project]\nname = "t"\ndependencies = ["sglang==0.5.2"]\n',
            "serve/api/requirements.txt": "torch==2.8.0\nsglang[all]==0.5.6\n",
        },
    )
    assert read_pin(tmp_path) == ("0.5.2", "train/pyproject.toml:3")
    assert places(tmp_path, "0.5.2") == [("serve/api/requirements.txt", 2, "warning")]
