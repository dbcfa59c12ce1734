"""Progress on long work (wheel downloads, cold snapshot builds). Code deep in the
pipeline calls `step(text)` to name the stage it enters; `progress()` shows it:

- on a terminal, one rich status line, redrawn in place;
- otherwise (CI logs, pre-commit), a plain line every `interval` seconds while a stage
  lasts (`driftaudit: <stage> (12s)`), so a cold run is never silent for long; a run
  that ends within the interval prints nothing;
- with `--quiet`, nothing.

`step` does nothing when no progress is showing. The text may name consumer files or
specs from its config: it is shown as a `Text` (no markup), through `escape.terminal`."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_status = None
_ticker: _Ticker | None = None
_FORCING = ("FORCE_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE")  # rich may see a terminal
INTERVAL = 5.0  # seconds between two lines in a log


class _Ticker:
    """Prints the current stage and the time spent in it, every `interval` seconds, from a
    daemon thread (the pipeline calls no hook while a wheel downloads or a child builds)."""

    def __init__(self, stream: IO[str], interval: float):
        self.stream, self.interval = stream, interval
        self.stage, self.since = "starting", time.monotonic()
        self.begun = self.since
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="driftaudit-progress", daemon=True)

    def __enter__(self) -> _Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def update(self, stage: str) -> None:
        with self._lock:
            self.stage, self.since = stage, time.monotonic()

    def line(self) -> str:
        from driftaudit.report.escape import terminal

        with self._lock:
            stage, since = self.stage, self.since
        now = time.monotonic()
        return terminal(f"driftaudit: {stage} ({now - since:.0f}s; {now - self.begun:.0f}s in all)")

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                print(self.line(), file=self.stream, flush=True)
            except (OSError, ValueError):  # stderr closed: progress is not worth failing for
                return


@contextmanager
def progress(
    enabled: bool = True,
    console: Console | None = None,
    interval: float | None = None,
) -> Iterator[None]:
    global _status, _ticker
    interval = INTERVAL if interval is None else interval
    if not enabled or _status is not None or _ticker is not None:
        yield
        return
    if console is None:
        if _plainly_no_terminal():
            with _Ticker(sys.stderr, interval) as ticker:  # rich not even imported
                _ticker = ticker
                try:
                    yield
                finally:
                    _ticker = None
            return
        from rich.console import Console

        console = Console(stderr=True)
    if not console.is_terminal:
        with _Ticker(console.file, interval) as ticker:
            _ticker = ticker
            try:
                yield
            finally:
                _ticker = None
        return
    with console.status("driftaudit: starting", spinner="dots") as status:
        _status = status
        try:
            yield
        finally:
            _status = None


def step(text: str) -> None:
    if _ticker is not None:
        _ticker.update(text)
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
