"""Progress on stderr: shown on a terminal, silent otherwise and with --quiet."""

from __future__ import annotations

import io
import re
import time

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


def test_a_log_gets_a_line_every_interval_naming_the_stage():
    log = io.StringIO()
    with progress(True, Console(file=log, force_terminal=False), interval=0.05):
        step("downloading sglang==0.5.14 [bold]")
        time.sleep(0.3)
        step("matching 12 usages")
        time.sleep(0.3)
    lines = log.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert all(re.fullmatch(r"driftaudit: .+ \(\d+s; \d+s in all\)", line) for line in lines)
    assert any("downloading sglang==0.5.14 [bold]" in line for line in lines)
    assert "matching 12 usages" in lines[-1]
    ended = len(log.getvalue())
    time.sleep(0.2)
    assert len(log.getvalue()) == ended  # the ticker stops with the run


def test_a_short_run_or_a_quiet_one_prints_no_line():
    for enabled, interval in ((True, 60.0), (False, 0.01)):
        log = io.StringIO()
        with progress(enabled, Console(file=log, force_terminal=False), interval=interval):
            step("resolving")
            time.sleep(0.1)
        assert log.getvalue() == ""


def test_quiet_cli_runs_print_no_progress_line(capsys, tmp_path, monkeypatch):
    import driftaudit.progress

    monkeypatch.setattr(driftaudit.progress, "INTERVAL", 0.001)
    args = ["--old", str(CASE / "old"), "--new", str(CASE / "new"), str(CASE / "consumer")]
    main(["compare", "--cache-dir", str(tmp_path), "-q", "--format", "json", *args])
    assert capsys.readouterr().err == ""
    main(["compare", "--cache-dir", str(tmp_path), "--format", "json", *args])
    assert "driftaudit: " in capsys.readouterr().err
