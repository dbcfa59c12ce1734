"""How often `driftaudit compare` opens each consumer file, and its wall time.

    python benchmarks/bench_consumer_reads.py /path/to/miles --old 0.5.16 --new 0.5.23

Every `open`/`os.open` of a path under the consumer is counted (the consumer index,
the pin readers, config loading); prints the histogram of opens per file, the files
opened more than once, and the wall time of the run (warm when the cache is).
"""

from __future__ import annotations

import argparse
import builtins
import collections
import io
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("consumer", type=Path)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    args = parser.parse_args()
    root = str(args.consumer.resolve()) + os.sep
    opens: collections.Counter[str] = collections.Counter()

    def counted(original):
        def wrapper(file, *a, **kw):
            if isinstance(file, (str, os.PathLike)):
                path = os.path.abspath(os.fspath(file))
                if path.startswith(root) and not os.path.isdir(path):
                    opens[path[len(root) :]] += 1
            return original(file, *a, **kw)

        return wrapper

    builtins.open = io.open = counted(io.open)
    os.open = counted(os.open)

    from driftaudit.cli import main as cli

    start = time.perf_counter()
    cli(["compare", "--old", args.old, "--new", args.new, str(args.consumer),
         "--format", "json", "--output", os.devnull])  # fmt: skip
    wall = time.perf_counter() - start
    histogram = collections.Counter(opens.values())
    print(f"wall time: {wall:.2f} s")
    print(f"files opened: {len(opens)}")
    for times, files in sorted(histogram.items()):
        print(f"  opened {times}x: {files} files")
    for path, times in sorted(opens.items()):
        if times > 1:
            print(f"  {times}x {path}")


if __name__ == "__main__":
    main()
