"""`driftaudit history`: a name in every release of a range, on the console and as
JSON. A row is marked where the name changed from the release before, with the
aspects that changed and where the release defines it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit import __version__
from driftaudit.report.escape import json_text, terminal

if TYPE_CHECKING:
    from rich.console import Console

    from driftaudit.history.states import State
    from driftaudit.history.timeline import Row
    from driftaudit.pipeline import HistoryResult

SCHEMA_VERSION = 1


def shown_changes(changed: list[str], before: State, after: State) -> str:
    """The changed aspects in words: parameters added and removed by name, those whose
    kind, default or type changed by name, those only moved counted."""
    added = [a[6:] for a in changed if a.startswith("param:") and a not in before.aspects]
    removed = [a[6:] for a in changed if a.startswith("param:") and a not in after.aspects]
    other = [a[6:] for a in changed if a.startswith("param:") and a[6:] not in added + removed]
    moved = [a for a in changed if a.startswith("position:") and a[9:] not in added + removed]
    parts = [a for a in changed if not a.startswith(("param:", "position:"))]
    parts += [f"+{name}" for name in added] + [f"-{name}" for name in removed]
    parts += [f"{name} (kind, default or type)" for name in other]
    if moved:
        parts.append(f"{len(moved)} positions")
    return ", ".join(parts)


def changed_in(rows: list[Row]) -> list[str]:
    return [row.version for row in rows[1:] if row.changed]


def history_json(result: HistoryResult) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "driftaudit", "version": __version__},
        "symbol": result.name,
        "old": result.old.describe(),
        "new": result.new.describe(),
        "changed_in": changed_in(result.rows),
        "releases": [row.as_dict() for row in result.rows],
    }
    return json_text(document)


def render_history(console: Console, result: HistoryResult) -> None:
    from rich.text import Text

    rows = result.rows
    head = Text("driftaudit history", style="bold")
    head.append(f" {terminal(result.name)}: sglang {rows[0].version} -> {rows[-1].version}")
    console.print(head)
    console.print()
    width = max(len(row.version) for row in rows)
    previous = None
    for index, row in enumerate(rows):
        state = row.state
        if index and row.changed:
            mark = "+" if previous is not None and not previous.present else "~"
            mark = "-" if not state.present else mark
        else:
            mark = " "
        line = Text(f"{mark} {row.version:<{width}}  ", style="bold" if mark != " " else "")
        if state.present:
            line.append(terminal(state.text))
        else:
            line.append("(absent)", style="dim")
        console.print(line)
        details = []
        if state.location:
            details.append(state.location)
        if state.deprecated:
            details.append(f"deprecated: {state.deprecated}")
        if index and row.changed and state.present and previous is not None and previous.present:
            details.append("changed: " + shown_changes(row.changed, previous, state))
        if details:
            console.print(Text(" " * (width + 4) + terminal("; ".join(details)), style="dim"))
        previous = state
    console.print()
    changed = changed_in(rows)
    summary = f"changed in {', '.join(changed)}" if changed else "unchanged over the range"
    console.print(Text(f"{len(rows)} releases; {summary}"))
