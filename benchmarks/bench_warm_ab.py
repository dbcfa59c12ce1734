"""Two driftaudit source trees on the same warm command, runs interleaved (A, B, A, B,
...) so that a loaded machine weighs on both alike: median and best wall and CPU time.

    python benchmarks/bench_warm_ab.py --a /tmp/base --b . --runs 15 \
        --cache-a /tmp/cache-a --cache-b /tmp/cache-b -- \
        compare --offline --new 0.5.14 examples/sglang_consumer

Each tree runs with its own cache directory (the findings cache's entries carry the
tool's digest: one shared cache would make every run of the other tree cold); both
are warmed by one run first. CPU time is the process's user + system time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_RUN = """
import json, os, sys, time
from driftaudit.cli import main
start, cpu = time.perf_counter(), os.times()
code = main(sys.argv[1:])
end = os.times()
used = (end.user - cpu.user) + (end.system - cpu.system)
print(json.dumps({"code": code, "wall": time.perf_counter() - start, "cpu": used}),
      file=sys.stderr)
"""


def run(tree: str, cache: str, argv: list[str]) -> dict:
    """One run in a process of its own, the tree first on the path; its wall time from
    the process's start (imports included) and its CPU time."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), DRIFTAUDIT_CACHE_DIR=cache)
    start = os.times()
    import time

    begin = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *argv], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - begin
    end = os.times()
    inner = json.loads(proc.stderr.strip().splitlines()[-1])
    cpu = (end.children_user - start.children_user) + (end.children_system - start.children_system)
    return {"code": inner["code"], "wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", required=True, help="driftaudit source tree A (before)")
    parser.add_argument("--b", required=True, help="driftaudit source tree B (after)")
    parser.add_argument("--cache-a", required=True)
    parser.add_argument("--cache-b", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = [a for a in args.argv if a != "--"]
    sides = {"A": (args.a, args.cache_a), "B": (args.b, args.cache_b)}
    for tree, cache in sides.values():  # warm
        run(tree, cache, argv)
    times: dict[str, list[dict]] = {"A": [], "B": []}
    for _ in range(args.runs):
        for name, (tree, cache) in sides.items():
            times[name].append(run(tree, cache, argv))
    for name, rows in times.items():
        walls, cpus = [r["wall"] for r in rows], [r["cpu"] for r in rows]
        codes = sorted({r["code"] for r in rows})
        print(
            f"{name} {sides[name][0]}: wall median {statistics.median(walls):.3f} s "
            f"(best {min(walls):.3f}), cpu median {statistics.median(cpus):.3f} s "
            f"(best {min(cpus):.3f}), exit {codes}, {len(rows)} runs"
        )


if __name__ == "__main__":
    main()
