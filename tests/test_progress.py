"""Progress on stderr: shown on a terminal, silent otherwise and with --quiet."""

from __future__ import annotations

import io

from rich.console import Console

from driftaudit.cli import main
from driftaudit.progress import progress, step

from .conftest import FIXTURES

CASE = FIXTURES / "themes" / "calls"


def test_status_only_on_a_terminal():
    tty = io.StringIO()
    with progress(True, Console(file=tty, force_terminal=True)):
        step("downloading sglang==0.5.14")
    assert "driftaudit" in tty.getvalue()
    for enabled, console in (
        (True, Console(file=io.StringIO(), force_terminal=False)),
        (False, Console(file=io.StringIO(), force_terminal=True)),
    ):
        with progress(enabled, console):
            step("downloading")
        assert console.file.getvalue() == ""


def test_quiet_runs_write_nothing_to_stderr(capsys, tmp_path):
    args = ["--old", str(CASE / "old"), "--new", str(CASE / "new"), str(CASE / "consumer")]
    main(["compare", "--cache-dir", str(tmp_path), "-q", "--format", "json", *args])
    assert capsys.readouterr().err == ""
