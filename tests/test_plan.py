"""`driftaudit plan`: the findings of an upgrade over five tiny sglang releases on a
loopback index (tests/fake_index.py), grouped by the release that brings them, and the
steps: a function that warned already in the first release and is gone in the second
(moved off before upgrading), a parameter removed in the second, a class moved in the
third, a function that warns from the third and is gone in the fifth (moved off on the
fourth)."""

from __future__ import annotations

import json

import pytest

from driftaudit.cli import main
from driftaudit.codes import CODES
from driftaudit.findings import Finding
from driftaudit.history.plan import build_plan

from .conftest import write_tree
from .report_schemas import assert_valid

_INIT = {"sglang/__init__.py": "", "sglang/srt/__init__.py": ""}
_WARN = "    warnings.warn('{name} is deprecated, use {use}', DeprecationWarning)\n"
_RUN = {1: "def run(a, b=1):\n    return a\n", 2: "def run(a):\n    return a\n"}
_OLDEST = "def oldest(x):\n" + _WARN.format(name="oldest", use="keep") + "    return x\n"
_LEGACY = {
    "plain": "def legacy(x):\n    return x\n",
    "warns": "def legacy(x):\n" + _WARN.format(name="legacy", use="modern") + "    return x\n",
}
_MODERN = "def modern(x):\n    return x\n"
_KEEP = "def keep(x):\n    return x\n"
_ENGINE = "class Engine:\n    def __init__(self, path: str):\n        self.path = path\n"


def _api(*parts: str) -> str:
    return "import warnings\n\n\n" + "\n\n".join(parts)


def _release(api: str, moved: bool) -> dict[str, str]:
    engine = {"sglang/srt/engine.py": _ENGINE}
    if moved:
        engine = {"sglang/srt/runtime/__init__.py": "", "sglang/srt/runtime/engine.py": _ENGINE}
    return {**_INIT, "sglang/srt/api.py": api, **engine}


RELEASES = {
    "1.0.0": _release(_api(_RUN[1], _OLDEST, _LEGACY["plain"], _KEEP), moved=False),
    "1.1.0": _release(_api(_RUN[2], _LEGACY["plain"], _KEEP), moved=False),
    "1.2.0": _release(_api(_RUN[2], _LEGACY["warns"], _MODERN, _KEEP), moved=True),
    "1.3.0": _release(_api(_RUN[2], _LEGACY["warns"], _MODERN, _KEEP), moved=True),
    "1.4.0": _release(_api(_RUN[2], _MODERN, _KEEP), moved=True),
}
CONSUMER = {
    "app/__init__.py": "",
    "app/main.py": (
        "from sglang.srt.api import run, keep, legacy, oldest\n"
        "from sglang.srt.engine import Engine\n\n"
        "run(1, b=2)\nkeep(3)\nlegacy(4)\noldest(5)\nEngine('x')\n"
    ),
}


@pytest.fixture
def consumer(fake_index, tmp_path):
    for version, files in RELEASES.items():
        fake_index.add(version, files=files)
    return write_tree(tmp_path / "consumer", CONSUMER)


def _plan(tmp_path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(tmp_path / "cache"), "plan", *args, "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def _symbols(facts: list[dict]) -> list[str]:
    return sorted(f["symbol"].rsplit(".", 1)[-1] for f in facts)


def test_the_plan_groups_by_release_and_stops_where_a_deprecated_spelling_works(
    consumer, tmp_path, capsys
):
    span = ("--old", "1.0.0", "--new", "1.4.0", str(consumer))
    code, out, _ = _plan(tmp_path, capsys, *span, "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert_valid("plan", document)
    assert document["schema_version"] == 1
    assert document["releases"] == ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"]
    by_release = {row["release"]: row for row in document["by_release"]}
    assert list(by_release) == ["1.1.0", "1.2.0", "1.4.0"]
    assert by_release["1.1.0"]["facts"] == 2  # run's b and oldest, both gone in 1.1.0
    assert by_release["1.2.0"]["facts"] == 1 and by_release["1.4.0"]["facts"] == 1

    steps = document["steps"]
    # oldest warned in 1.0.0 and is gone in 1.1.0: moved off before upgrading; legacy
    # warns from 1.2.0 and is gone in 1.4.0: moved off on 1.3.0, the last release before
    assert [(s["from"], s["to"]) for s in steps] == [
        ("1.0.0", "1.0.0"),
        ("1.0.0", "1.3.0"),
        ("1.3.0", "1.4.0"),
    ]
    stay, upgrade, last = steps
    assert stay["fix_command"] is None and stay["breaks"] == 0
    assert _symbols(stay["moves"]) == ["oldest"]
    assert _symbols(upgrade["break_facts"]) == ["Engine", "run"]
    assert upgrade["breaks"] == 2 and sum(upgrade["by_code"].values()) == 2
    assert upgrade["autofixable"] == sum(f["autofixable"] for f in upgrade["break_facts"])
    assert upgrade["autofixable"] >= 1  # the moved class's import is rewritten
    assert _symbols(upgrade["moves"]) == ["legacy"]
    assert upgrade["moves"][0]["deprecated"] == "1.2.0"
    assert upgrade["moves"][0]["introduced"] == "1.4.0"
    assert upgrade["fix_command"] == f"driftaudit fix --old 1.0.0 --new 1.3.0 {consumer}"
    assert last["breaks"] == 0 and last["moves"] == []
    assert document["undated"] == []


def test_the_plan_on_the_console(consumer, tmp_path, capsys):
    code, out, _ = _plan(tmp_path, capsys, "--old", "1.0.0", "--new", "1.4.0", str(consumer))
    assert code == 0
    assert "5 facts" not in out and "4 facts over 4 releases; 3 steps" in out
    assert "Step 1: stay on 1.0.0" in out
    assert "Step 2: 1.0.0 -> 1.3.0  2 facts break" in out
    assert f"fix: driftaudit fix --old 1.0.0 --new 1.3.0 {consumer}" in out
    assert "then, on 1.3.0, move off (the old spelling still works):" in out
    assert "deprecated since 1.2.0, gone in 1.4.0" in out
    assert "Step 3: 1.3.0 -> 1.4.0  0 facts break, 0 autofixable" in out
    code, markdown, _ = _plan(
        tmp_path, capsys, "--old", "1.0.0", "--new", "1.4.0", str(consumer), "--format", "markdown"
    )
    assert code == 0 and "### Step 2: 1.0.0 → 1.3.0" in markdown


def test_the_fix_of_a_step_fixes_its_upgrade_only(consumer, tmp_path, capsys):
    """The command a step prints: the breaks of 1.0.0 -> 1.3.0, not legacy's removal."""
    argv = ["--cache-dir", str(tmp_path / "cache"), "fix", str(consumer), "-q"]
    code = main([*argv, "--old", "1.0.0", "--new", "1.3.0"])
    diff = capsys.readouterr().out
    changed = [
        line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert code == 1 and changed == [
        "-from sglang.srt.engine import Engine",
        "+from sglang.srt.runtime.engine import Engine",
    ]


def test_the_plan_needs_two_releases_of_the_index(consumer, tmp_path, capsys):
    # a directory that states its version is still not a release of the index
    stated = {"sglang/version.py": '__version__ = "1.0.0"\n'}
    old = write_tree(tmp_path / "old", {**RELEASES["1.0.0"], **stated})
    code, out, err = _plan(tmp_path, capsys, "--old", str(old), "--new", "1.4.0", str(consumer))
    assert code == 2 and out == ""
    assert err.startswith("driftaudit: error: plan needs two releases of the index: --old ")
    assert err.count("\n") == 1 and "is a directory" in err
    code, out, err = _plan(tmp_path, capsys, "--old", "1.4.0", "--new", "1.4.0", str(consumer))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err == "driftaudit: error: plan needs two releases: --old and --new are both 1.4.0\n"


def _finding(line: int, introduced: str | None, deprecated: str | None = None) -> Finding:
    return Finding(
        CODES["DA101"], "a.py", line, 0, f"sglang.x.f{line}", f"m{line}",
        introduced=introduced, deprecated=deprecated, dated=True,
    )  # fmt: skip


def test_the_stops_are_the_fewest_that_hold_every_window():
    releases = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5"]
    findings = [
        _finding(1, "1.3", "1.0"),  # window [1.0, 1.3)
        _finding(2, "1.2", "1.1"),  # [1.1, 1.2): 1.1 holds both
        _finding(3, "1.4", "1.2"),  # [1.2, 1.4): 1.3
        _finding(4, "1.5", "1.5"),  # warned only once it broke: no window
        _finding(5, "1.2"),
        _finding(6, None),
        _finding(7, "0.9"),  # a pack entry's release, before old: the first upgrade has it
    ]
    plan = build_plan(findings, releases)
    assert [(s.start, s.stop) for s in plan.steps] == [
        ("1.0", "1.1"),
        ("1.1", "1.3"),
        ("1.3", "1.5"),
    ]
    first, second, third = plan.steps
    assert [f.lead.line for f in first.breaks] == [7]
    assert [f.lead.line for f in first.moves] == [1, 2]
    assert [f.lead.line for f in second.breaks] == [5]
    assert [f.lead.line for f in second.moves] == [3]
    assert [f.lead.line for f in third.breaks] == [4]
    assert [f.lead.line for f in plan.undated] == [6]
    assert [(v, len(facts)) for v, facts in plan.by_release()] == [
        ("1.1", 1), ("1.2", 2), ("1.3", 1), ("1.4", 1), ("1.5", 1),
    ]  # fmt: skip
