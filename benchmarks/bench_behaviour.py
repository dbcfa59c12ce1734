"""Benchmark the behaviour checks (DA701 copies, DA702 call-graph reach) inside `compare`:
the time of that stage against the whole compare, cold and warm, and the DA7xx counts.

    python benchmarks/bench_behaviour.py --sources ~/.cache/driftaudit/sources \
        --case specforge=/path/to/SpecForge@0.5.9..0.5.14 \
        --case miles=/path/to/miles@0.5.16..0.5.23

"Cold" is an empty snapshot cache (the unpacked releases in --sources are linked in, so
the network is not measured); "warm" is the same compare again. No packs are used.
Each run is its own process. CPU seconds are given beside wall time: on a shared
machine they are the steadier figure (the process's own CPU; the cold snapshot
extraction in worker processes is not counted in it). The behaviour stage's time is the
wall time the pipeline measures for it (`timings["behaviour"]`): on a cold run it runs in a
forked child alongside matching (`match/behaviour.py::behaviour_later`), so this process's
CPU does not hold it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_RUN = """
import json, sys, time
from collections import Counter
from pathlib import Path
from driftaudit import pipeline
consumer, old, new, cache, packs = sys.argv[1:]
start, start_cpu = time.perf_counter(), time.process_time()
result = pipeline.run_compare(Path(consumer), old, new, Path(cache), pack_dirs=[Path(packs)])
wall, total_cpu = time.perf_counter() - start, time.process_time() - start_cpu
codes = Counter(f.code.code for f in result.findings if f.code.code.startswith("DA7"))
print(json.dumps({"wall": wall, "cpu": total_cpu, **result.timings,
                  "findings": len(result.findings), **codes}))
"""


def run(consumer: str, old: str, new: str, cache: Path, packs: Path) -> dict:
    argv = [sys.executable, "-c", _RUN, consumer, old, new, str(cache), str(packs)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", required=True, help="NAME=PATH@OLD..NEW")
    parser.add_argument("--sources", type=Path, required=True, help="unpacked releases")
    args = parser.parse_args()
    for case in args.case:
        name, _, rest = case.partition("=")
        consumer, _, versions = rest.rpartition("@")
        old, _, new = versions.partition("..")
        with tempfile.TemporaryDirectory() as tmp:
            cache, packs = Path(tmp) / "cache", Path(tmp) / "no-packs"
            cache.mkdir()
            packs.mkdir()
            (cache / "sources").symlink_to(args.sources.resolve())
            for label in ("cold", "warm"):
                t = run(consumer, old, new, cache, packs)
                print(
                    f"{name:10} {label}: compare {t['wall']:6.2f} s wall "
                    f"({t['cpu']:6.2f} s cpu), behaviour {t['behaviour']:5.2f} s wall "
                    f"({t['behaviour'] / t['wall']:.0%}); "
                    f"findings {t['findings']}, DA701 {t.get('DA701', 0)}, "
                    f"DA702 {t.get('DA702', 0)}"
                )


if __name__ == "__main__":
    main()
