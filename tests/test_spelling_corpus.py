"""The spelling corpus (benchmarks/spelling/): its generator on a real release pair, and
its scoring. The corpus's recall figures are the benchmark's; this checks the instrument:
every case is valid code with its break marked, the spellings driftaudit has long found
are found, and a finding counts only near its break and naming the change."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "spelling"))

import generate  # noqa: E402
import mine  # noqa: E402
import score  # noqa: E402
import spellings  # noqa: E402

OLD, NEW = "0.5.22", "0.5.23"


@pytest.fixture(scope="module")
def corpus(release_cache: Path, tmp_path_factory: pytest.TempPathFactory):
    changes = mine.diff_json(OLD, NEW, release_cache)["changes"]
    old_root = release_cache / "sources" / f"sglang-{OLD}"
    new_root = release_cache / "sources" / f"sglang-{NEW}"
    targets = mine.targets(changes, old_root, per_kind=1, new_tree=new_root)
    targets += mine.newly_read(old_root, new_root, per_kind=1)
    root = tmp_path_factory.mktemp("spelling")
    cases = generate.write(targets, root)
    findings = score.driftaudit_findings(root, OLD, NEW, release_cache)
    return targets, root, cases, findings


def test_every_breaking_kind_is_mined_with_its_old_signature(corpus) -> None:
    targets, *_ = corpus
    assert {t.kind for t in targets} == {*mine.KINDS, mine.READ_KIND}
    for target in targets:
        if target.kind in mine.PARAM_KINDS:
            assert target.param
            assert set(target.params) <= set(target.old_params)
            if target.kind != "required-parameter-added":
                assert target.param in target.old_params  # the old call passes it
    # every template group is reached: constructors and dataclasses too
    assert {t.group for t in targets} == set(generate.GROUPS)
    for target in targets:
        if target.group == "constructor":
            assert target.qualname[-1] == "__init__"
        if target.group == "dataclass":
            assert len(target.qualname) == 1 and target.old_params


def test_a_newly_read_member_is_one_the_old_callee_did_not_read(corpus) -> None:
    targets, *_ = corpus
    read = [t for t in targets if t.kind == mine.READ_KIND]
    assert {t.stand_in_group for t in read} == {
        "function",
        "constructor",
        "method",
        "method_arg",
        "installed",
    }
    for target in read:
        assert target.member and target.member not in target.read
        assert target.names == {target.member}
        assert (target.param == "self") == (target.stand_in_group in ("method", "installed"))
        assert bool(target.holder) == (target.stand_in_group == "installed")


def test_stand_in_spellings_are_found(corpus) -> None:
    _, _, cases, findings = corpus
    stand_ins = [(c, h) for c, h in zip(cases, score.driftaudit_hits(cases, findings), strict=True)]
    stand_ins = [(c, h) for c, h in stand_ins if c.target.kind == mine.READ_KIND]
    assert stand_ins and all(hit for _, hit in stand_ins), [
        (c.file, c.spelling) for c, hit in stand_ins if not hit
    ]


def test_near_misses_are_written_parse_and_mark_no_break(corpus) -> None:
    targets, root, cases, findings = corpus
    near = generate.near_files(targets, root)
    assert {t.group for t in near.values()} == set(generate.GROUPS)
    for path in near:
        text = (root / path).read_text()
        ast.parse(text)
        assert "# BREAK" not in text
    assert score.false_findings(near, findings) == []


def test_each_case_parses_and_marks_its_break(corpus) -> None:
    targets, root, cases, _ = corpus
    for target in targets:
        assert {c.spelling for c in cases if c.target is target} == set(generate.templates(target))
    for case in cases:
        text = (root / case.file).read_text()
        ast.parse(text)
        assert text.splitlines()[case.line - 1].endswith("# BREAK")


def test_the_direct_spellings_are_found(corpus) -> None:
    _, _, cases, findings = corpus
    hits = score.driftaudit_hits(cases, findings)
    direct = {"direct", "annotated_param"}
    found = {(c.target.kind, c.spelling): h for c, h in zip(cases, hits, strict=True)}
    for (kind, spelling), hit in found.items():
        if spelling in direct:
            assert hit, (kind, spelling)


def test_a_hit_is_near_its_break_and_names_the_change() -> None:
    target = mine.Target("symbol-removed", "sglang.m.gone", "sglang.m", ["gone"])
    case = generate.Case(target, "direct", "pkg/case.py", 10)
    near = {"path": "pkg/case.py", "line": 12, "symbol": "sglang.m.gone", "message": ""}
    far = dict(near, line=14)
    other = dict(near, symbol="sglang.m.gone_too", message="`gone_too` was removed")
    elsewhere = dict(near, path="pkg/other.py")
    assert score.driftaudit_hits([case], [near]) == [True]
    assert score.driftaudit_hits([case], [far, other, elsewhere]) == [False]
    assert score.checker_hits([case], {("pkg/case.py", 7)}) == [True]
    assert score.checker_hits([case], {("pkg/case.py", 6), ("pkg/x.py", 10)}) == [False]


def test_an_override_of_a_removed_optional_parameter_is_no_case() -> None:
    """sglang stops passing an optional parameter: a mirror taking it still works."""
    optional = mine.Target(
        "keyword-removed", "sglang.m.C.f", "sglang.m", ["C", "f"], "opt", ["a"], ["a", "opt"]
    )
    required = mine.Target(
        "keyword-removed", "sglang.m.C.f", "sglang.m", ["C", "f"], "a", ["a"], ["a", "opt"]
    )
    assert not {"override", "stand_in"} & set(generate.templates(optional))
    assert {"override", "stand_in"} <= set(generate.templates(required))
    assert "def f(self, a, opt=None):  # BREAK" in generate._fill(
        spellings.METHOD["override"], required, "x"
    )


def test_a_finding_in_a_near_miss_file_naming_the_change_is_false() -> None:
    target = mine.Target("symbol-removed", "sglang.m.gone", "sglang.m", ["gone"])
    near = {"pkg/near_000_x.py": target}
    naming = {"path": "pkg/near_000_x.py", "line": 3, "symbol": "sglang.m.gone", "message": ""}
    other = dict(naming, symbol="sglang.m.kept", message="`kept` changed")
    elsewhere = dict(naming, path="pkg/case_000_x.py")
    assert len(score.false_findings(near, [naming, other, elsewhere])) == 1


def test_the_table_marks_a_string_spelling_no_checker_found() -> None:
    target = mine.Target("symbol-removed", "sglang.m.gone", "sglang.m", ["gone"])
    cases = [generate.Case(target, s, "f.py", 1) for s in ("mock_patch", "importlib", "direct")]
    text = score.table(
        cases, {"driftaudit": [True] * 3, "ty": [False, True, True]}, spellings.STRING_SPELLINGS
    )
    assert "mock_patch (string: no checker sees it)" in text
    assert "importlib (string" not in text  # a checker found it: not marked
    assert "**1.00** | **0.67**" in text
