"""Progress on long work (wheel downloads, cold snapshot builds): one rich status line
on stderr, shown only when stderr is a terminal and not `--quiet`. Code deep in the
pipeline calls `step(text)`; it does nothing when no status is showing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console

_status = None


@contextmanager
def progress(enabled: bool = True, console: Console | None = None) -> Iterator[None]:
    global _status
    console = console or Console(stderr=True)
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
        _status.update(f"driftaudit: {text}")
