"""Benchmark the timeline (each finding's `introduced` and `deprecated`, read from every
release between old and new) against one compare without it: cold and warm wall time,
CPU time and peak RSS, each run its own process.

    python benchmarks/bench_timeline.py /path/to/miles --old 0.5.16 --new 0.5.23

"Cold" is an empty cache directory (snapshot store, findings) whose releases are
already unpacked (linked from --cache-dir: the network is not measured, as in
bench_compare.py); "warm" is the same command again. The issue's targets: the timeline
run costs at most 3x a compare cold and 1.5x warm, in at most 400 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_RUN = """
import json, resource, sys, time
from driftaudit.cli import main
start = time.perf_counter()
code = main(sys.argv[1:])
wall = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
peak = max(own.ru_maxrss, kids.ru_maxrss) / 1024
print(json.dumps({"code": code, "wall": wall, "cpu": cpu, "peak_mib": peak}), file=sys.stderr)
"""


def measure(argv: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *argv], capture_output=True, text=True, check=False
    )
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "{}"
    result = json.loads(last)
    if result.get("code") not in (0, 1):
        raise SystemExit(f"driftaudit failed: {proc.stderr.strip()}")
    document = json.loads(proc.stdout)
    result["findings"] = document["findings"]
    return result


def seed(shared: Path, cold: Path, versions: list[str]) -> None:
    """Link the unpacked releases (and the index listing) into an empty cache."""
    (cold / "sources").mkdir(parents=True, exist_ok=True)
    for version in versions:
        link = cold / "sources" / f"sglang-{version}"
        link.symlink_to(shared / "sources" / f"sglang-{version}", target_is_directory=True)
    listing = shared / "releases-sglang.json"
    if listing.is_file():
        shutil.copy(listing, cold / listing.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("consumer", type=Path)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--cache-dir", type=Path, help="where releases are (or get) unpacked")
    args = parser.parse_args()
    shared = args.cache_dir or Path(
        os.environ.get("DRIFTAUDIT_CACHE_DIR", Path.home() / ".cache" / "driftaudit")
    )
    from driftaudit.sources.releases import fetch_releases, releases_between

    versions = releases_between(args.old, args.new, shared, False, include_old=True)
    fetch_releases(versions, shared)  # unpacked once, outside the measure
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print(f"range: {' '.join(versions)} ({len(versions) - 2} releases in between)")
    compare = ["compare", "--old", args.old, "--new", args.new, "--format", "json", "-q"]
    results = {}
    for name, extra, seeded in (
        ("compare", ["--no-timeline"], [args.old, args.new]),
        ("timeline", [], versions),
    ):
        with tempfile.TemporaryDirectory(prefix="driftaudit-bench-") as tmp:
            seed(shared, Path(tmp), seeded)
            argv = ["--cache-dir", tmp, *compare, *extra, str(args.consumer)]
            results[name] = (measure(argv), measure(argv))
    for name, (cold, warm) in results.items():
        for label, run in (("cold", cold), ("warm", warm)):
            print(
                f"{name:8} {label}: wall {run['wall']:6.2f} s  cpu {run['cpu']:6.2f} s  "
                f"peak {run['peak_mib']:5.0f} MiB  ({len(run['findings'])} findings)"
            )
    base, timed = results["compare"], results["timeline"]
    for index, label, target in ((0, "cold", 3.0), (1, "warm", 1.5)):
        wall = timed[index]["wall"] / base[index]["wall"]
        cpu = timed[index]["cpu"] / base[index]["cpu"]
        print(f"timeline/compare {label}: wall {wall:.2f}x  cpu {cpu:.2f}x  (target <= {target}x)")
    peak = max(run["peak_mib"] for run in timed)
    print(f"timeline peak RSS: {peak:.0f} MiB (target <= 400)")
    dated = [f for f in timed[1]["findings"] if f.get("introduced")]
    print(f"findings dated: {len(dated)} of {len(timed[1]['findings'])}")


if __name__ == "__main__":
    main()
