"""Terminal output with rich: findings grouped by consumer file.

Every line is a `Text` (rich reads no markup or emoji code in it) whose consumer parts
went through `escape.terminal`."""

from __future__ import annotations

from collections import defaultdict
from itertools import groupby

from rich.console import Console
from rich.text import Text

from driftaudit.drift import Change
from driftaudit.findings import Finding, facts_summary, group_facts, timeline_note
from driftaudit.report.escape import terminal
from driftaudit.sources import SourceTree

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _tree_label(tree: SourceTree) -> str:
    given = tree.provenance.label() if tree.provenance else ""
    given = f", {given}" if given else ""
    return terminal(f"{tree.version or '?'} ({tree.origin}: {tree.spec}{given})")


def _header(command: str, rest: str) -> Text:
    line = Text(command, style="bold")
    line.append(rest)
    return line


def render_console(
    console: Console, findings: list[Finding], old: SourceTree, new: SourceTree, consumer: str
) -> None:
    console.print(
        _header(
            "driftaudit",
            f" {terminal(consumer)}: sglang {_tree_label(old)} -> {_tree_label(new)}",
        )
    )
    facts = group_facts(findings)
    places = {id(group[0]): group for group in facts}
    for path, group in groupby([g[0] for g in facts], key=lambda f: f.path):
        console.print()
        console.print(Text(terminal(path), style="bold underline"))
        for finding in group:
            line = Text(f"  {finding.line}:{finding.column} ")
            line.append(f"{finding.code.code} ", style=_STYLE[finding.severity])
            line.append(f"[{finding.severity}] ", style=_STYLE[finding.severity])
            line.append(terminal(finding.message))
            console.print(line)
            if finding.symbol:
                console.print(Text(f"      symbol: {terminal(finding.symbol)}", style="dim"))
            evidence = []
            if finding.old_location:
                evidence.append(f"old {terminal(finding.old_location)}")
            if finding.new_location:
                evidence.append(f"new {terminal(finding.new_location)}")
            if evidence:
                console.print(Text("      sglang: " + ", ".join(evidence), style="dim"))
            when = timeline_note(finding)
            if when:
                console.print(Text(f"      {terminal(when)}", style="dim"))
            if finding.fix:
                applicability = finding.fix_applicability
                tag = f" (autofixable, {applicability} fix)" if applicability else ""
                fix = terminal(finding.fix.description)
                console.print(Text(f"      fix: {fix}{tag}", style="green"))
            for other in places[id(finding)][1:]:
                where = f"{terminal(other.path)}:{other.line}:{other.column}"
                own = f": {terminal(other.message)}" if other.message != finding.message else ""
                console.print(Text(f"      also at {where}{own}"))
    console.print()
    console.print(facts_summary(findings))


def render_changes(console: Console, changes: list[Change], old: SourceTree, new: SourceTree):
    console.print(_header("driftaudit diff", f": sglang {_tree_label(old)} -> {_tree_label(new)}"))
    by_module: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        location = change.old_location or change.new_location or change.symbol
        by_module[location.split(":")[0]].append(change)
    for file in sorted(by_module):
        console.print()
        console.print(Text(terminal(file), style="bold underline"))
        for change in by_module[file]:
            line = Text(f"  {change.code.code} ", style=_STYLE[change.code.severity])
            line.append(terminal(change.explain()))
            console.print(line)
    kinds: dict[str, int] = defaultdict(int)
    for change in changes:
        kinds[change.code.kind] += 1
    console.print()
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    console.print(Text(f"{len(changes)} changes" + (f": {summary}" if summary else "")))
