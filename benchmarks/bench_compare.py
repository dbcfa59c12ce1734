"""Benchmark `driftaudit compare`: cold and warm wall time and peak memory, against
griffe loading the full sglang trees, on one machine in one run.

    python benchmarks/bench_compare.py \
        --case specforge=/path/to/SpecForge@0.5.9..0.5.14 \
        --case miles=/path/to/miles@0.5.16..0.5.23

Each case is NAME=CONSUMER@OLD..NEW. "Cold" means an empty snapshot cache (the
release sources are already unpacked, so the network is not measured); "warm" is
the same command run again. Each run is its own process, so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_RUN = """
import json, resource, sys, time
from driftaudit.cli import main
start = time.perf_counter()
code = main(sys.argv[1:])
wall = time.perf_counter() - start
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
child_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": code, "wall": wall, "peak_mib": max(peak_kib, child_kib) / 1024}),
      file=sys.stderr)
"""

_GRIFFE = """
import json, sys, time
from pathlib import Path
import griffe
root = Path(sys.argv[1])
start = time.perf_counter()
count = failed = 0
for path in sorted((root / "sglang").rglob("*.py")):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    try:
        griffe.visit(".".join(parts), path, path.read_text(encoding="utf-8", errors="replace"))
        count += 1
    except Exception:
        failed += 1
print(json.dumps({"modules": count, "failed": failed, "wall": time.perf_counter() - start}))
"""


def measure(argv: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *argv], capture_output=True, text=True, check=False
    )
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "{}"
    result = json.loads(last)
    if result.get("code") not in (0, 1):
        raise SystemExit(f"driftaudit failed: {proc.stderr.strip()}")
    result["findings"] = proc.stdout.count('"rule":')
    return result


def seed_sources(shared: Path, cold: Path, versions: list[str]) -> None:
    """Link already-unpacked releases into the cold cache: measure parsing, not network."""
    (cold / "sources").mkdir(parents=True, exist_ok=True)
    for version in versions:
        source = shared / "sources" / f"sglang-{version}"
        if not source.is_dir():
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "driftaudit",
                    "--cache-dir",
                    str(shared),
                    "diff",
                    "--old",
                    version,
                    "--new",
                    version,
                    "--module",
                    "sglang.none",
                ],
                check=True,
                capture_output=True,
            )
        link = cold / "sources" / f"sglang-{version}"
        if not link.exists():
            link.symlink_to(source, target_is_directory=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", required=True, help="NAME=PATH@OLD..NEW")
    parser.add_argument("--cache-dir", type=Path, help="where releases are (or get) unpacked")
    parser.add_argument("--skip-griffe", action="store_true")
    args = parser.parse_args()
    shared = args.cache_dir or Path(
        os.environ.get("DRIFTAUDIT_CACHE_DIR", Path.home() / ".cache" / "driftaudit")
    )
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    versions_seen: list[str] = []
    for case in args.case:
        name, _, rest = case.partition("=")
        consumer, _, pair = rest.rpartition("@")
        old, _, new = pair.partition("..")
        with tempfile.TemporaryDirectory(prefix="driftaudit-bench-") as tmp:
            cold_cache = Path(tmp)
            seed_sources(shared, cold_cache, [old, new])
            argv = [
                "--cache-dir",
                str(cold_cache),
                "compare",
                "--old",
                old,
                "--new",
                new,
                "--format",
                "json",
                consumer,
            ]
            cold = measure(argv)
            warm = measure(argv)
        print(
            f"{name} {old} -> {new}: {cold['findings']} findings\n"
            f"  cold: {cold['wall']:.2f} s, peak {cold['peak_mib']:.0f} MiB\n"
            f"  warm: {warm['wall']:.2f} s, peak {warm['peak_mib']:.0f} MiB"
        )
        versions_seen += [v for v in (old, new) if v not in versions_seen]
    if args.skip_griffe:
        return
    for version in versions_seen:
        root = shared / "sources" / f"sglang-{version}"
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _GRIFFE, str(root)], capture_output=True, text=True, check=True
        )
        result = json.loads(out.stdout)
        print(
            f"griffe, full tree of sglang {version}: {result['modules']} modules in "
            f"{result['wall']:.1f} s ({time.perf_counter() - start:.1f} s with start-up)"
        )


if __name__ == "__main__":
    main()
