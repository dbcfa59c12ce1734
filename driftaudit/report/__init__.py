"""Findings -> output: rich console (grouped by file), JSON (the stable contract),
Markdown (a PR comment, a published audit), SARIF (code scanning),
GitHub annotations, GitLab Code Quality, an HTML page (one self-contained file)."""

# imported on first use: a JSON report loads neither rich nor the SARIF writer
_HOMES = {
    "render_changes": "console",
    "render_console": "console",
    "findings_github": "github",
    "findings_gitlab": "gitlab",
    "findings_statistics": "statistics",
    "statistics_json": "json_report",
    "fixes_summary": "statistics",
    "findings_html": "html",
    "history_json": "symbol_history",
    "plan_json": "upgrade_plan",
    "plan_markdown": "upgrade_plan",
    "render_plan": "upgrade_plan",
    "render_history": "symbol_history",
    "changes_html": "html",
    "changes_json": "json_report",
    "findings_json": "json_report",
    "changes_markdown": "markdown",
    "findings_markdown": "markdown",
    "changes_sarif": "sarif",
    "findings_sarif": "sarif",
}

__all__ = [
    "changes_html",
    "changes_json",
    "changes_markdown",
    "changes_sarif",
    "findings_github",
    "findings_gitlab",
    "findings_html",
    "findings_json",
    "findings_markdown",
    "findings_sarif",
    "findings_statistics",
    "fixes_summary",
    "history_json",
    "plan_json",
    "plan_markdown",
    "render_plan",
    "render_changes",
    "render_console",
    "statistics_json",
    "render_history",
]


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"driftaudit.report.{home}"), name)
