"""The command line: exit codes, the JSON contract, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from driftaudit.cli import main

from .conftest import FIXTURES, write_tree

CASE = FIXTURES / "themes" / "calls"


def _compare(capsys, *extra, consumer=CASE / "consumer"):
    code = main(
        ["compare", "--old", str(CASE / "old"), "--new", str(CASE / "new"), str(consumer), *extra]
    )
    return code, capsys.readouterr()


def test_json_report_follows_the_contract(capsys, tmp_path):
    out = tmp_path / "report.json"
    code, _ = _compare(
        capsys, "--format", "json", "--output", str(out), "--cache-dir", str(tmp_path)
    )
    assert code == 1
    report = json.loads(out.read_text())
    assert set(report) == {
        "schema_version",
        "tool",
        "old",
        "new",
        "consumer",
        "findings",
        "summary",
    }
    assert report["tool"]["name"] == "driftaudit"
    assert report["old"]["spec"] == str(CASE / "old")
    finding = report["findings"][0]
    assert set(finding) == {
        "fact",
        "rule",
        "kind",
        "severity",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "symbol",
        "confidence",
        "message",
        "old_location",
        "new_location",
        "fix",
    }
    assert finding["path"] == "calls.py" and finding["line"] >= 1 and finding["column"] >= 1
    assert (finding["end_line"], finding["end_column"]) > (finding["line"], finding["column"])
    assert set(finding["fix"]) == {"description", "autofixable", "applicability"}
    summary = report["summary"]
    assert summary["error"] + summary["warning"] + summary["info"] == len(report["findings"])


def test_fail_on_controls_the_exit_code(capsys, tmp_path):
    cache = ["--cache-dir", str(tmp_path)]
    assert _compare(capsys, *cache)[0] == 1
    assert _compare(capsys, *cache, "--fail-on", "never")[0] == 0
    clean = write_tree(
        tmp_path / "clean", {"ok.py": "from sglang.srt.distributed import init_group\n"}
    )
    assert _compare(capsys, *cache, consumer=clean)[0] == 0


def test_console_report_groups_by_file(capsys, tmp_path):
    code, captured = _compare(capsys, "--cache-dir", str(tmp_path))
    assert code == 1
    assert "calls.py" in captured.out and "DA201" in captured.out
    assert "facts at" in captured.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--new", "0.5.14", "/no/such/dir"], "does not exist"),
        (["compare", "--new", "0.5.14", __file__], "is not a directory"),
        (["compare", str(CASE / "consumer")], "--new is required"),
        (["compare", "--new", str(CASE / "new"), str(CASE / "consumer")], "no sglang pin"),
        (["compare", "--old", "/nope", "--new", "/nope", str(CASE / "consumer")], "cannot resolve"),
        (["rule", "DA999"], "unknown code"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, argv, message):
    assert main(["--cache-dir", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_unparsable_consumer_file_is_a_finding_and_the_run_goes_on(capsys, tmp_path):
    consumer = write_tree(
        tmp_path / "c",
        {
            "bad.py": "import sglang.srt.distributed\ndef f(:\n",
            "good.py": "from sglang.srt.distributed import init_group\n"
            "init_group([0], 0, 'nccl', use_stream=True)\n",
        },
    )
    code, captured = _compare(capsys, "--cache-dir", str(tmp_path), consumer=consumer)
    assert code == 1
    assert "DA001" in captured.out and "DA201" in captured.out


def test_files_the_walk_leaves_out_are_noted_and_python_ones_are_da001(capsys, tmp_path):
    consumer = write_tree(
        tmp_path / "c",
        {"good.py": "from sglang.srt.distributed import init_group\ninit_group([0], 0, 'nccl')\n"},
    )
    (consumer / "gone.py").symlink_to(consumer / "missing.py")
    (consumer / "run.sh").symlink_to(consumer / "run.sh")  # a loop
    _, captured = _compare(capsys, "--cache-dir", str(tmp_path), consumer=consumer)
    assert "note: not read: gone.py (dangling symbolic link" in captured.err
    assert "note: not read: run.sh (symbolic link loop)" in captured.err
    assert "gone.py" in captured.out and "DA001" in captured.out


def test_rule_explains_itself(capsys):
    assert main(["rule", "DA303"]) == 0
    out = capsys.readouterr().out
    for heading in ("What it flags", "Why it breaks", "Example", "Fix"):
        assert heading in out
    assert main(["rule"]) == 0
    assert "DA102" in capsys.readouterr().out


def test_console_script_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "driftaudit", "rule", "DA102"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "import-moved" in result.stdout


def test_min_confidence_drops_likely_findings(capsys, tmp_path):
    case, trees = FIXTURES / "themes" / "likely", FIXTURES / "themes" / "receivers"
    argv = ["compare", "--old", str(trees / "old"), "--new", str(trees / "new")]
    argv += ["--format", "json", "--cache-dir", str(tmp_path), str(case / "consumer")]
    main(argv)
    everything = json.loads(capsys.readouterr().out)["findings"]
    main([*argv, "--min-confidence", "certain"])
    certain = json.loads(capsys.readouterr().out)["findings"]
    assert {f["confidence"] for f in everything} == {"likely", "certain"}
    assert certain and {f["confidence"] for f in certain} == {"certain"}


def test_settings_from_tool_driftaudit(capsys, tmp_path):
    consumer = write_tree(
        tmp_path / "c",
        {
            "pyproject.toml": (
                "[tool.driftaudit]\n"
                f'old = "{CASE / "old"}"\nnew = "{CASE / "new"}"\n'
                'fail-on = "never"\nexclude = ["skipped/*"]\nwrap-prefixes = ["--x-"]\n'
            ),
            "calls.py": (CASE / "consumer" / "calls.py").read_text(),
            "skipped/more.py": (CASE / "consumer" / "calls.py").read_text(),
        },
    )
    argv = ["compare", "--format", "json", "--cache-dir", str(tmp_path), str(consumer)]
    assert main(argv) == 2  # directories from the consumer's config need the opt-in
    assert "--trust-config-paths" in capsys.readouterr().err
    assert main([*argv, "--trust-config-paths"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] and {f["path"] for f in report["findings"]} == {"calls.py"}


def test_bad_config_is_one_line(capsys, tmp_path):
    consumer = write_tree(tmp_path / "c", {"pyproject.toml": "[tool.driftaudit]\nexclude = 3\n"})
    assert main(["compare", "--new", "0.5.14", "--cache-dir", str(tmp_path), str(consumer)]) == 2
    err = capsys.readouterr().err
    assert "exclude must be a list" in err and len(err.strip().splitlines()) == 1


def test_markdown_report(capsys, tmp_path):
    code, captured = _compare(capsys, "--format", "markdown", "--cache-dir", str(tmp_path))
    assert code == 1
    assert captured.out.startswith("# driftaudit: ") and "## Summary by rule" in captured.out
    assert "| DA201 | keyword-removed | error | 3 |" in captured.out
    assert "- `calls.py:7:32`" in captured.out


def test_check_reads_everything_from_the_config(capsys, tmp_path):
    consumer = write_tree(
        tmp_path / "c",
        {
            "pyproject.toml": (
                f'[tool.driftaudit]\nold = "{CASE / "old"}"\nnew = "{CASE / "new"}"\n'
            ),
            "calls.py": (CASE / "consumer" / "calls.py").read_text(),
        },
    )
    argv = ["check", "--cache-dir", str(tmp_path), "--trust-config-paths", str(consumer)]
    assert main(argv) == 1
    assert "DA201" in capsys.readouterr().out


def test_info_findings_are_off_unless_asked_for(capsys, tmp_path):
    case = Path(__file__).parent / "fixtures" / "codes" / "DA403-unobserved"
    argv = ["compare", "--cache-dir", str(tmp_path), "--old", str(case / "old")]
    argv += ["--new", str(case / "new"), str(case / "consumer"), "--format", "json", "-q"]

    def severities(*extra):
        main([*argv, "--fail-on", "never", *extra])
        return {f["severity"] for f in json.loads(capsys.readouterr().out)["findings"]}

    shown = severities("--show-info")
    assert "info" in shown
    assert "info" not in severities()
    (case_copy := tmp_path / "consumer").mkdir()
    for file in (case / "consumer").iterdir():
        (case_copy / file.name).write_bytes(file.read_bytes())
    (case_copy / "driftaudit.toml").write_text("show-info = true\n")
    argv[argv.index(str(case / "consumer"))] = str(case_copy)
    assert severities() == shown
