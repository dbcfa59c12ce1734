"""`python -m driftaudit` and the `driftaudit` command."""

import gc
import sys


def run() -> int:
    # The command owns the collector (cli.main tunes it); until then it is off: importing
    # the stages creates tens of thousands of objects and no garbage, and the default
    # thresholds would collect ~20 times for nothing (10 ms of a 0.3 s warm run).
    gc.disable()
    from driftaudit.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
