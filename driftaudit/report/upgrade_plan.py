"""`driftaudit plan` (history/plan.py) on the console, as JSON (`plan` schema) and as
Markdown: the facts by the release that brings them, then each step with its fix command,
its breaks and the deprecated spellings to move off on its release."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from driftaudit.report.escape import json_text, md_code, md_message, md_text, terminal

if TYPE_CHECKING:
    from rich.console import Console

    from driftaudit.history.plan import Fact, Plan, Step
    from driftaudit.sources import SourceTree


def fix_command(step: Step, consumer: str) -> str | None:
    """The fix of one step: the audit of exactly its upgrade (None: a step that stays)."""
    if not step.upgrades:
        return None
    return f"driftaudit fix --old {step.start} --new {step.stop} {shlex.quote(consumer)}"


def _codes(facts: list[Fact]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for fact in facts:
        counts[fact.lead.code.code] = counts.get(fact.lead.code.code, 0) + 1
    return dict(sorted(counts.items()))


def _fact_dict(fact: Fact, number: int) -> dict:
    return fact.lead.as_dict() | {
        "fact": number,
        "autofixable": fact.autofixable,
        "places": [{"path": f.path, "line": f.line, "column": f.column} for f in fact.places],
    }


def plan_json(plan: Plan, old: SourceTree, new: SourceTree, consumer: str) -> str:
    from driftaudit.report.json_report import opening

    numbers = {id(fact): number for number, fact in enumerate([*plan.facts, *plan.transient])}

    def facts(shown: list[Fact]) -> list[dict]:
        return [_fact_dict(fact, numbers[id(fact)]) for fact in shown]

    document = opening() | {
        "old": old.report(),
        "new": new.report(),
        "consumer": consumer,
        "releases": plan.releases,
        "facts": len(plan.facts),
        "by_release": [
            {"release": version, "facts": len(facts), "by_code": _codes(facts)}
            for version, facts in plan.by_release()
        ],
        "steps": [
            {
                "step": step.number,
                "from": step.start,
                "to": step.stop,
                "fix_command": fix_command(step, consumer),
                "breaks": len(step.breaks),
                "places": sum(len(f.places) for f in step.breaks),
                "by_code": step.by_code,
                "autofixable": step.autofixable,
                "break_facts": facts(step.breaks),
                "moves": facts(step.moves),
                "transient": facts(step.transient),
            }
            for step in plan.steps
        ],
        "undated": facts(plan.undated),
    }
    return json_text(document)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{code} {n}" if n > 1 else code for code, n in counts.items())


def _where(fact: Fact) -> str:
    lead = fact.lead
    more = len(fact.places) - 1
    more_text = f" (and {more} more {'place' if more == 1 else 'places'})" if more else ""
    return f"{lead.path}:{lead.line}:{lead.column}{more_text}"


def _step_title(step: Step, arrow: str = "->") -> str:
    if not step.upgrades:
        return f"Step {step.number}: stay on {step.stop}"
    return f"Step {step.number}: {step.start} {arrow} {step.stop}"


def _step_summary(step: Step) -> str:
    if not step.upgrades:
        return "nothing breaks; move off the deprecated spellings before upgrading"
    codes = f" ({_counts(step.by_code)})" if step.breaks else ""
    return f"{len(step.breaks)} facts break{codes}, {step.autofixable} autofixable"


def _move_note(fact: Fact, plan: Plan) -> str:
    assert fact.deprecated is not None and fact.introduced is not None
    return (
        f"deprecated since {plan.releases[fact.deprecated]}, "
        f"gone in {plan.releases[fact.introduced]}"
    )


def render_plan(console: Console, plan: Plan, old: SourceTree, new: SourceTree, consumer: str):
    from rich.text import Text

    head = Text("driftaudit plan", style="bold")
    head.append(f": sglang {plan.releases[0]} -> {plan.releases[-1]}, {terminal(consumer)}")
    console.print(head)
    console.print(
        f"{len(plan.facts)} facts over {len(plan.releases) - 1} releases; {len(plan.steps)} steps"
    )
    console.print()
    console.print(Text("By release", style="bold"))
    shown = plan.by_release()
    width = max([len(v) for v, _ in shown] + [7])
    for version, facts in shown:
        console.print(
            Text(f"  {version:<{width}}  {len(facts):>3} facts  {_counts(_codes(facts))}")
        )
    if plan.undated:
        undated = plan.undated
        console.print(
            Text(f"  {'undated':<{width}}  {len(undated):>3} facts  {_counts(_codes(undated))}")
        )
    for step in plan.steps:
        console.print()
        line = Text(_step_title(step), style="bold")
        line.append(f"  {_step_summary(step)}", style="")
        console.print(line)
        command = fix_command(step, consumer)
        if command:
            console.print(Text(f"  fix: {terminal(command)}"))
        for fact in step.breaks:
            lead = fact.lead
            mark = " (autofix)" if fact.autofixable else ""
            console.print(
                Text(
                    terminal(
                        f"  {lead.introduced} {lead.code.code} {lead.severity} "
                        f"{_where(fact)}{mark}: {lead.message}"
                    )
                )
            )
        if step.moves:
            console.print(Text(f"  then, on {step.stop}, move off (the old spelling still works):"))
            for fact in step.moves:
                lead = fact.lead
                fix = f": {lead.fix.description}" if lead.fix else ""
                console.print(
                    Text(
                        terminal(
                            f"    {lead.code.code} {lead.symbol} at {_where(fact)} "
                            f"({_move_note(fact, plan)}){fix}"
                        )
                    )
                )
        if step.transient:
            console.print(Text(f"  and on {step.stop} alone (a later release undoes it):"))
            for fact in step.transient:
                lead = fact.lead
                console.print(
                    Text(terminal(f"    {lead.code.code} {_where(fact)}: {lead.message}"))
                )
    if plan.undated:
        console.print()
        console.print(Text("Undated (the release that brings them is not known)", style="bold"))
        for fact in plan.undated:
            lead = fact.lead
            console.print(Text(terminal(f"  {lead.code.code} {_where(fact)}: {lead.message}")))


def plan_markdown(plan: Plan, old: SourceTree, new: SourceTree, consumer: str) -> str:
    lines = [
        f"## driftaudit plan: sglang {md_text(plan.releases[0])} → {md_text(plan.releases[-1])}",
        "",
        f"{len(plan.facts)} facts over {len(plan.releases) - 1} releases; {len(plan.steps)} steps.",
        "",
        "| release | facts | codes |",
        "| --- | --- | --- |",
    ]
    for version, facts in plan.by_release():
        lines.append(f"| {md_text(version)} | {len(facts)} | {_counts(_codes(facts))} |")
    if plan.undated:
        lines.append(f"| undated | {len(plan.undated)} | {_counts(_codes(plan.undated))} |")
    for step in plan.steps:
        lines += [
            "",
            f"### {md_text(_step_title(step, '→'))}",
            "",
            md_text(_step_summary(step)) + ".",
        ]
        command = fix_command(step, consumer)
        if command:
            lines += ["", f"Fix: {md_code(command)}"]
        if step.breaks:
            lines.append("")
        for fact in step.breaks:
            lead = fact.lead
            lines.append(
                f"- {md_text(lead.introduced or '')} `{lead.code.code}` {md_code(_where(fact))}: "
                f"{md_message(lead.message)}"
            )
        if step.moves:
            lines += [
                "",
                f"Then, on {md_text(step.stop)}, move off (the old spelling still works):",
            ]
            for fact in step.moves:
                lead = fact.lead
                fix = f": {md_message(lead.fix.description)}" if lead.fix else ""
                lines.append(
                    f"- {md_code(lead.symbol)} at {md_code(_where(fact))} "
                    f"({_move_note(fact, plan)}){fix}"
                )
        if step.transient:
            lines += ["", f"And on {md_text(step.stop)} alone (a later release undoes it):"]
            for fact in step.transient:
                lead = fact.lead
                lines.append(
                    f"- `{lead.code.code}` {md_code(_where(fact))}: {md_message(lead.message)}"
                )
    return "\n".join(lines) + "\n"
