"""Progress on long work (wheel downloads, cold snapshot builds): one rich status line
on stderr, shown only when stderr is a terminal and not `--quiet`. Code deep in the
pipeline calls `step(text)`; it does nothing when no status is showing. The text may name
consumer files or specs from its config: it is shown as a `Text` (no markup), through
`escape.terminal`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_status = None
_FORCING = ("FORCE_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE")  # rich may see a terminal


@contextmanager
def progress(enabled: bool = True, console: Console | None = None) -> Iterator[None]:
    global _status
    if console is None:
        if not enabled or _status is not None or _plainly_no_terminal():
            yield  # rich not even imported: nothing would show
            return
        from rich.console import Console

        console = Console(stderr=True)
    if not enabled or not console.is_terminal or _status is not None:
        yield
        return
    with console.status("driftaudit: starting", spinner="dots") as status:
        _status = status
        try:
            yield
        finally:
            _status = None


def step(text: str) -> None:
    if _status is not None:
        from rich.text import Text

        from driftaudit.report.escape import terminal

        _status.update(Text(terminal(f"driftaudit: {text}")))


def _plainly_no_terminal() -> bool:
    """stderr is no terminal and nothing asks rich to act as if it were one."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return not tty and not any(os.environ.get(name) for name in _FORCING)
