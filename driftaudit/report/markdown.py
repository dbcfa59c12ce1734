"""Markdown: a PR comment or a published audit (reports/).

First what a reader needs to decide (counts by rule and by sglang symbol), then one
section per fact (rule + symbol + message) listing the places it hits, with its fix.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from driftaudit.drift import Change
from driftaudit.findings import Finding, fact, summarize
from driftaudit.sources import SourceTree


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """Inline code that survives backticks in the text."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _versions(old: SourceTree, new: SourceTree) -> str:
    return f"sglang {old.version or '?'} ({old.spec}) -> {new.version or '?'} ({new.spec})"


def findings_markdown(
    findings: list[Finding],
    old: SourceTree,
    new: SourceTree,
    consumer: str,
    title: str = "",
    preamble: str = "",
) -> str:
    counts = summarize(findings)
    lines = [f"# {title or 'driftaudit: ' + consumer}", ""]
    if preamble:
        lines += [preamble, ""]
    lines += [
        f"{_versions(old, new)}: **{len(findings)} findings** ({counts['error']} errors, "
        f"{counts['warning']} warnings, {counts['info']} info).",
    ]
    if not findings:
        return "\n".join(lines) + "\n"
    facts: dict[tuple, list[Finding]] = defaultdict(list)
    for f in findings:
        facts[fact(f)].append(f)

    by_rule = Counter((f.code.code, f.code.kind, f.severity) for f in findings)
    lines += ["", "## Summary by rule", "", "| rule | kind | severity | findings |"]
    lines.append("| --- | --- | --- | --- |")
    for (code, kind, severity), n in sorted(by_rule.items()):
        lines.append(f"| {code} | {kind} | {severity} | {n} |")

    by_symbol: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        by_symbol[f.symbol or "(none)"][f.code.code] += 1
    lines += ["", "## Summary by sglang symbol", "", "| symbol | rules | findings |"]
    lines.append("| --- | --- | --- |")
    ranked = sorted(by_symbol.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    for symbol, rules in ranked:
        listed = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(rules.items()))
        lines.append(f"| {_cell(_code(symbol))} | {listed} | {sum(rules.values())} |")

    lines += ["", "## Findings"]
    ordered = sorted(facts.items(), key=lambda item: (item[0][0], item[0][1], item[1][0].path))
    for (code, symbol, message, *_), group in ordered:
        first = group[0]
        heading = f"{code} {first.code.kind}"
        if symbol:
            heading += f": {_code(symbol)}"
        lines += ["", f"### {heading}", "", f"{first.severity}, {first.confidence}: {message}"]
        evidence = [
            f"old {_code(first.old_location)}" if first.old_location else "",
            f"new {_code(first.new_location)}" if first.new_location else "",
        ]
        evidence = [e for e in evidence if e]
        if evidence:
            lines += ["", "sglang evidence: " + ", ".join(evidence)]
        if first.fix:
            tag = ""
            if first.fix.autofixable:
                unsafe = " --unsafe-fixes" if first.fix_applicability == "unsafe" else ""
                tag = f" ({first.fix_applicability} autofix: `driftaudit fix --apply{unsafe}`)"
            lines += ["", f"Fix: {first.fix.description}{tag}"]
        lines += ["", f"{len(group)} place{'s' if len(group) > 1 else ''}:", ""]
        lines += [f"- `{f.path}:{f.line}:{f.column}`" for f in group]
    return "\n".join(lines) + "\n"


def changes_markdown(changes: list[Change], old: SourceTree, new: SourceTree) -> str:
    """The sglang-side changelog: counts by kind, then the changes by sglang file."""
    lines = [f"# driftaudit diff: {_versions(old, new)}", "", f"**{len(changes)} changes**."]
    if not changes:
        return "\n".join(lines) + "\n"
    kinds = Counter((c.code.code, c.code.kind) for c in changes)
    lines += ["", "| rule | kind | changes |", "| --- | --- | --- |"]
    lines += [f"| {code} | {kind} | {n} |" for (code, kind), n in sorted(kinds.items())]
    by_file: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        location = change.old_location or change.new_location or change.symbol
        by_file[location.split(":")[0]].append(change)
    for file in sorted(by_file):
        lines += ["", f"## {_code(file)}", ""]
        lines += [f"- {c.code.code} {_cell(c.explain())}" for c in by_file[file]]
    return "\n".join(lines) + "\n"
