"""Differential harness: type-checker diagnostics new on a later sglang release that no
driftaudit finding covers, over real consumer code and without labels.

For each consumer (a bare mirror, `owner/name[@commit][#old]`, HEAD by default) read its
sglang pin (`#old`, else `--old`, overrides it), and for each later release in `--new`
(`next` = the next release unpacked in the cache) run `driftaudit compare --format json
--show-info` and each checker on both trees (`benchmarks/typecheck.py`), restricted to the
consumer files that import sglang. A new diagnostic is covered when a finding sits in the
same file within the lines of the diagnostic's statement (a compound statement's header
only). Prints a table per consumer x pair and writes the uncovered diagnostics (file:line,
message, source line) as JSON and Markdown: the input of TRIAGE.md. A partial mirror whose
`git archive` fails on a blob it never fetched is read file by file (sources only).

    python benchmarks/differential/run.py --consumer THUDM/slime ... \
        --new next,0.5.23 [--old 0.5.9] [--checkers ty,pyrefly] \
        [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/

from accuracy.run import checkout, run_driftaudit  # noqa: E402
from typecheck import new_diagnostics  # noqa: E402

from driftaudit.usage.pins import read_pin  # noqa: E402

IMPORTS_SGLANG = re.compile(r"^\s*(from\s+sglang[\s.]|import\s+sglang\b)", re.MULTILINE)


def importing_files(tree: Path) -> list[str]:
    """The consumer files that import sglang, relative to `tree`."""
    files = []
    for path in sorted(tree.rglob("*.py")):
        if path.is_file() and IMPORTS_SGLANG.search(path.read_text(errors="ignore")):
            files.append(str(path.relative_to(tree)))
    return files


SOURCE_SUFFIXES = (".py", ".pyi", ".toml", ".txt", ".cfg", ".lock")


def checkout_sources(git_dir: Path, commit: str, dest: Path) -> None:
    """The tree's sources and pin files only, for a partial mirror whose `git archive`
    fails on a blob it never fetched (a PDF under assets/)."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
        capture_output=True,
        check=True,
    ).stdout.decode()
    wanted = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        name = path.rsplit("/", 1)[-1]
        if meta.split()[1] == "blob" and (
            name.endswith(SOURCE_SUFFIXES) or name.startswith("Dockerfile")
        ):
            wanted.append((meta.split()[2], path))
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    at = 0
    for _, path in wanted:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        at = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[at : at + size])
        at += size + 1


def cached_releases(cache: Path) -> list[str]:
    """The sglang releases unpacked in the cache, oldest first."""
    found = []
    for path in (cache / "sources").glob("sglang-*"):
        try:
            found.append((Version(path.name.removeprefix("sglang-")), path.name[7:]))
        except InvalidVersion:
            continue
    return [name for _, name in sorted(found)]


def targets(old: str, wanted: list[str], releases: list[str]) -> list[str]:
    """The releases of `wanted` later than `old`; `next` is the next cached one."""
    out = []
    for name in wanted:
        if name == "next":
            later = [r for r in releases if Version(r) > Version(old)]
            name = later[0] if later else ""
        if name and Version(name) > Version(old) and name not in out:
            out.append(name)
    return out


def statement_spans(source: str) -> list[tuple[int, int]]:
    """(first, last) line of every statement; a compound statement spans its header
    (decorators included) up to the line before its body."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno or node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = max(node.lineno, body[0].lineno - 1)
        spans.append((first, last))
    return spans


def span_of(spans: list[tuple[int, int]], line: int) -> tuple[int, int]:
    """The smallest statement span holding `line` (the line alone when none does)."""
    holding = [s for s in spans if s[0] <= line <= s[1]]
    return min(holding, key=lambda s: s[1] - s[0]) if holding else (line, line)


def audit_pair(
    repo: str,
    commit: str,
    tree: Path,
    old: str,
    new: str,
    checkers: list[str],
    files: list[str],
    cache: Path,
    cache_arg: str | None,
    work: Path,
) -> tuple[list[dict], list[dict]]:
    """(one row per checker, the uncovered diagnostics) of one consumer x pair."""
    out = work / f"{repo.replace('/', '+')}-{old}-{new}.json"
    # info findings too: one that judges the change harmless still answers the diagnostic
    findings, seconds = run_driftaudit(
        {"old": old, "new": new}, tree, out, cache_arg, ("--show-info",)
    )
    at: dict[str, set[int]] = {}
    for f in findings:
        at.setdefault(f["path"], set()).add(int(f["line"]))
    roots = [cache / "sources" / f"sglang-{v}" for v in (old, new)]
    rows, uncovered = [], []
    texts: dict[str, list[str]] = {}
    spans: dict[str, list[tuple[int, int]]] = {}
    for kind in checkers:
        start = time.perf_counter()
        fresh = new_diagnostics(kind, cache, tree, roots[0], roots[1], files)
        checker_seconds = time.perf_counter() - start
        covered = 0
        for path, line, message in sorted(fresh):
            if path not in texts:
                source = (tree / path).read_text(errors="ignore") if (tree / path).is_file() else ""
                texts[path], spans[path] = source.splitlines(), statement_spans(source)
            first, last = span_of(spans[path], line)
            if any(first <= n <= last for n in at.get(path, ())):
                covered += 1
                continue
            lines = texts[path]
            uncovered.append(
                {
                    "consumer": repo,
                    "commit": commit,
                    "old": old,
                    "new": new,
                    "checker": kind,
                    "file": path,
                    "line": line,
                    "statement": [first, last],
                    "message": message,
                    "source": lines[line - 1].strip() if 0 < line <= len(lines) else "",
                }
            )
        rows.append(
            {
                "consumer": repo,
                "commit": commit,
                "pair": f"{old} -> {new}",
                "checker": kind,
                "files": len(files),
                "findings": len(findings),
                "new": len(fresh),
                "covered": covered,
                "uncovered": len(fresh) - covered,
                "driftaudit_s": round(seconds, 1),
                "checker_s": round(checker_seconds, 1),
            }
        )
    return rows, uncovered


COLUMNS = (
    "consumer",
    "commit",
    "pair",
    "checker",
    "files",
    "findings",
    "new",
    "covered",
    "uncovered",
    "driftaudit_s",
    "checker_s",
)


def markdown_table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(str(row[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


def markdown_uncovered(uncovered: list[dict]) -> str:
    lines = []
    for u in uncovered:
        lines.append(
            f"- {u['consumer']}@{u['commit'][:9]} {u['old']} -> {u['new']} [{u['checker']}] "
            f"`{u['file']}:{u['line']}` {u['message']}\n  `{u['source']}`"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--consumer", action="append", required=True, help="owner/name[@commit][#old]"
    )
    parser.add_argument("--old", help="the old release (default: the consumer's pin)")
    parser.add_argument("--new", required=True, help="later releases, comma-separated; `next`")
    parser.add_argument("--checkers", default="ty", help="ty,pyrefly")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cache-dir", default=os.environ.get("DRIFTAUDIT_CACHE_DIR"))
    parser.add_argument("--json", type=Path, help="write rows and uncovered diagnostics here")
    parser.add_argument("--markdown", type=Path, help="write the table and the list here")
    args = parser.parse_args()
    cache = Path(args.cache_dir or Path.home() / ".cache" / "driftaudit")
    checkers = [c for c in args.checkers.split(",") if c]
    if any(c not in ("ty", "pyrefly") for c in checkers):
        print(f"unknown checker in {args.checkers!r} (ty, pyrefly)", file=sys.stderr)
        return 2
    wanted = [v.strip() for v in args.new.split(",") if v.strip()]
    rows: list[dict] = []
    uncovered: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="driftaudit-differential-") as tmp:
        work = Path(tmp)
        for spec in args.consumer:
            spec, _, pinned = spec.partition("#")
            repo, _, commit = spec.partition("@")
            git_dir = args.mirrors / repo.replace("/", "+") / "repo"
            commit = subprocess.run(
                ["git", "--git-dir", str(git_dir), "rev-parse", commit or "HEAD"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            if not commit:
                print(f"{spec}: no mirror or commit under {args.mirrors}", file=sys.stderr)
                continue
            tree = work / repo.replace("/", "+")
            try:
                checkout(repo, commit, args.mirrors, tree)
            except subprocess.CalledProcessError:
                shutil.rmtree(tree, ignore_errors=True)
                tree.mkdir(parents=True)
                checkout_sources(git_dir, commit, tree)
            pin = read_pin(tree)
            old = pinned or args.old or (pin[0] if pin else None)
            if old is None:
                print(f"{spec}: no exact sglang pin (give --old)", file=sys.stderr)
                shutil.rmtree(tree, ignore_errors=True)
                continue
            files = importing_files(tree)
            for new in targets(old, wanted, cached_releases(cache)):
                try:
                    got, missed = audit_pair(
                        repo, commit, tree, old, new, checkers, files, cache, args.cache_dir, work
                    )
                except RuntimeError as exc:
                    print(f"{spec} {old} -> {new}: {exc}", file=sys.stderr)
                    continue
                for row in got:
                    print(
                        f"{repo:<28} {old:>12} -> {new:<12} {row['checker']:<7} "
                        f"files {row['files']:>3} new {row['new']:>4} covered {row['covered']:>4} "
                        f"uncovered {row['uncovered']:>4} ({row['driftaudit_s']}s, "
                        f"{row['checker_s']}s)",
                        flush=True,
                    )
                rows += got
                uncovered += missed
            shutil.rmtree(tree, ignore_errors=True)
    total_new = sum(r["new"] for r in rows)
    total_cov = sum(r["covered"] for r in rows)
    print(f"TOTAL new {total_new} covered {total_cov} uncovered {total_new - total_cov}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "uncovered": uncovered}, indent=1))
    if args.markdown:
        args.markdown.write_text(
            markdown_table(rows) + "\n\n## Uncovered\n\n" + markdown_uncovered(uncovered) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
