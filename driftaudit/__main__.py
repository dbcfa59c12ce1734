"""`python -m driftaudit` and the `driftaudit` command."""

import gc
import os
import sys


def _drop_working_directory() -> None:
    """`python -m driftaudit` puts the working directory first on `sys.path` (`python -c`
    puts `''`): in CI that is the audited checkout, and every module imported later
    (driftaudit imports most lazily: `difflib`, `zipfile`, griffe, ...), in this process
    and in the forked children, would be looked for there first. Relative entries and
    the working directory itself go; driftaudit is imported already, and its own
    modules are found through its package, not through `sys.path`. (A consumer's own
    `driftaudit/` shadows the package before this runs: the `driftaudit` command, or
    `python -P`, has no such entry.)"""
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed
        cwd = None
    sys.path[:] = [
        entry
        for entry in sys.path
        if os.path.isabs(entry) and (cwd is None or os.path.realpath(entry) != cwd)
    ]


def run() -> int:
    _drop_working_directory()
    # The command owns the collector (cli.main tunes it); until then it is off: importing
    # the stages creates tens of thousands of objects and no garbage, and the default
    # thresholds would collect ~20 times for nothing (10 ms of a 0.3 s warm run).
    gc.disable()
    from driftaudit.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
