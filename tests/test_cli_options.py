"""The options ruff users reach for: rule selection (command line and config),
per-file-ignores, --config and config discovery, --statistics, --show-fixes,
--output-format and the GitLab Code Quality report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from driftaudit.cli import main
from driftaudit.codes import CODES, selected
from driftaudit.report.gitlab import SEVERITY

from .conftest import FIXTURES, write_tree

CASE = FIXTURES / "themes" / "calls"
SOURCE = (CASE / "consumer" / "calls.py").read_text()


def _run(capsys, tmp_path, *extra, consumer=CASE / "consumer", command="compare"):
    argv = [command, "--old", str(CASE / "old"), "--new", str(CASE / "new"), "-q"]
    code = main([*argv, "--cache-dir", str(tmp_path / "cache"), str(consumer), *extra])
    return code, capsys.readouterr()


def _findings(capsys, tmp_path, *extra, consumer=CASE / "consumer"):
    code, out = _run(capsys, tmp_path, "--format", "json", *extra, consumer=consumer)
    assert code in (0, 1), out.err
    return json.loads(out.out)["findings"]


def _codes(findings) -> set[str]:
    return {f["rule"] for f in findings}


@pytest.fixture
def everything(capsys, tmp_path):
    found = _findings(capsys, tmp_path)
    assert len(_codes(found)) >= 3  # the case must hold several codes to select among
    return found


def test_select_and_ignore_take_codes_and_prefixes(capsys, tmp_path, everything):
    codes = _codes(everything)
    one = sorted(codes)[0]
    assert _codes(_findings(capsys, tmp_path, "--select", one)) == {one}
    rest = codes - {one}
    assert _codes(_findings(capsys, tmp_path, "--ignore", one.lower())) == rest
    # comma-separated and repeated read alike
    two = sorted(codes)[:2]
    assert _codes(_findings(capsys, tmp_path, "--select", ",".join(two))) == set(two)
    repeated = _findings(capsys, tmp_path, "--select", two[0], "--select", two[1])
    assert _codes(repeated) == set(two)
    # the most specific prefix wins, as in ruff
    family = one[:3]
    assert _codes(_findings(capsys, tmp_path, "--select", family, "--ignore", one)) == {
        c for c in codes if c.startswith(family) and c != one
    }
    assert _codes(_findings(capsys, tmp_path, "--select", one, "--ignore", family)) == {one}


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_an_unknown_code_is_one_line(capsys, tmp_path, option):
    code, out = _run(capsys, tmp_path, option, "DA2,DA88")
    assert code == 2
    assert "'DA88'" in out.err and option in out.err and len(out.err.strip().splitlines()) == 1


def test_selected_is_ruffs_specificity():
    assert selected("DA201", None, None) and not selected("DA201", ["DA1"], None)
    assert not selected("DA201", ["DA2"], ["DA201"]) and selected("DA202", ["DA2"], ["DA201"])
    assert selected("DA201", ["DA201"], ["DA2"]) and not selected("DA201", ["DA2"], ["DA2"])
    assert not selected("DA201", None, ["DA"])


def _consumer(tmp_path, config: str, name="driftaudit.toml", **files) -> Path:
    return write_tree(tmp_path / "c", {name: config, "calls.py": SOURCE, **files})


def test_config_selection_and_the_command_line_over_it(capsys, tmp_path, everything):
    codes = sorted(_codes(everything))
    first, second = codes[0], codes[1]
    consumer = _consumer(tmp_path, f'select = ["{first}"]\nignore = ["{second}"]\n')
    assert _codes(_findings(capsys, tmp_path, consumer=consumer)) == {first}
    wider = _findings(capsys, tmp_path, "--extend-select", second, consumer=consumer)
    assert _codes(wider) == {first}  # the config's ignore still holds
    third = codes[2]
    wider = _findings(capsys, tmp_path, "--extend-select", third, consumer=consumer)
    assert _codes(wider) == {first, third}
    # --select starts again: the config's select and ignore no longer count
    assert _codes(_findings(capsys, tmp_path, "--select", second, consumer=consumer)) == {second}
    # and --ignore adds to the config's
    assert _findings(capsys, tmp_path, "--ignore", first, consumer=consumer) == []


def test_config_extend_select_and_a_bad_code_in_it(capsys, tmp_path, everything):
    codes = sorted(_codes(everything))
    consumer = _consumer(tmp_path, f'select = ["{codes[0]}"]\nextend-select = ["{codes[1]}"]\n')
    assert _codes(_findings(capsys, tmp_path, consumer=consumer)) == set(codes[:2])
    (consumer / "driftaudit.toml").write_text('ignore = ["DA2", "XY1"]\n')
    code, out = _run(capsys, tmp_path, consumer=consumer)
    assert code == 2 and "'XY1'" in out.err and "ignore" in out.err
    assert len(out.err.strip().splitlines()) == 1


def test_per_file_ignores(capsys, tmp_path, everything):
    one = sorted(_codes(everything))[0]
    consumer = _consumer(
        tmp_path,
        f'[per-file-ignores]\n"tests/*" = ["DA"]\n"calls.py" = ["{one}"]\n',
        **{"tests/deep/calls.py": SOURCE, "other/calls.py": SOURCE},
    )
    found = _findings(capsys, tmp_path, consumer=consumer)
    by_path = {p: _codes(f for f in found if f["path"] == p) for p in {f["path"] for f in found}}
    assert "tests/deep/calls.py" not in by_path  # every code ignored under tests/
    # a pattern without a slash matches the name anywhere, as in gitignore and ruff
    assert by_path["calls.py"] == by_path["other/calls.py"] == _codes(everything) - {one}
    (consumer / "driftaudit.toml").write_text('[per-file-ignores]\n"!other/*" = ["DA"]\n')
    found = _findings(capsys, tmp_path, consumer=consumer)
    assert found and {f["path"] for f in found} == {"other/calls.py"}
    (consumer / "driftaudit.toml").write_text('[per-file-ignores]\n"x/*" = "DA2"\n')
    code, out = _run(capsys, tmp_path, consumer=consumer)
    assert code == 2 and "must be a list of strings" in out.err


def test_config_file_option(capsys, tmp_path, everything):
    one = sorted(_codes(everything))[0]
    consumer = _consumer(tmp_path, 'select = ["DA"]\n')
    settings = write_tree(
        tmp_path / "elsewhere",
        {"pyproject.toml": f'[tool.driftaudit]\nselect = ["{one}"]\n'},
    )
    found = _findings(
        capsys, tmp_path, "--config", str(settings / "pyproject.toml"), consumer=consumer
    )
    assert _codes(found) == {one}
    (settings / "any.toml").write_text(f'ignore = ["{one}"]\n')
    found = _findings(capsys, tmp_path, "--config", str(settings / "any.toml"), consumer=consumer)
    assert _codes(found) == _codes(everything) - {one}
    code, out = _run(capsys, tmp_path, "--config", str(settings / "none.toml"), consumer=consumer)
    assert code == 2 and "does not exist" in out.err


def test_config_is_found_up_to_the_project_root(capsys, tmp_path, everything):
    one = sorted(_codes(everything))[0]
    project = write_tree(
        tmp_path / "project",
        {
            "pyproject.toml": f'[tool.driftaudit]\nselect = ["{one}"]\n',
            "pkg/sub/calls.py": SOURCE,
            "pkg/pyproject.toml": "[project]\nname = 'x'\n",  # no [tool.driftaudit]: on up
        },
    )
    consumer = project / "pkg" / "sub"
    assert _codes(_findings(capsys, tmp_path, consumer=consumer)) == {one}
    (project / "pkg" / ".git").mkdir()  # the project root: the walk stops there
    assert _codes(_findings(capsys, tmp_path, consumer=consumer)) == _codes(everything)


def test_statistics(capsys, tmp_path, everything):
    code, out = _run(capsys, tmp_path, "--statistics")
    assert code == 1  # the gate is the same
    counts = Counter(f["rule"] for f in everything)
    rows = [line.split("\t") for line in out.out.splitlines()]
    assert {row[1]: int(row[0]) for row in rows} == counts
    assert [int(row[0]) for row in rows] == sorted(counts.values(), reverse=True)
    for row in rows:
        assert row[2].split()[-1] == CODES[row[1]].kind
    _, out = _run(capsys, tmp_path, "--statistics", "--format", "json")
    document = json.loads(out.out)["statistics"]
    assert {d["code"]: d["count"] for d in document} == counts
    safe = {
        f["rule"]
        for f in everything
        if f["fix"] and f["fix"]["autofixable"] and f["fix"]["applicability"] == "safe"
    }
    assert {d["code"] for d in document if d["fixable"]} == safe


def test_show_fixes_lists_what_fix_would_apply(capsys, tmp_path, everything):
    safe = Counter(
        f["rule"]
        for f in everything
        if f["fix"]
        and f["fix"]["autofixable"]
        and f["fix"]["applicability"] == "safe"
        and f["confidence"] == "certain"
    )
    assert safe  # the case has a safe fix
    _, out = _run(capsys, tmp_path, "--show-fixes")
    listed = out.out[out.out.index("fixable with `driftaudit fix`") :]
    assert "calls.py:" in listed
    for code, count in safe.items():
        assert f"{count} × {code} ({CODES[code].kind})" in listed
    # after a document, on stderr: the JSON on stdout stays whole
    _, out = _run(capsys, tmp_path, "--show-fixes", "--format", "json")
    assert json.loads(out.out)["findings"] and "fixable with" in out.err
    _, out = _run(capsys, tmp_path, "--show-fixes", "--ignore", ",".join(safe))
    assert "No fixes available." in out.out


def test_output_format_is_an_alias_of_format(capsys, tmp_path, everything):
    _, out = _run(capsys, tmp_path, "--output-format", "json")
    assert json.loads(out.out)["findings"] == everything


def test_gitlab_code_quality(capsys, tmp_path, everything):
    consumer = _consumer(tmp_path, "fail-on = 'never'\n", **{"twice/calls.py": SOURCE})
    code, out = _run(capsys, tmp_path, "--format", "gitlab", consumer=consumer)
    assert code == 0
    issues = json.loads(out.out)
    _, again = _run(capsys, tmp_path, "--format", "json", consumer=consumer)
    report = json.loads(again.out)
    assert len(issues) == report["summary"]["facts"]  # one issue per fact
    prints = [i["fingerprint"] for i in issues]
    assert len(set(prints)) == len(prints)  # GitLab needs them unique
    leads = {}
    for finding in report["findings"]:
        leads.setdefault(finding["fact"], finding)
    for issue, lead in zip(issues, (leads[n] for n in sorted(leads)), strict=True):
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["check_name"] == lead["rule"] and lead["message"] in issue["description"]
        assert issue["severity"] == SEVERITY[lead["severity"]]
        # the consumer lies outside the working directory: paths from its root
        assert issue["location"] == {"path": lead["path"], "lines": {"begin": lead["line"]}}
    # stable: the same run gives the same fingerprints, the baseline's where unique
    _, third = _run(capsys, tmp_path, "--format", "gitlab", consumer=consumer)
    assert [i["fingerprint"] for i in json.loads(third.out)] == prints
    # the baseline's fingerprints: a fact's lead is the baseline entry of its place
    baseline = tmp_path / "baseline.json"
    main(
        ["check", "--old", str(CASE / "old"), "--new", str(CASE / "new"), "-q", "--cache-dir"]
        + [str(tmp_path / "cache"), "--baseline", str(baseline), "--update-baseline"]
        + [str(consumer)]
    )
    capsys.readouterr()
    accepted = {e["fingerprint"] for e in json.loads(baseline.read_text())["findings"]}
    assert set(prints) & accepted


def test_fix_takes_the_same_selection(capsys, tmp_path):
    code, out = _run(capsys, tmp_path, "--select", "DA2,DA9", command="fix")
    assert code in (0, 1) and "would fix" in out.err
    code, out = _run(capsys, tmp_path, "--ignore", "DA0,DA2,DA9", command="fix")
    assert "would fix 0 findings" in out.err and out.out == ""
    code, out = _run(capsys, tmp_path, "--select", "DA2Z", command="fix")
    assert code == 2 and "'DA2Z'" in out.err


def test_fix_honours_per_file_ignores(capsys, tmp_path):
    consumer = _consumer(tmp_path, "", **{"kept/calls.py": SOURCE})
    _, out = _run(capsys, tmp_path, consumer=consumer, command="fix")
    assert "+++ b/calls.py" in out.out and "+++ b/kept/calls.py" in out.out
    (consumer / "driftaudit.toml").write_text('[per-file-ignores]\n"/calls.py" = ["DA2"]\n')
    _, out = _run(capsys, tmp_path, consumer=consumer, command="fix")
    assert "+++ b/calls.py" not in out.out and "+++ b/kept/calls.py" in out.out
