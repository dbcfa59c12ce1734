"""`driftaudit diff` on every consecutive pair of real releases, timed.

    python benchmarks/bench_releases.py [--cache-dir DIR] [--cold] [VERSION ...]

--cold starts from an empty snapshot store (the unpacked releases are reused).
Prints one line per pair: seconds and the number of changes.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from driftaudit.pipeline import run_diff
from driftaudit.store.db import default_cache_dir

RELEASES = ["0.5.2", "0.5.4.post1", "0.5.5", "0.5.9", "0.5.14", "0.5.15", "0.5.16", "0.5.22",
            "0.5.23"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("versions", nargs="*", default=RELEASES)
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    cache = args.cache_dir
    if args.cold:
        cache = Path(tempfile.mkdtemp(prefix="driftaudit-bench-"))
        (cache / "sources").symlink_to((args.cache_dir / "sources").resolve())
    total = 0.0
    try:
        for old, new in zip(args.versions, args.versions[1:], strict=False):
            start = time.perf_counter()
            _, _, changes = run_diff(old, new, cache, None)
            elapsed = time.perf_counter() - start
            total += elapsed
            print(f"{old:>12} -> {new:<12} {elapsed:7.1f} s  {len(changes):6d} changes")
        print(f"{'total':>28} {total:7.1f} s  ({'cold' if args.cold else 'warm'} store)")
    finally:
        if args.cold:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
