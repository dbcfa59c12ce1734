"""Counts per code, as ruff prints them: `--statistics` (instead of the findings) and
`--show-fixes` (after the report: what `fix` would try, per file and code)."""

from __future__ import annotations

from collections import Counter

from driftaudit.findings import Finding, fixable
from driftaudit.report.escape import json_text, terminal


def findings_statistics(findings: list[Finding], as_json: bool = False) -> str:
    """One line per code, most frequent first: count, code, `[*]` when `fix` would
    rewrite some of them without --unsafe-fixes, its name (the kind)."""
    counts = Counter(f.code.code for f in findings)
    kinds = {f.code.code: f.code.kind for f in findings}
    safe = {f.code.code for f in fixable(findings) if f.fix_applicability == "safe"}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        return json_text(
            [{"code": c, "name": kinds[c], "count": n, "fixable": c in safe} for c, n in rows]
        )
    width = len(str(rows[0][1])) if rows else 1
    return "".join(
        f"{n:>{width}}\t{c}\t{'[*]' if c in safe else '   '} {kinds[c]}\n" for c, n in rows
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
