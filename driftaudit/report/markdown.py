"""Markdown: a PR comment, a job summary or a published audit (reports/).

First what a reader needs to decide (counts by rule and by sglang symbol), then one
folded `<details>` per fact (rule + symbol + message), errors first, listing the places
it hits, with its fix. Every consumer field goes through `escape.py`.

A report is never longer than `max_chars` (default: under GitHub's 65,536-character
limit for a comment or an issue, with room for a caller's own lines): long fields are
clipped, a fact lists at most `_PLACES` places (a file of `diff`, `_CHANGES` changes) and
the symbol table `_SYMBOLS` rows, and what no longer fits is counted in a closing "and N
more" line.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from driftaudit.codes import SEVERITIES
from driftaudit.drift import Change
from driftaudit.findings import Finding, group_facts, summarize, timeline_note
from driftaudit.report.escape import html_text, md_code, md_message, md_text
from driftaudit.sources import SourceTree

GITHUB_LIMIT = 65_536  # a comment or issue body; a job summary may hold 1 MiB
MAX_CHARS = 64_000
_PLACES = 50  # places listed under one fact
_SYMBOLS = 40  # rows of the summary by symbol
_CHANGES = 200  # changes listed under one sglang file (`diff`)
_RESERVE = 600  # for the closing lines: "and N more ..."
# clip long consumer fields (before escaping, which may make them up to 11x longer)
_SHORT, _LONG = 200, 1_000


def _clip(text: str | None, limit: int = _SHORT) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _size(text: str) -> int:
    """GitHub counts characters; UTF-16 units are never fewer (an astral one is two)."""
    return len(text.encode("utf-16-le")) // 2


class _Budget:
    """Blocks of lines, added while the total stays within `limit`."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self.blocks: list[str] = []

    def add(self, block: str, force: bool = False) -> bool:
        size = _size(block) + 1  # its line break
        if not force and self.used + size > self.limit:
            return False
        self.blocks.append(block)
        self.used += size
        return True

    def text(self) -> str:
        return "\n".join(self.blocks) + "\n"


def _versions(old: SourceTree, new: SourceTree) -> str:
    def one(tree: SourceTree) -> str:
        given = tree.provenance.label() if tree.provenance else ""
        given = f", {md_text(_clip(given))}" if given else ""
        return f"{md_text(_clip(tree.version or '?'))} ({md_text(_clip(tree.spec))}{given})"

    return f"sglang {one(old)} -> {one(new)}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def findings_markdown(
    findings: list[Finding],
    old: SourceTree,
    new: SourceTree,
    consumer: str,
    title: str = "",
    preamble: str = "",
    max_chars: int = MAX_CHARS,
) -> str:
    """`title` is text, `preamble` text that marks code with backticks. `max_chars`:
    at least 16,000 (the head and the rule table are always shown)."""
    out = _Budget(max_chars - _RESERVE)
    groups = group_facts(findings)
    counts = summarize([group[0] for group in groups])
    head = [f"# {md_text(_clip(title or 'driftaudit: ' + consumer))}", ""]
    if preamble:
        head += [md_message(_clip(preamble, _LONG)), ""]
    head.append(
        f"{_versions(old, new)}: **{_plural(len(groups), 'fact')}** at "
        f"{_plural(len(findings), 'place')} "
        f"({counts['error']} errors, {counts['warning']} warnings, {counts['info']} info)."
    )
    out.add("\n".join(head), force=True)
    if not findings:
        return out.text()
    by_rule = Counter((f.code.code, f.code.kind, f.severity) for f in findings)
    facts_by_rule = Counter((g[0].code.code, g[0].code.kind, g[0].severity) for g in groups)
    rows = ["", "## Summary by rule", "", "| rule | kind | severity | facts | places |"]
    rows.append("| --- | --- | --- | --- | --- |")
    for (code, kind, severity), n in sorted(by_rule.items()):
        facts = facts_by_rule[code, kind, severity]
        rows.append(f"| {code} | {kind} | {severity} | {facts} | {n} |")
    out.add("\n".join(rows), force=True)

    by_symbol: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        by_symbol[f.symbol or "(none)"][f.code.code] += 1
    out.add("\n## Summary by sglang symbol\n\n| symbol | rules | findings |\n| --- | --- | --- |")
    ranked = sorted(by_symbol.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    shown = 0
    for symbol, rules in ranked:
        listed = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(rules.items()))
        row = f"| {md_code(_clip(symbol), cell=True)} | {listed} | {sum(rules.values())} |"
        if shown == _SYMBOLS or not out.add(row):
            break
        shown += 1
    if shown < len(ranked):
        rest = sum(sum(rules.values()) for _, rules in ranked[shown:])
        out.add(f"| and {len(ranked) - shown} more symbols | | {rest} |", force=True)

    out.add("\n## Findings")
    rank = {severity: i for i, severity in enumerate(SEVERITIES)}
    ordered = sorted(
        groups,
        key=lambda g: (rank[g[0].severity], g[0].code.code, g[0].symbol, g[0].path),
    )
    left_out = [group for group in ordered if not out.add(_fact_block(group))]
    if left_out:
        hidden = sum(len(group) for group in left_out)
        out.add(
            f"\nand {_plural(hidden, 'more finding')} ({_plural(len(left_out), 'fact')}) "
            "not shown here, to keep this page under GitHub's limit: "
            "`--format json` or `--format sarif` lists every one.",
            force=True,
        )
    return out.text()


def _fact_block(group: list[Finding]) -> str:
    first = group[0]
    summary = f"<code>{first.code.code}</code> {first.code.kind}"
    if first.symbol:
        summary += f": <code>{html_text(_clip(first.symbol))}</code>"
    summary += f" ({first.severity}, {_plural(len(group), 'place')})"
    lines = ["", "<details>", f"<summary>{summary}</summary>", ""]
    lines.append(f"{first.severity}, {first.confidence}: {md_message(_clip(first.message, _LONG))}")
    evidence = [
        f"old {md_code(_clip(first.old_location))}" if first.old_location else "",
        f"new {md_code(_clip(first.new_location))}" if first.new_location else "",
    ]
    evidence = [e for e in evidence if e]
    if evidence:
        lines += ["", "sglang evidence: " + ", ".join(evidence)]
    when = timeline_note(first)
    if when:
        lines += ["", when[0].upper() + when[1:] + "."]
    if first.fix:
        tag = ""
        if first.fix.autofixable:
            unsafe = " --unsafe-fixes" if first.fix_applicability == "unsafe" else ""
            tag = f" ({first.fix_applicability} autofix: `driftaudit fix --apply{unsafe}`)"
        lines += ["", f"Fix: {md_message(_clip(first.fix.description, _LONG))}{tag}"]
    lines += ["", f"{_plural(len(group), 'place')}:", ""]
    for f in group[:_PLACES]:
        own = f": {md_message(_clip(f.message))}" if f.message != first.message else ""
        lines.append(f"- {md_code(f'{_clip(f.path)}:{f.line}:{f.column}')}{own}")
    if len(group) > _PLACES:
        lines += ["", f"and {len(group) - _PLACES} more places."]
    lines += ["", "</details>"]
    return "\n".join(lines)


def changes_markdown(
    changes: list[Change], old: SourceTree, new: SourceTree, max_chars: int = MAX_CHARS
) -> str:
    """The sglang-side changelog: counts by kind, then the changes folded by sglang file
    (files with a break first), within `max_chars` as the findings are."""
    out = _Budget(max_chars - _RESERVE)
    out.add(
        f"# driftaudit diff: {_versions(old, new)}\n\n**{_plural(len(changes), 'change')}**.",
        force=True,
    )
    if not changes:
        return out.text()
    kinds = Counter((c.code.code, c.code.kind) for c in changes)
    rows = ["", "| rule | kind | changes |", "| --- | --- | --- |"]
    rows += [f"| {code} | {kind} | {n} |" for (code, kind), n in sorted(kinds.items())]
    out.add("\n".join(rows), force=True)
    by_file: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        location = change.old_location or change.new_location or change.symbol
        by_file[location.split(":")[0]].append(change)
    rank = {severity: i for i, severity in enumerate(SEVERITIES)}
    files = sorted(by_file, key=lambda f: (min(rank[c.code.severity] for c in by_file[f]), f))
    left_out = [file for file in files if not out.add(_file_block(file, by_file[file]))]
    if left_out:
        hidden = sum(len(by_file[file]) for file in left_out)
        out.add(
            f"\nand {_plural(hidden, 'more change')} in {_plural(len(left_out), 'file')} "
            "not shown here: `--format json` lists every one.",
            force=True,
        )
    return out.text()


def _file_block(file: str, changes: list[Change]) -> str:
    summary = f"<code>{html_text(_clip(file))}</code> ({_plural(len(changes), 'change')})"
    lines = ["", "<details>", f"<summary>{summary}</summary>", ""]
    lines += [
        f"- {c.code.code} {md_message(_clip(c.explain(), _LONG))}" for c in changes[:_CHANGES]
    ]
    if len(changes) > _CHANGES:
        lines += ["", f"and {len(changes) - _CHANGES} more changes in this file."]
    lines += ["", "</details>"]
    return "\n".join(lines)
