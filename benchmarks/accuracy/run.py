"""Accuracy benchmark: driftaudit against hand-labelled real sglang upgrades.

For each case in cases/*.json: get the consumer at its commit (a local mirror via
`git archive`, else a clone from GitHub), run `driftaudit compare --format json`, and
print recall (a label is found when a finding sits at its file and line) and precision
(findings judged true over findings judged). Optionally run a type checker against the
old and the new sglang tree and score the diagnostics that are new on the new tree on
the same labels: the peer driftaudit must beat. Cases marked `"holdout": true` (upgrades
nobody tuned the tool on) are marked [H] and totalled apart from the development cases.

It needs the network (consumers, sglang wheels) unless everything is cached, so it is a
benchmark, not a test.

    python benchmarks/accuracy/run.py [--mirrors /work/.mirror] [--case NAME ...]
        [--type-checker pyright|mypy] [--show-unjudged] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/

from checkers import checker_command, checker_venv  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]


@dataclass
class Score:
    labels: int = 0
    found: int = 0
    in_statement: int = 0
    findings: int = 0
    judged_true: int = 0
    judged_false: int = 0
    judged_redundant: int = 0  # a fact another finding already states
    unjudged: int = 0
    places: int = 0
    seconds: float = 0.0
    checker_found: int | None = None
    checker_seconds: float = 0.0
    checker_lines: int = 0
    missed: list[str] = field(default_factory=list)
    unjudged_rows: list[str] = field(default_factory=list)
    # code -> [true, false, redundant, unjudged], counted by fact
    by_code: dict[str, list[int]] = field(default_factory=dict)

    def add(self, other: Score) -> None:
        for name in (
            "labels",
            "found",
            "in_statement",
            "findings",
            "judged_true",
            "judged_false",
            "judged_redundant",
            "unjudged",
            "places",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        if other.checker_found is not None:
            self.checker_found = (self.checker_found or 0) + other.checker_found
            self.checker_seconds += other.checker_seconds
            self.checker_lines += other.checker_lines
        for code, counts in other.by_code.items():
            mine = self.by_code.setdefault(code, [0, 0, 0, 0])
            for i, n in enumerate(counts):
                mine[i] += n


def load_cases(names: list[str]) -> list[tuple[str, dict]]:
    cases = []
    for path in sorted((HERE / "cases").glob("*.json")):
        if names and path.stem not in names:
            continue
        cases.append((path.stem, json.loads(path.read_text())))
    return cases


def checkout(repo: str, commit: str, mirrors: Path, dest: Path) -> None:
    """The consumer's tree at `commit` in `dest`: from a local mirror, else from GitHub."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        git_dir = dest.parent / (repo.replace("/", "+") + ".git")
        if not git_dir.is_dir():
            url = f"https://github.com/{repo}.git"
            subprocess.run(
                ["git", "clone", "--bare", "--filter=blob:none", url, str(git_dir)],
                check=True,
                capture_output=True,
            )
    dest.mkdir(parents=True)
    with tempfile.TemporaryFile() as archive:
        subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", commit], check=True, stdout=archive
        )
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(dest, filter="data")


def run_driftaudit(
    case: dict, tree: Path, out: Path, cache: str | None, extra: tuple[str, ...] = ()
) -> tuple[list, float]:
    cmd = [sys.executable, "-m", "driftaudit"]
    if cache:
        cmd += ["--cache-dir", cache]
    cmd += [
        "compare",
        "--old",
        case["old"],
        "--new",
        case["new"],
        str(tree),
        "--format",
        "json",
        "--output",
        str(out),
        "--fail-on",
        "never",
        *extra,
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1) or not out.is_file():
        raise RuntimeError(f"driftaudit failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return json.loads(out.read_text())["findings"], seconds


def statement(label: dict) -> range:
    """The lines of the statement holding the label (`stmt`: [first, last]), else its line."""
    first, last = label.get("stmt", [label["line"], label["line"]])
    return range(first, last + 1)


def judgement(judged: list, finding: dict) -> str | None:
    """The verdict of the most specific judgement matching the finding.

    A judgement names rule and symbol; file "*" / line null cover every file / line, and
    `match` (a substring of the message) tells apart findings sharing a line and symbol.
    """
    best, best_rank = None, -1
    for j in judged:
        if (j["rule"], j["symbol"]) != (finding["rule"], finding["symbol"]):
            continue
        if j["file"] not in ("*", finding["path"]) or j["line"] not in (None, finding["line"]):
            continue
        if j.get("match") and j["match"] not in finding["message"]:
            continue
        rank = (j["file"] != "*") + (j["line"] is not None) + bool(j.get("match"))
        if rank > best_rank:
            best, best_rank = j["verdict"], rank
    return best


def facts_of(findings: list) -> list[list]:
    """The findings as facts (the JSON's `fact` number; each place its own fact when the
    report has none), each a list of its places, the first one its lead."""
    groups: dict = {}
    for n, f in enumerate(findings):
        groups.setdefault(f.get("fact", f"place-{n}"), []).append(f)
    return list(groups.values())


VERDICTS = ("true", "false", "redundant")


def score_case(case: dict, findings: list) -> Score:
    """Recall over every place; precision over facts: a fact is judged by its lead's
    judgement (true when a place of it sits on a labelled statement and nothing judged
    it), and counts once however many places it lists."""
    facts = facts_of(findings)
    s = Score(labels=len(case["labels"]), findings=len(facts), places=len(findings))
    at = {(f["path"], f["line"]) for f in findings}
    for label in case["labels"]:
        if (label["file"], label["line"]) in at:
            s.found += 1
        elif any((label["file"], line) in at for line in statement(label)):
            s.in_statement += 1
        else:
            s.missed.append(f"{label['file']}:{label['line']} {label['name']} ({label['kind']})")
    labelled = {(lab["file"], line) for lab in case["labels"] for line in statement(lab)}
    for group in facts:
        f = group[0]
        verdict = judgement(case.get("judged", []), f)
        if verdict is None and any((g["path"], g["line"]) in labelled for g in group):
            verdict = "true"  # a finding at a labelled break is true
        counts = s.by_code.setdefault(f["rule"], [0, 0, 0, 0])
        if verdict in VERDICTS:
            counts[VERDICTS.index(verdict)] += 1
            if verdict == "true":
                s.judged_true += 1
            elif verdict == "false":
                s.judged_false += 1
            else:
                s.judged_redundant += 1
        else:
            counts[3] += 1
            s.unjudged += 1
            s.unjudged_rows.append(
                f"{f['path']}:{f['line']} {f['rule']} {f['symbol']} :: {f['message'][:140]}"
                + (f" (+{len(group) - 1} places)" if len(group) > 1 else "")
            )
    return s


# --- the type-checker peer ------------------------------------------------------------

PYRIGHT_RULES = {  # what a missing or moved sglang name gives, as errors
    "reportMissingImports": "error",
    "reportAttributeAccessIssue": "error",
    "reportCallIssue": "error",
}


def run_checker(kind: str, exe: Path, tree: Path, sglang_root: Path, work: Path) -> set:
    """(file, line, message) diagnostics of the checker with sglang_root on the path."""
    argv, env, cwd = checker_command(
        kind, exe, tree, sglang_root, work, PYRIGHT_RULES, ("--show-absolute-path",)
    )
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    rows = set()
    if kind == "pyright":
        for d in json.loads(proc.stdout or "{}").get("generalDiagnostics", []):
            rel = os.path.relpath(d["file"], tree)
            rows.add((rel, d["range"]["start"]["line"] + 1, d.get("message", "")))
        return rows
    if proc.returncode == 2:
        print(f"    mypy failed: {(proc.stderr or proc.stdout).strip()[:200]}", file=sys.stderr)
    for line in proc.stdout.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit() and " error" in parts[2] + parts[3][:8]:
            rows.add((os.path.relpath(parts[0], tree), int(parts[1]), parts[3].strip()))
    return rows


def checker_recall(
    kind: str, exe: Path, case: dict, tree: Path, cache: Path, work: Path
) -> tuple[int, int]:
    """(labels hit, lines with a diagnostic only the new tree yields)."""
    roots = [cache / "sources" / f"sglang-{v}" for v in (case["old"], case["new"])]
    old, new = (run_checker(kind, exe, tree, root, work) for root in roots)
    fresh = {(f, line) for f, line, msg in new if (f, line, msg) not in old}
    hit = sum(
        any((lab["file"], line) in fresh for line in statement(lab)) for lab in case["labels"]
    )
    return hit, len(fresh)


# --- main -------------------------------------------------------------------------------


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}%" if b else "   n/a"


def row(name: str, s: Score, checker: bool) -> str:
    judged = s.judged_true + s.judged_false + s.judged_redundant
    near = s.found + s.in_statement
    text = (
        f"{name:<28} {s.labels:>6} {s.found:>5} {pct(s.found, s.labels)} "
        f"{near:>5} {pct(near, s.labels)} "
        f"{s.findings:>8} {s.places:>6} {s.judged_true:>5} {s.judged_false:>5} "
        f"{s.judged_redundant:>5} {s.unjudged:>7} "
        f"{pct(s.judged_true, judged)} {s.seconds:>6.1f}s"
    )
    if checker:
        found = s.checker_found if s.checker_found is not None else 0
        text += (
            f" {found:>5} {pct(found, s.labels)} {s.checker_lines:>5} {s.checker_seconds:>6.1f}s"
        )
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=Path("/work/.mirror"),
        help="dir of bare mirrors named owner+name/repo (else clone)",
    )
    parser.add_argument("--case", nargs="*", default=[], help="case names (file stems)")
    parser.add_argument("--cache-dir", default=os.environ.get("DRIFTAUDIT_CACHE_DIR"))
    parser.add_argument("--type-checker", choices=["pyright", "mypy"])
    parser.add_argument("--show-unjudged", action="store_true")
    parser.add_argument("--show-missed", action="store_true")
    parser.add_argument("--json", type=Path, help="write per-case figures and findings here")
    args = parser.parse_args()
    cache = Path(args.cache_dir or Path.home() / ".cache" / "driftaudit")

    cases = load_cases(args.case)
    if not cases:
        print("no cases", file=sys.stderr)
        return 2
    checker = checker_venv(args.type_checker, cache) if args.type_checker else None
    header = (
        f"{'case':<28} {'labels':>6} {'found':>5} {'recall':>6} "
        f"{'+stmt':>5} {'recall':>6} {'findings':>8} {'places':>6} "
        f"{'true':>5} {'false':>5} {'redun':>5} {'unjudged':>7} {'prec.':>6} {'time':>7}"
    )
    if checker:
        header += f" {args.type_checker[:5]:>5} {'recall':>6} {'new':>5} {'time':>7}"
    print(header)
    total = Score(checker_found=0 if checker else None)
    groups = {
        "development": Score(checker_found=0 if checker else None),
        "hold-out": Score(checker_found=0 if checker else None),
    }
    dump = {}
    with tempfile.TemporaryDirectory(prefix="driftaudit-accuracy-") as tmp:
        work = Path(tmp)
        for name, case in cases:
            tree = work / name
            try:
                checkout(case["repo"], case["commit"], args.mirrors, tree)
                findings, seconds = run_driftaudit(
                    case, tree, work / f"{name}.json", args.cache_dir
                )
            except (subprocess.CalledProcessError, RuntimeError) as exc:
                print(f"{name:<28} error: {exc}")
                continue
            s = score_case(case, findings)
            s.seconds = seconds
            if checker:
                start = time.perf_counter()
                s.checker_found, s.checker_lines = checker_recall(
                    args.type_checker, checker, case, tree, cache, work
                )
                s.checker_seconds = time.perf_counter() - start
            total.add(s)
            groups["hold-out" if case.get("holdout") else "development"].add(s)
            print(row(name + (" [H]" if case.get("holdout") else ""), s, bool(checker)), flush=True)
            if args.show_missed:
                for m in s.missed:
                    print(f"    missed: {m}")
            if args.show_unjudged:
                for u in s.unjudged_rows:
                    print(f"    unjudged: {u}")
            dump[name] = {
                "score": s.__dict__,
                "holdout": bool(case.get("holdout")),
                "findings": findings,
            }
            shutil.rmtree(tree, ignore_errors=True)
    for group, score in groups.items():
        if score.findings or score.labels:
            print(row(group, score, bool(checker)))
    print(row("TOTAL", total, bool(checker)))
    print()
    head = f"{'code':<8} {'findings':>8} {'true':>5} {'false':>5} {'redun':>5} {'unjudged':>8}"
    print(head + " prec.")
    for code, (true, false, redundant, unjudged) in sorted(total.by_code.items()):
        n = true + false + redundant + unjudged
        print(
            f"{code:<8} {n:>8} {true:>5} {false:>5} {redundant:>5} {unjudged:>8} "
            f"{pct(true, true + false + redundant)}"
        )
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
