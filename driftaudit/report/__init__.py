"""Findings -> output: rich console (grouped by file), JSON (the stable contract),
Markdown (a PR comment, a published audit), SARIF (code scanning), GitHub annotations."""

from driftaudit.report.console import render_changes, render_console
from driftaudit.report.github import findings_github
from driftaudit.report.json_report import changes_json, findings_json
from driftaudit.report.markdown import changes_markdown, findings_markdown
from driftaudit.report.sarif import changes_sarif, findings_sarif

__all__ = [
    "changes_json",
    "changes_markdown",
    "changes_sarif",
    "findings_github",
    "findings_json",
    "findings_markdown",
    "findings_sarif",
    "render_changes",
    "render_console",
]
