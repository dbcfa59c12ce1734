"""One fixture directory per rule code, with the expected report beside it (ruff style).

    tests/fixtures/codes/<CODE>/   (and <CODE>-<case>/ for a case that must stand apart,
                                   e.g. one the tool gets wrong today: see XFAIL)
        old/, new/     tiny hand-made sglang trees (`sglang/version.py` names the release)
        consumer/      what is audited: a line that must be flagged carries `# expect: CODE`
                       (in any file with `#` comments: Python, shell, YAML, TOML,
                       requirements); every other line of such a file must stay silent:
                       the near misses (the consumer's own class or function with the
                       same name, a name that still exists, a comment) live there too
        packs/         optional: the rule packs of this fixture (DA9xx); without it an
                       empty directory is passed, so the repository's packs never apply
        expected.json  {"findings": `compare --format json` on the fixture, normalised and
                       sorted; "changes": the entries of `diff --format json` with this code
                       (DA508, a changelog code, is asserted there only: see DIFF_ONLY)}

Each directory is audited offline through the command line, exactly as a user runs it,
with a fresh cache. The test fails when the report differs from expected.json (so a
changed message shows in review), when an `# expect:` marker has no finding of that code
at that line, or when a finding in a commented file has no marker. A meta-test fails
when a code `driftaudit rule` lists has no fixture directory.

Regenerate the expected files after an intended change, then review the diff:

    DRIFTAUDIT_UPDATE_EXPECTED=1 python -m pytest tests/test_codes.py

Directories in XFAIL hold a hand-corrected expected.json (what the tool should report;
it does not today): regeneration leaves them alone.
"""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from driftaudit.cli import main

from .report_schemas import assert_valid

CODES = Path(__file__).parent / "fixtures" / "codes"
UPDATE = bool(os.environ.get("DRIFTAUDIT_UPDATE_EXPECTED"))
PACKS_OPTION = "--packs"  # the rule-pack directory option of `compare`
FIELDS = (
    "rule",
    "kind",
    "severity",
    "confidence",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "symbol",
    "message",
    "old_location",
    "new_location",
    "fix",
    "details",  # optional: only findings that carry longer evidence (an upstream diff)
)
CHANGE_FIELDS = ("rule", "kind", "symbol", "message", "old_location", "new_location")
DIRECTORY = re.compile(r"^(DA\d{3})(?:-[a-z0-9-]+)?$")  # DA301, DA301-guarded
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
# files whose comments start with `#`, so they can carry an `# expect:` marker
COMMENTED = {".py", ".sh", ".bash", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".env"}

# directory -> why the tool gets that fixture wrong today (a bug to fix); strict xfail
XFAIL: dict[str, str] = {}
# codes `compare` never reports (a changelog entry only): their fixture asserts `diff`
DIFF_ONLY = {"DA206", "DA508", "DA509"}
# codes whose findings sit in unified diffs, which have no comments: expected.json only
IN_DIFFS = {"DA601", "DA602"}


def registered_codes() -> list[str]:
    """The codes `driftaudit rule` lists: the one place the registry is read."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["rule"]) == 0
    return re.findall(r"^(DA\d{3})\b", out.getvalue(), re.MULTILINE)


def fixture_dirs() -> list[str]:
    return sorted(p.name for p in CODES.iterdir() if p.is_dir())


def code_of(directory: str) -> str:
    match = DIRECTORY.match(directory)
    assert match, f"fixture directory {directory!r} is not named CODE or CODE-case"
    return match.group(1)


def _params() -> list:
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=XFAIL[name]))
        if name in XFAIL
        else name
        for name in fixture_dirs()
    ]


def _run(argv: list[str], output: Path) -> dict:
    status = main([*argv, "--format", "json", "--output", str(output)])
    assert status in (0, 1), f"driftaudit {argv[0]} exited {status}"
    document = json.loads(output.read_text())
    # every code's report holds to the shipped schema (all of it, not only FIELDS)
    assert_valid("findings" if argv[0] == "compare" else "changes", document)
    return document


def audit(root: Path, tmp_path: Path) -> dict:
    """compare + diff on a fixture directory, normalised like expected.json."""
    cache = tmp_path / "cache"
    packs = root / "packs"
    if not packs.is_dir():
        packs = tmp_path / "no-packs"
        packs.mkdir()
    trees = ["--old", str(root / "old"), "--new", str(root / "new"), "--cache-dir", str(cache)]
    argv = ["compare", *trees, str(root / "consumer"), "--fail-on", "never", "--show-info"]
    argv += [PACKS_OPTION, str(packs)]
    if (root / "baseline.json").is_file():  # a fixture of the CI gate's baseline
        argv += ["--baseline", str(root / "baseline.json")]
    report = _run(argv, tmp_path / "compare.json")
    findings = [{k: f[k] for k in FIELDS if k != "details" or k in f} for f in report["findings"]]
    findings.sort(key=lambda f: (f["path"], f["line"], f["column"], f["rule"], f["symbol"]))
    changelog = _run(["diff", *trees], tmp_path / "diff.json")
    changes = [{k: c[k] for k in CHANGE_FIELDS} for c in changelog["changes"]]
    changes = [c for c in changes if c["rule"] == code_of(root.name)]
    changes.sort(key=lambda c: (c["symbol"], c["message"]))
    return {"findings": findings, "changes": changes}


def markers(consumer: Path) -> set[tuple[str, int, str]]:
    """(path, line, code) of every `# expect: CODE` in the consumer's commented files."""
    found = set()
    for path in sorted(p for p in consumer.rglob("*") if _commented(p)):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := EXPECT.search(line):
                for code in match.group(1).replace(",", " ").split():
                    found.add((path.relative_to(consumer).as_posix(), number, code))
    return found


def _commented(path: Path) -> bool:
    return path.is_file() and (path.suffix in COMMENTED or path.name.startswith("Dockerfile"))


@pytest.mark.parametrize("directory", _params())
def test_code_fixture(directory: str, tmp_path: Path) -> None:
    root, code = CODES / directory, code_of(directory)
    actual = audit(root, tmp_path)
    expected_file = root / "expected.json"
    if UPDATE and directory not in XFAIL:
        expected_file.write_text(json.dumps(actual, indent=2) + "\n")
    expected = json.loads(expected_file.read_text())
    assert actual == expected

    consumer = root / "consumer"
    wanted = markers(consumer)
    if code in DIFF_ONLY:
        assert actual["changes"], "no change of this code in `diff`"
    elif code not in IN_DIFFS:
        assert any(c == code for *_, c in wanted), "no `# expect:` marker of this code"
    flagged = {
        (f["path"], f["line"], f["rule"])
        for f in actual["findings"]
        if _commented(consumer / f["path"])
    }
    assert wanted - flagged == set(), "markers without a finding"
    assert flagged - wanted == set(), "findings without a marker"


def test_every_registered_code_has_a_fixture() -> None:
    codes = registered_codes()
    assert codes, "`driftaudit rule` listed no codes"
    missing = sorted(set(codes) - set(fixture_dirs()))  # the plain <CODE> directory
    assert not missing, f"codes without tests/fixtures/codes/<CODE>/: {missing}"


def test_every_fixture_has_an_expected_report() -> None:
    missing = [d for d in fixture_dirs() if not (CODES / d / "expected.json").is_file()]
    assert not missing, f"run with DRIFTAUDIT_UPDATE_EXPECTED=1 and review: {missing}"


def test_every_fixture_is_a_registered_code() -> None:
    unknown = sorted({code_of(d) for d in fixture_dirs()} - set(registered_codes()))
    assert not unknown, f"fixture directories for unknown codes: {unknown}"
