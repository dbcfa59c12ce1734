"""The CI gate: `check` with a baseline and inline suppressions, as CI runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema

from driftaudit.check.baseline import Baseline, fingerprint
from driftaudit.check.suppressions import apply_suppressions, scan_file
from driftaudit.cli import main
from driftaudit.codes import IMPORT_MOVED, KEYWORD_REMOVED
from driftaudit.findings import Finding
from driftaudit.usage.files import ConsumerFiles

from .conftest import FIXTURES, write_tree

CALLS = FIXTURES / "themes" / "calls"
SURFACES = FIXTURES / "themes" / "surfaces"

IMPORT = "from sglang.srt.distributed import init_group\n"
OLD_CALL = "    init_group([0], 0, 'nccl', use_stream=False)\n"


def _consumer(tmp_path, body: str):
    config = f'[tool.driftaudit]\nold = "{CALLS / "old"}"\nnew = "{CALLS / "new"}"\n'
    return write_tree(tmp_path / "c", {"pyproject.toml": config, "app.py": body})


def _check(tmp_path, consumer, *extra) -> tuple[int, list[dict]]:
    out = tmp_path / "report.json"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    code = main(
        [
            "check",
            "--trust-config-paths",
            *cache,
            "-q",
            "--format",
            "json",
            "--output",
            str(out),
            str(consumer),
            *extra,
        ]
    )
    return code, json.loads(out.read_text())["findings"] if out.exists() else []


def test_check_fails_only_on_what_is_new(tmp_path):
    consumer = _consumer(tmp_path, IMPORT + "\n\ndef run():\n" + OLD_CALL)
    code, findings = _check(tmp_path, consumer)
    assert code == 1 and [f["rule"] for f in findings] == ["DA201"]

    # the team accepts what is there today
    assert (
        main(
            [
                "check",
                "--trust-config-paths",
                "--cache-dir",
                str(tmp_path / "cache"),
                "-q",
                "--update-baseline",
                str(consumer),
            ]
        )
        == 0
    )
    baseline = json.loads((consumer / ".driftaudit-baseline.json").read_text())
    assert [e["rule"] for e in baseline["findings"]] == ["DA201"]
    assert _check(tmp_path, consumer) == (0, [])

    # lines move and the code is re-indented: the accepted finding stays accepted;
    # a suppressed new call is silent; a plain new call fails the check
    (consumer / "app.py").write_text(
        IMPORT
        + "\nX = 1\n\n\ndef run():\n    if X:\n    "
        + OLD_CALL
        + "    init_group([1], 0, 'nccl', use_stream=True)  # driftaudit: ignore[DA201]\n"
    )
    assert _check(tmp_path, consumer) == (0, [])
    (consumer / "app.py").write_text(
        (consumer / "app.py").read_text() + "    init_group([2], 0, 'nccl', use_stream=True)\n"
    )
    code, findings = _check(tmp_path, consumer)
    assert code == 1
    assert [(f["rule"], f["line"]) for f in findings] == [("DA201", 10)]
    # the same as a CI job runs it: a process, its exit code and the annotation
    ci = subprocess.run(
        [
            sys.executable,
            "-m",
            "driftaudit",
            "check",
            "--trust-config-paths",
            "--format",
            "github",
            ".",
        ],
        cwd=consumer,
        env={**os.environ, "DRIFTAUDIT_CACHE_DIR": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
    )
    assert ci.returncode == 1
    assert ci.stdout.startswith("::error file=app.py,line=10,col=32,")
    assert len(ci.stdout.splitlines()) == 1
    # in SARIF the silenced finding is there, marked suppressed (code scanning closes it)
    out = tmp_path / "report.sarif"
    main(
        [
            "check",
            "--trust-config-paths",
            "-q",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--format",
            "sarif",
            "--output",
            str(out),
            str(consumer),
        ]
    )
    document = json.loads(out.read_text())
    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(document)
    results = document["runs"][0]["results"]
    assert [
        (
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            [s["kind"] for s in r.get("suppressions", [])],
        )
        for r in results
    ] == [
        (10, []),
        (9, ["inSource"]),
    ]


def test_unused_suppressions_and_stale_entries_are_info(tmp_path):
    consumer = _consumer(tmp_path, IMPORT + "\n\ndef run():\n" + OLD_CALL)
    main(
        [
            "check",
            "--trust-config-paths",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-q",
            "--update-baseline",
            str(consumer),
        ]
    )
    # the accepted call is fixed; a suppression is left where nothing is found
    (consumer / "app.py").write_text(
        IMPORT + "\n\ndef run():\n    init_group([0], 0, 'nccl')  # driftaudit: ignore[DA102]\n"
    )
    code, findings = _check(tmp_path, consumer)
    assert code == 0  # info does not fail at the default --fail-on error
    assert sorted((f["rule"], f["severity"], f["line"]) for f in findings) == [
        ("DA002", "info", 5),
        ("DA003", "info", 5),
    ]
    assert _check(tmp_path, consumer, "--fail-on", "info")[0] == 1


def test_baseline_setting_in_the_config(tmp_path):
    consumer = _consumer(tmp_path, IMPORT + "\n\ndef run():\n" + OLD_CALL)
    with (consumer / "pyproject.toml").open("a") as handle:
        handle.write('baseline = "ci/accepted.json"\n')
    (consumer / "ci").mkdir()
    main(
        [
            "check",
            "--trust-config-paths",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-q",
            "--update-baseline",
            str(consumer),
        ]
    )
    assert (consumer / "ci" / "accepted.json").is_file()
    assert not (consumer / ".driftaudit-baseline.json").exists()
    assert _check(tmp_path, consumer)[0] == 0


def test_a_broken_baseline_is_one_line(tmp_path, capsys):
    consumer = _consumer(tmp_path, IMPORT)
    (consumer / ".driftaudit-baseline.json").write_text("{not json")
    assert (
        main(
            ["check", "--trust-config-paths", "--cache-dir", str(tmp_path / "cache"), str(consumer)]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "not a driftaudit baseline" in err and len(err.strip().splitlines()) == 1


def test_suppressions_in_shell_and_requirement_files(tmp_path):
    consumer = tmp_path / "c"
    shutil.copytree(SURFACES / "consumer", consumer)
    launch = consumer / "scripts" / "launch.sh"
    lines = launch.read_text().splitlines(keepends=True)
    lines[1] = lines[1].rstrip("\n") + "  # driftaudit: ignore[DA504]\n"  # export SGLANG_...
    lines[6] = lines[6].rstrip("\n") + "  # driftaudit: ignore\n"  # last line of the command
    launch.write_text("".join(lines))
    reqs = consumer / "requirements.txt"
    reqs.write_text(reqs.read_text().replace("sglang==1.0.0", "sglang==1.0.0"))
    reqs.write_text(reqs.read_text().replace("torch==2.9.1", "torch==2.9.1  # driftaudit: ignore"))
    out = tmp_path / "r.json"
    main(
        [
            "compare",
            "--old",
            str(SURFACES / "old"),
            "--new",
            str(SURFACES / "new"),
            "-q",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--format",
            "json",
            "--output",
            str(out),
            str(consumer),
        ]
    )
    places = {(f["path"], f["line"], f["rule"]) for f in json.loads(out.read_text())["findings"]}
    assert ("scripts/launch.sh", 2, "DA504") not in places
    assert ("scripts/launch.sh", 7, "DA505") not in places
    assert ("scripts/launch.sh", 6, "DA404") in places  # another line of the same command
    assert ("requirements.txt", 2, "DA507") not in places
    assert not any(rule == "DA002" for _, _, rule in places)


def _finding(rule, path, line, symbol="sglang.x"):
    return Finding(rule, path, line, 1, symbol, "m")


def test_suppression_comments_by_file_kind(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.py": 's = "# driftaudit: ignore"\nx = 1  # driftaudit: ignore[da102, DA201]\n',
            "b.yaml": "key: v  # driftaudit: ignore[DA102]\n",
            "c.toml": 'k = "v"  # driftaudit:ignore\nj = 1  # driftaudit: ignored on purpose\n',
        },
    )
    found = scan_file("a.py", (tmp_path / "a.py").read_text())
    assert [(s.line, sorted(s.codes)) for s in found] == [(2, ["DA102", "DA201"])]
    assert [sorted(s.codes) for s in scan_file("b.yaml", (tmp_path / "b.yaml").read_text())] == [
        ["DA102"]
    ]
    assert [s.codes for s in scan_file("c.toml", (tmp_path / "c.toml").read_text())] == [
        frozenset()
    ]

    suppressions = found + scan_file("b.yaml", (tmp_path / "b.yaml").read_text())
    kept, silenced = apply_suppressions(
        [
            _finding(IMPORT_MOVED, "a.py", 2),
            _finding(IMPORT_MOVED, "b.yaml", 1),
            _finding(KEYWORD_REMOVED, "b.yaml", 1),
        ],
        suppressions,
    )
    assert [(f.path, f.code.code) for f in silenced] == [("a.py", "DA102"), ("b.yaml", "DA102")]
    # DA201 listed on a.py:2 silenced nothing; the DA201 on b.yaml:1 was not listed there
    assert sorted((f.path, f.code.code, f.message) for f in kept) == [
        ("a.py", "DA002", "unused suppression: no DA201 finding on this line"),
        ("b.yaml", "DA201", "m"),
    ]


def test_fingerprints_ignore_line_numbers_and_whitespace(tmp_path):
    write_tree(tmp_path, {"a.py": "f(x=1)\n", "b.py": "\n\n    f( x=1)\n", "c.py": "f(x=2)\n"})
    files = ConsumerFiles(tmp_path)
    base = fingerprint(_finding(KEYWORD_REMOVED, "a.py", 1), files)
    moved = _finding(KEYWORD_REMOVED, "b.py", 3)
    assert fingerprint(moved, files) != base  # another file
    moved.path = "a.py"
    write_tree(tmp_path, {"a.py": "\n\n    f(x=1)\n"})
    files = ConsumerFiles(tmp_path)
    assert fingerprint(_finding(KEYWORD_REMOVED, "a.py", 3), files) == base
    assert fingerprint(_finding(KEYWORD_REMOVED, "c.py", 1), files) != base
    assert fingerprint(_finding(IMPORT_MOVED, "a.py", 3), files) != base
    assert fingerprint(_finding(KEYWORD_REMOVED, "a.py", 3, "sglang.y"), files) != base


def test_identical_lines_need_one_entry_each(tmp_path):
    write_tree(tmp_path, {"a.py": "f(x=1)\nf(x=1)\n"})
    one = _finding(KEYWORD_REMOVED, "a.py", 1)
    two = _finding(KEYWORD_REMOVED, "a.py", 2)
    files = ConsumerFiles(tmp_path)
    new, known, stale = Baseline.of([one], files).split([one, two], files)
    assert (len(new), len(known), stale) == (1, 1, [])
