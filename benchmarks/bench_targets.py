"""Benchmark the speed targets: `driftaudit compare` warm and cold against the consumer's
`ast.parse` floor, griffe visiting both sglang trees, and a type checker run against each
tree, side by side in one run on one machine.

    python benchmarks/bench_targets.py                    # the two default consumers
    python benchmarks/bench_targets.py --case specforge=/path/to/SpecForge@0.5.9..0.5.14 \
        --type-checker mypy --repeat 3

Each case is NAME=CONSUMER@OLD..NEW. Every figure comes from its own process, timed from
outside (interpreter start-up and imports included) with its own peak RSS:

- floor: read and `ast.parse` every Python file of the consumer (the time of that loop);
- cold: `compare` with an empty snapshot cache (releases already unpacked, linked in: the
  network is not measured), on a copy of the consumer (the benchmark edits it); the best
  of `--repeat` runs, each on a fresh cache. Its CPU includes the child process that
  builds the trees' surfaces alongside (store/ahead.py, two cores or more);
- warm: the same command again, nothing changed: the findings cache answers (the best of
  `--repeat` runs);
- warm, no findings cache: `--no-cache`, every stage run on the cached snapshots;
- one file edited: a comment appended to a consumer file that imports sglang, then the
  same command (each repeat edits again);
- griffe: `griffe.visit` of every module of both trees (what a cold run would cost if it
  visited everything), the best of `--repeat` runs like the cold run it is compared with;
- peer: a type checker (mypy or pyright, in a venv of the benchmark's own under the cache)
  run on the consumer's files that mention sglang, once with each unpacked release on its
  path (extraPaths / MYPYPATH): what diffing its diagnostics would cost.

Targets: warm <= 2.5x the floor (<= 2x on miles), cold <= 0.2x griffe, peak <= 300 MB.
`--driftaudit-path DIR` runs another copy of driftaudit (e.g. `git archive` of a base
commit) for a before/after comparison. Figures on a loaded machine: wall time moves with
the load, CPU time (user + sys) much less; both are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from checkers import checker_command, checker_venv

DEFAULT_CASES = [
    "specforge-f3c4=/work/consumers/specforge-f3c4@0.5.9..0.5.14",
    "miles-31f1=/work/consumers/miles-31f1@0.5.16..0.5.23",
]
WARM_TARGET = {"miles-31f1": 2.0}  # by case name; others 2.5
COLD_TARGET = 0.2
PEAK_TARGET_MB = 300

# Runs a command, reports its wall time, CPU time and peak RSS (its descendants included).
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024,
                  "stderr": proc.stderr.decode(errors="replace")[-2000:]}))
"""

# The floor: read and parse every Python file a walk of the consumer finds.
_FLOOR = """
import ast, json, os, sys, time
SKIP = {".git", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist"}
start = time.perf_counter()
cpu = time.process_time()
count = 0
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    dirnames[:] = [d for d in dirnames if d not in SKIP and not d.startswith(".")]
    for name in filenames:
        if name.endswith(".py"):
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read()
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                pass
            count += 1
print(json.dumps({"files": count, "wall": time.perf_counter() - start,
                  "cpu": time.process_time() - cpu}))
"""

_GRIFFE = """
import json, sys, time
from pathlib import Path
import griffe
start = time.perf_counter()
count = 0
for root in map(Path, sys.argv[1:]):
    for path in sorted((root / "sglang").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        try:
            griffe.visit(".".join(parts), path, path.read_text(encoding="utf-8", errors="replace"))
            count += 1
        except Exception:
            pass
print(json.dumps({"modules": count, "inner": time.perf_counter() - start}))
"""


def measure(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    return json.loads(proc.stdout)


def driftaudit_env(path: Path | None, bytecode: bool) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    if bytecode:  # as `pip install .` leaves it: every module compiled, imports read .pyc
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        compile_all = "import compileall, driftaudit, os; compileall.compile_dir(" \
            "os.path.dirname(driftaudit.__file__), quiet=1)"  # fmt: skip
        subprocess.run([sys.executable, "-c", compile_all], env=env, check=True,
                       cwd=tempfile.gettempdir())  # fmt: skip
    return env


def run_compare(argv: list[str], env: dict) -> dict:
    # from a neutral folder: `-m` puts the working directory first on sys.path, and a
    # checkout there would shadow --driftaudit-path
    cwd = Path(tempfile.gettempdir())
    result = measure([sys.executable, "-m", "driftaudit", *argv], env=env, cwd=cwd)
    if result["rc"] not in (0, 1):
        raise SystemExit(f"driftaudit failed: {result['stderr'].strip()}")
    return result


def seed_sources(shared: Path, cold: Path, versions: list[str]) -> None:
    """Link the already-unpacked releases into the cold cache: measure parsing, not network."""
    (cold / "sources").mkdir(parents=True, exist_ok=True)
    for version in versions:
        source = shared / "sources" / f"sglang-{version}"
        if not source.is_dir():
            raise SystemExit(f"sglang {version} is not unpacked in {shared}: run a compare once")
        link = cold / "sources" / f"sglang-{version}"
        if not link.exists():
            link.symlink_to(source, target_is_directory=True)


def run_checker(kind: str, exe: Path, tree: Path, sglang_root: Path, work: Path) -> dict:
    """One checker run over the consumer with sglang_root on its path."""
    argv, env, cwd = checker_command(kind, exe, tree, sglang_root, work)
    return measure(argv, env=env, cwd=cwd)


def copy_consumer(consumer: Path, target: Path) -> Path:
    """A copy the benchmark may edit (never the consumer itself), without VCS folders."""
    shutil.copytree(consumer, target, symlinks=True, ignore=shutil.ignore_patterns(".git", ".hg"))
    return target


_IMPORTS_SGLANG = re.compile(r"^(?:from|import)\s+sglang\b", re.M)


def file_to_edit(consumer: Path) -> Path:
    """The largest Python file that imports sglang: what a developer edits."""
    candidates = [
        p
        for p in consumer.rglob("*.py")
        if p.is_file() and _IMPORTS_SGLANG.search(p.read_text(errors="ignore"))
    ]
    return max(candidates, key=lambda p: (p.stat().st_size, str(p)))


def edit(path: Path, count: int) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"\n# edited by bench_targets ({count})\n")


def findings_of(report: Path) -> list:
    return json.loads(report.read_text())["findings"]


def parse_case(text: str) -> tuple[str, Path, str, str]:
    name, _, rest = text.partition("=")
    consumer, _, pair = rest.rpartition("@")
    old, _, new = pair.partition("..")
    return name, Path(consumer), old, new


def fmt(result: dict) -> str:
    return f"{result['wall']:6.2f} s wall {result['cpu']:6.2f} s cpu {result['peak_mb']:5.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="NAME=PATH@OLD..NEW")
    parser.add_argument("--cache-dir", type=Path, help="where the releases are unpacked")
    parser.add_argument("--repeat", type=int, default=1, help="warm runs and floors: best of N")
    parser.add_argument("--type-checker", choices=["mypy", "pyright", "none"], default="mypy")
    parser.add_argument("--skip-griffe", action="store_true")
    parser.add_argument("--driftaudit-path", type=Path, help="PYTHONPATH for another copy")
    parser.add_argument(
        "--bytecode",
        action="store_true",
        help="compile driftaudit's modules first, as `pip install .` does, and let it read "
        "the .pyc even when PYTHONDONTWRITEBYTECODE is set",
    )
    args = parser.parse_args()
    shared = args.cache_dir or Path(
        os.environ.get("DRIFTAUDIT_CACHE_DIR", Path.home() / ".cache" / "driftaudit")
    )
    env = driftaudit_env(args.driftaudit_path, args.bytecode)
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load {load:.1f}, python {sys.version.split()[0]}")
    if not args.bytecode and os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: driftaudit compiles its modules on every run")
    exe = None
    if args.type_checker != "none":
        exe = checker_venv(args.type_checker, shared)
    for case in args.case or DEFAULT_CASES:
        name, consumer, old, new = parse_case(case)
        floor_runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _FLOOR, str(consumer)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(args.repeat)
        ]
        floor = min(floor_runs, key=lambda r: r["wall"])
        floor_cpu = min(r["cpu"] for r in floor_runs)
        with tempfile.TemporaryDirectory(prefix="driftaudit-bench-") as tmp:
            copy = copy_consumer(consumer, Path(tmp) / "consumer")
            report = Path(tmp) / "report.json"
            colds, cold_findings = [], []
            for count in range(args.repeat):  # each on a fresh cache; the last one stays
                cold_cache = Path(tmp) / f"cache-{count}"
                seed_sources(shared, cold_cache, [old, new])
                argv = ["--cache-dir", str(cold_cache), "compare", "--old", old, "--new", new]
                argv += ["--format", "json", "--output", str(report), str(copy)]
                colds.append(run_compare(argv, env))
                cold_findings.append(findings_of(report))
            cold = min(colds, key=lambda r: r["wall"])
            cold_cpu = min(r["cpu"] for r in colds)
            expected = cold_findings[0]
            same = all(found == expected for found in cold_findings)
            findings = len(expected)
            warms = [run_compare(argv, env) for _ in range(args.repeat)]
            same = same and findings_of(report) == expected
            if args.driftaudit_path is None:  # another copy may not know --no-cache
                uncached = [run_compare([*argv, "--no-cache"], env) for _ in range(args.repeat)]
                same = same and findings_of(report) == expected
            else:
                uncached = warms
            edited_file = file_to_edit(copy)
            edited = []
            for count in range(args.repeat):
                edit(edited_file, count)
                edited.append(run_compare(argv, env))
                same = same and findings_of(report) == expected
        warm = min(warms, key=lambda r: r["wall"])
        warm_cpu = min(r["cpu"] for r in warms)
        warm_target = WARM_TARGET.get(name, 2.5)
        print(f"\n{name}: {consumer} sglang {old} -> {new}, {findings} findings")
        print(
            f"  floor (ast.parse {floor['files']} files): {floor['wall']:6.2f} s wall "
            f"{floor_cpu:6.2f} s cpu"
        )
        print(
            f"  warm compare:  {fmt(warm)}  = {warm['wall'] / floor['wall']:.1f}x floor wall, "
            f"{warm_cpu / floor_cpu:.1f}x cpu (target <= {warm_target}x)"
        )
        for label, runs in (("warm, --no-cache", uncached), ("one file edited", edited)):
            best = min(runs, key=lambda r: r["cpu"])
            print(f"  {label}: {fmt(best)}  = {best['cpu'] / floor_cpu:.1f}x floor cpu")
        print(f"  (edited: {edited_file.relative_to(copy)}, a comment appended)")
        print(f"  findings of every other run identical to the first cold run's: {same}")
        print(f"  cold compare:  {fmt(cold)}  (best of {len(colds)}; cpu best {cold_cpu:.2f} s)")
        if not args.skip_griffe:
            roots = [str(shared / "sources" / f"sglang-{v}") for v in (old, new)]
            # best of N too: one slow run on a noisy machine would flatter the ratio
            griffes = [measure([sys.executable, "-c", _GRIFFE, *roots]) for _ in range(args.repeat)]
            griffe = min(griffes, key=lambda r: r["wall"])
            print(f"  griffe, both trees: {fmt(griffe)}  (best of {len(griffes)})")
            print(
                f"  cold / griffe: {cold['wall'] / griffe['wall']:.2f}x wall, "
                f"{cold_cpu / griffe['cpu']:.2f}x cpu (target <= {COLD_TARGET}x)"
            )
        print(
            f"  peak memory: warm {max(r['peak_mb'] for r in warms + uncached + edited):.0f} MB, "
            f"cold {max(r['peak_mb'] for r in colds):.0f} MB "
            f"(target <= {PEAK_TARGET_MB} MB)"
        )
        if exe is not None:
            with tempfile.TemporaryDirectory(prefix="driftaudit-peer-") as tmp:
                runs = [
                    run_checker(
                        args.type_checker,
                        exe,
                        consumer,
                        shared / "sources" / f"sglang-{v}",
                        Path(tmp),
                    )
                    for v in (old, new)
                ]
            total = {
                "wall": sum(r["wall"] for r in runs),
                "cpu": sum(r["cpu"] for r in runs),
                "peak_mb": max(r["peak_mb"] for r in runs),
            }
            print(
                f"  peer, {args.type_checker} against each tree: {fmt(total)}"
                f"  (driftaudit cold is {cold['wall'] / total['wall']:.2f}x, "
                f"warm {warm['wall'] / total['wall']:.2f}x)"
            )


if __name__ == "__main__":
    main()
