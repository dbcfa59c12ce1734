"""Counts per code, as ruff prints them: `--statistics` (instead of the findings) and
`--show-fixes` (after the report: what `fix` would try, per file and code)."""

from __future__ import annotations

from collections import Counter

from driftaudit.findings import Finding, fixable
from driftaudit.report.escape import terminal


def code_counts(findings: list[Finding]) -> list[dict]:
    """One row per code, most frequent first: its count, name (the kind) and whether
    `fix` would rewrite some of them without --unsafe-fixes."""
    counts = Counter(f.code.code for f in findings)
    kinds = {f.code.code: f.code.kind for f in findings}
    safe = {f.code.code for f in fixable(findings) if f.fix_applicability == "safe"}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"code": c, "name": kinds[c], "count": n, "fixable": c in safe} for c, n in rows]


def findings_statistics(findings: list[Finding]) -> str:
    """One line per code (`code_counts`): count, code, `[*]` when fixable, its name.
    The JSON document is `json_report.statistics_json`."""
    rows = code_counts(findings)
    width = len(str(rows[0]["count"])) if rows else 1
    return "".join(
        f"{r['count']:>{width}}\t{r['code']}\t{'[*]' if r['fixable'] else '   '} {r['name']}\n"
        for r in rows
    )


def fixes_summary(findings: list[Finding], unsafe_fixes: bool = False) -> str:
    """The fixes `fix` would try (certain findings with an edit; unsafe ones only with
    `unsafe_fixes`), per file: `count × code (kind)`."""
    wanted = [f for f in fixable(findings) if unsafe_fixes or f.fix_applicability == "safe"]
    if not wanted:
        return "No fixes available.\n"
    per_file: dict[str, Counter] = {}
    kinds = {}
    for finding in wanted:
        per_file.setdefault(finding.path, Counter())[finding.code.code] += 1
        kinds[finding.code.code] = finding.code.kind
    lines = [f"{len(wanted)} fixable with `driftaudit fix`:"]
    for path in sorted(per_file):
        lines.append(f"  {terminal(path)}:")
        for code, count in sorted(per_file[path].items()):
            lines.append(f"    {count} × {code} ({kinds[code]})")
    return "\n".join(lines) + "\n"
