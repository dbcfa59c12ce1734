"""`.ci/run` is the README's promise: its two commands, verbatim, in a fresh venv of a
clean clone, with a non-editable install."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def readme_commands() -> list[str]:
    """The lines of the README's first code block: what a newcomer runs first."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```\n(.*?)^```", text, re.M | re.S)
    assert block, "the README opens with a code block of commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def ci_lines() -> list[str]:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def test_readme_opens_with_the_two_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install . ") and "driftaudit compare" in commands[0]
    assert commands[1].startswith("pip install '.[test]'") and "pytest" in commands[1]


def test_ci_runs_the_readme_commands_verbatim_after_a_fresh_venv():
    lines = ci_lines()
    commands = readme_commands()
    for command in commands:
        assert command in lines, f".ci/run does not run the README's {command!r}"
    venv = next(i for i, line in enumerate(lines) if "-m venv" in line)
    activate = next(i for i, line in enumerate(lines) if "bin/activate" in line)
    assert venv < activate < lines.index(commands[0]) < lines.index(commands[1])
    assert lines[venv - 1].startswith("rm -rf ") and lines[venv].endswith(lines[venv - 1][7:])
    assert "set -euo pipefail" in lines, "a failing command fails CI"


def test_ci_installs_nothing_editable_and_lints():
    lines = ci_lines()
    assert not [line for line in lines if re.search(r"pip install .*(-e\b|--editable)", line)]
    assert "ruff check ." in lines and "ruff format --check ." in lines
    assert any(line.split("#")[0].split() == ["mypy"] for line in lines), "CI type-checks"


def test_ci_installs_chromium_for_the_browser_test_before_the_suite():
    lines = ci_lines()
    install = next(i for i, line in enumerate(lines) if "apt-get install" in line)
    assert "chromium" in lines[install] and "-y" in lines[install].split()
    assert any("DEBIAN_FRONTEND=noninteractive" in line for line in lines[:install])
    assert install < lines.index(readme_commands()[1])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "apt-get install -y chromium" in readme, "the README says how to install it"
