"""Markdown: a PR comment or a published audit (reports/)."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from driftaudit.findings import Finding, summarize
from driftaudit.sources import SourceTree


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def findings_markdown(
    findings: list[Finding], old: SourceTree, new: SourceTree, consumer: str, title: str = ""
) -> str:
    counts = summarize(findings)
    lines = [
        f"# {title or 'driftaudit: ' + consumer}",
        "",
        f"sglang {old.version} ({old.spec}) -> {new.version} ({new.spec}): "
        f"**{len(findings)} findings** ({counts['error']} errors, {counts['warning']} warnings, "
        f"{counts['info']} info).",
        "",
        "| rule | count |",
        "| --- | --- |",
    ]
    by_code = Counter(f"{f.code.code} {f.code.kind} ({f.confidence})" for f in findings)
    lines += [f"| {code} | {n} |" for code, n in sorted(by_code.items())]
    for path, group in groupby(findings, key=lambda f: f.path):
        lines += ["", f"## `{path}`", "", "| line | rule | message | sglang evidence | fix |"]
        lines.append("| --- | --- | --- | --- | --- |")
        for f in group:
            evidence = " / ".join(x for x in (f.old_location, f.new_location) if x)
            tag = f" ({f.fix_applicability} autofix)" if f.fix_applicability else ""
            fix = f.fix.description + tag if f.fix else ""
            lines.append(
                f"| {f.line} | {f.code.code} {f.severity} | {_cell(f.message)} | "
                f"{_cell(evidence)} | {_cell(fix)} |"
            )
    return "\n".join(lines) + "\n"
