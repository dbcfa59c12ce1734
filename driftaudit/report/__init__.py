"""Findings -> output: rich console (grouped by file) and JSON (the stable contract)."""

from driftaudit.report.console import render_changes, render_console
from driftaudit.report.json_report import changes_json, findings_json

__all__ = ["changes_json", "findings_json", "render_changes", "render_console"]
