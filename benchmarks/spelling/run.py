"""The spelling corpus: mine a release pair's changes, write consumer code reaching each in
every spelling, score driftaudit and the diffed type checkers per (change kind x spelling).

    python benchmarks/spelling/run.py --old 0.5.22 --new 0.5.23 --cache-dir DIR \\
        [--per-kind 3] [--checkers ty,pyrefly] [--out corpus/] [--markdown RESULTS-part.md]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import generate  # noqa: E402
import mine  # noqa: E402
import score  # noqa: E402
import spellings  # noqa: E402
from typecheck import new_diagnostics  # noqa: E402


def release_root(cache_dir: Path, version: str) -> Path:
    """The unpacked tree of a release (`driftaudit diff` unpacked it into the cache)."""
    root = cache_dir / "sources" / f"sglang-{version}"
    if not (root / "sglang").is_dir():
        sys.exit(f"error: no unpacked sglang {version} under {cache_dir}/sources")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--per-kind", type=int, default=3, help="changes per breaking kind")
    parser.add_argument("--checkers", default="ty,pyrefly", help="comma-separated; '' for none")
    parser.add_argument("--out", type=Path, help="keep the corpus here (default: a temp dir)")
    parser.add_argument("--markdown", type=Path, help="write the table here too")
    args = parser.parse_args(argv)

    started = time.time()
    changes = mine.diff_json(args.old, args.new, args.cache_dir)["changes"]
    old_root = release_root(args.cache_dir, args.old)
    new_root = release_root(args.cache_dir, args.new)
    targets = mine.targets(changes, old_root, args.per_kind, new_root)
    targets += mine.newly_read(old_root, new_root, args.per_kind)
    corpus = args.out or Path(tempfile.mkdtemp(prefix="spelling-"))
    if corpus.exists() and args.out:
        shutil.rmtree(corpus)
    cases = generate.write(targets, corpus)
    print(f"{len(changes)} changes, {len(targets)} targets, {len(cases)} cases in {corpus}")

    near = generate.near_files(targets, corpus)
    findings = score.driftaudit_findings(corpus, args.old, args.new, args.cache_dir)
    columns = {"driftaudit": score.driftaudit_hits(cases, findings)}
    false = {"driftaudit": len(score.false_findings(near, findings))}
    files = sorted(
        {case.file for case in cases} | {str(p.relative_to(corpus)) for p in corpus.rglob("*.py")}
    )
    for kind in filter(None, args.checkers.split(",")):
        new = new_diagnostics(kind, args.cache_dir, corpus, old_root, new_root, files)
        columns[kind] = score.checker_hits(cases, {(f, line) for f, line, _ in new})
        false[kind] = sum(1 for f, _, _ in new if f in near)
    text = score.table(cases, columns, spellings.STRING_SPELLINGS)
    text += (
        f"\n\nnear misses (code that does not break): {len(near)} files; findings there: "
        + ", ".join(f"{name} {count}" for name, count in false.items())
    )
    header = f"sglang {args.old} -> {args.new}: {len(targets)} changes, {len(cases)} cases"
    print(header)
    print(text)
    missed = [c for c, hit in zip(cases, columns["driftaudit"], strict=True) if not hit]
    for case in missed:
        print(
            f"missed: {case.target.kind} {case.target.symbol} [{case.spelling}]",
            f"{case.file}:{case.line}",
        )
    if args.markdown:
        args.markdown.write_text(f"{header}\n\n{text}\n")
    for line in score.false_findings(near, findings):
        print(f"false: {line}")
    print(f"{time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
