"""Findings -> output: rich console (grouped by file), JSON (the stable contract),
Markdown (a PR comment, a published audit)."""

from driftaudit.report.console import render_changes, render_console
from driftaudit.report.json_report import changes_json, findings_json
from driftaudit.report.markdown import findings_markdown

__all__ = [
    "changes_json",
    "findings_json",
    "findings_markdown",
    "render_changes",
    "render_console",
]
