"""Score the corpus: driftaudit's findings and a type checker's new diagnostics (both
trees, diffed) against the `# BREAK` lines. A hit is in the same file, within 3 lines of
the break; a driftaudit finding must also name the change (its symbol's last name)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

try:
    from .generate import Case
except ImportError:
    from generate import Case  # type: ignore[no-redef]

NEAR = 3


def driftaudit_findings(corpus: Path, old: str, new: str, cache_dir: Path) -> list[dict]:
    argv = [sys.executable, "-m", "driftaudit", "compare", "--old", old, "--new", new]
    argv += ["--format", "json", "--fail-on", "never", "--no-cache", "-q"]
    argv += ["--cache-dir", str(cache_dir), str(corpus)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["findings"]


def _finding_place(finding: dict) -> tuple[str, int]:
    return finding.get("path", ""), int(finding.get("line") or 0)


def driftaudit_hits(cases: list[Case], findings: list[dict]) -> list[bool]:
    by_file: dict[str, list[dict]] = defaultdict(list)
    for finding in findings:
        by_file[_finding_place(finding)[0]].append(finding)
    hits = []
    for case in cases:
        names = case.target.names
        hit = False
        for finding in by_file.get(case.file, []):
            line = _finding_place(finding)[1]
            text = f"{finding.get('symbol', '')} {finding.get('message', '')}"
            if abs(line - case.line) <= NEAR and any(
                re.search(rf"\b{re.escape(n)}\b", text) for n in names
            ):
                hit = True
                break
        hits.append(hit)
    return hits


def false_findings(near: dict, findings: list[dict]) -> list[str]:
    """The near-miss files (file -> its Target) where a finding names the change."""
    false = []
    for finding in findings:
        target = near.get(_finding_place(finding)[0])
        if target is None:
            continue
        names = target.names
        text = f"{finding.get('symbol', '')} {finding.get('message', '')}"
        if any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
            false.append(f"{finding['path']}:{finding.get('line')}: {finding.get('message', '')}")
    return false


def checker_hits(cases: list[Case], new_diagnostics: set[tuple[str, int]]) -> list[bool]:
    return [
        any(
            (case.file, line) in new_diagnostics
            for line in range(case.line - NEAR, case.line + NEAR + 1)
        )
        for case in cases
    ]


def table(cases: list[Case], columns: dict[str, list[bool]], strings: set[str]) -> str:
    """Markdown: recall per (change kind x spelling), one column per engine. A spelling
    only a string carries, that no checker found in its row, is marked driftaudit's alone."""
    rows: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, case in enumerate(cases):
        rows[(case.target.kind, case.spelling)].append(index)
    names = list(columns)
    lines = [
        "| change kind | spelling | cases | " + " | ".join(names) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in names) + " |",
    ]
    totals = {name: 0 for name in names}
    for (kind, spelling), indexes in sorted(rows.items()):
        cells = []
        for name in names:
            found = sum(columns[name][i] for i in indexes)
            totals[name] += found
            cells.append(f"{found / len(indexes):.2f}")
        checkers = [n for n in names if n != "driftaudit"]
        blind = checkers and all(not any(columns[n][i] for i in indexes) for n in checkers)
        mark = (
            f"{spelling} (string: no checker sees it)"
            if blind and spelling in strings
            else spelling
        )
        lines.append(f"| {kind} | {mark} | {len(indexes)} | " + " | ".join(cells) + " |")
    lines.append(
        f"| **all** | | {len(cases)} | "
        + " | ".join(f"**{totals[n] / max(len(cases), 1):.2f}**" for n in names)
        + " |"
    )
    return "\n".join(lines)
